//! `/v1/tokens`: card tokens (spec 5.3). Any key creates a single-use token (consumed by the
//! first transaction that names it, 15 minutes to live); a private key may create a vault token,
//! used any number of times. Only private keys read tokens back, never their card number.

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::TokenId;
use holdfast_domain::metadata::Metadata;
use holdfast_domain::mode::KeyType;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::token::{Token, TokenKind};
use holdfast_domain::payment::transaction::PaymentSummary;
use holdfast_domain::payment::wallet::{WalletKind, WalletRefusal};
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::TokenError;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller};
use super::idempotency::{AnswerWithChange, created};
use super::routes::Routes;
use super::transactions::PaymentBody;
use super::views::{DeletedView, rfc3339, timestamp_or_null};
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/tokens",
        Access::PublicOrPrivate,
        web::route().to(create),
    );
    r.add(
        Method::GET,
        "/v1/tokens/{id}",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::DELETE,
        "/v1/tokens/{id}",
        Access::Private,
        web::route().to(delete),
    );
}

/// Card fields to tokenize; `type` is `single_use` (the default) or, with a private key, `vault`.
/// Its schema is `openapi::bodies::create_token`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateToken {
    #[serde(rename = "type")]
    kind: Option<String>,
    payment: Option<PaymentBody>,
    /// A wallet's token instead of card fields: the single-use token holds its card.
    wallet: Option<WalletBody>,
    /// A client session's secret: the single-use token is bound to that open session, and a
    /// payment with it must be for the session's merchant, amount and currency.
    client_secret: Option<String>,
    /// The platform's own pairs, on a vault token only.
    metadata: Option<BTreeMap<String, String>>,
}

/// What a wallet gave the page: `type` `google_pay` (the `tokenizationData.token` string) or
/// `apple_pay` (the payment's `token.paymentData` as a JSON string).
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = WalletToken)]
struct WalletBody {
    #[serde(rename = "type")]
    #[schema(value_type = WalletKind, required = true)]
    kind: Option<String>,
    #[schema(schema_with = crate::openapi::fields::wallet_token, required = true)]
    token: Option<String>,
}

crate::openapi::bodies::described_by!(
    CreateToken,
    crate::openapi::bodies::create_token,
    WalletBody
);

/// A token as the API shows it: the masked card, never its number.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Token)]
struct TokenView<'a> {
    #[schema(value_type = TokenId)]
    id: &'a TokenId,
    /// `single_use` (consumed by the first transaction, 15 minutes to live) or `vault`.
    #[serde(rename = "type")]
    kind: TokenKind,
    mode: Mode,
    card: &'a PaymentSummary,
    /// The wallet the card came from (`google_pay`, `apple_pay`), or `null` for typed card
    /// fields.
    wallet: Option<WalletKind>,
    /// Whether a single-use token has been consumed.
    used: bool,
    /// When a single-use token stops working; `null` for a vault token.
    #[schema(schema_with = timestamp_or_null)]
    expires_on: Option<String>,
    #[schema(schema_with = timestamp)]
    created_on: String,
    /// The platform's own key/value pairs, on a vault token only (which only a private key
    /// sees).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Metadata>, required = false)]
    metadata: Option<&'a Metadata>,
}

fn view(token: &Token) -> TokenView<'_> {
    TokenView {
        id: &token.id,
        kind: token.kind,
        mode: token.mode,
        card: &token.card,
        wallet: token.wallet,
        used: token.used_on.is_some(),
        expires_on: token.expires_on.map(rfc3339),
        created_on: rfc3339(token.created_on),
        metadata: (token.kind == TokenKind::Vault).then_some(&token.metadata),
    }
}

/// Creates a card token (single-use with any key, vault with a private key).
#[utoipa::path(post, path = "/v1/tokens", tag = "cards", operation_id = "createToken", request_body = CreateToken, responses((status = 201, description = "The token, created.", body = TokenView), (status = 403, description = "A vault token asked for with a public key.", body = ErrorEnvelope)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateToken>,
) -> Result<HttpResponse, ApiError> {
    let kind = match body.kind.as_deref() {
        None => TokenKind::SingleUse,
        Some(raw) => raw
            .parse()
            .map_err(|_| ApiError::invalid("type", "must be single_use or vault"))?,
    };
    let answer = AnswerWithChange::new(&req, |t: &Token| created(&view(t)));
    let metadata = body
        .metadata
        .map(Metadata::parse)
        .transpose()?
        .unwrap_or_default();
    let secret = body.client_secret.as_deref();
    let token = match (body.payment, body.wallet) {
        (Some(_), Some(_)) => {
            return Err(ApiError::invalid(
                "wallet",
                "a token is made from card fields or from a wallet's token, not both",
            ));
        }
        (None, None) => return Err(ApiError::invalid("payment", "is required")),
        (Some(payment), None) => {
            if payment.token.is_some() {
                return Err(ApiError::invalid(
                    "payment.token",
                    "a token is made from card fields, not from another token",
                ));
            }
            // The CVV is checked when sent but never kept (it may not be stored after
            // authorization, and a vault token outlives many).
            let card = payment.card_input();
            state
                .tokens
                .create(
                    &who,
                    kind,
                    card,
                    secret,
                    metadata,
                    answer.recorder().as_ref(),
                )
                .await
        }
        (None, Some(wallet)) => {
            // As for card fields: a public key asking for a vault token has the wrong key type
            // (403) before anything about the wallet is said.
            if kind == TokenKind::Vault && who.key_type == KeyType::Public {
                return Err(token_error(TokenError::VaultNeedsPrivateKey));
            }
            if kind != TokenKind::SingleUse {
                return Err(ApiError::invalid(
                    "type",
                    "a wallet's token makes single-use tokens only",
                ));
            }
            if !metadata.is_empty() {
                return Err(ApiError::invalid(
                    "metadata",
                    "is kept on vault tokens only; give the wallet payment the metadata",
                ));
            }
            let wallet_kind = wallet
                .kind
                .ok_or_else(|| ApiError::invalid("wallet.type", "is required"))?
                .parse::<WalletKind>()
                .map_err(|_| ApiError::invalid("wallet.type", "must be google_pay or apple_pay"))?;
            let raw = wallet
                .token
                .ok_or_else(|| ApiError::invalid("wallet.token", "is required"))?;
            state
                .tokens
                .create_from_wallet(&who, wallet_kind, &raw, secret, answer.recorder().as_ref())
                .await
        }
    }
    .map_err(token_error)?;
    Ok(answer.send(&token))
}

pub(super) fn token_error(err: TokenError) -> ApiError {
    match err {
        TokenError::VaultNeedsPrivateKey => ApiError::WrongKeyType {
            required: Access::Private,
        },
        TokenError::Invalid(invalid) => invalid.into(),
        TokenError::Wallet(refusal @ WalletRefusal::NotConfigured(_)) => {
            ApiError::invalid("wallet.type", refusal.to_string())
        }
        TokenError::Wallet(refusal) => ApiError::invalid("wallet.token", refusal.to_string()),
        TokenError::ApplePayGateway(failure) => ApiError::Upstream(failure.0),
        TokenError::Store(e) => ApiError::Internal(e.to_string()),
    }
}

fn not_found() -> ApiError {
    ApiError::NotFound { resource: "token" }
}

/// The token a path names; a malformed id is as not found as an unknown one.
fn token_id(raw: &str) -> Result<TokenId, ApiError> {
    TokenId::parse("id", raw).map_err(|_| not_found())
}

/// Reads a token (never its card number).
#[utoipa::path(get, path = "/v1/tokens/{id}", tag = "cards", operation_id = "getToken", params(("id" = TokenId, Path, description = "The resource's id.")), responses((status = 200, description = "The token.", body = TokenView)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = token_id(&id)?;
    let token = state
        .tokens
        .get(&who, &id)
        .await
        .map_err(token_error)?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(view(&token)))
}

/// Deletes a token and the card sealed in it: a customer's saved card removed on request.
#[utoipa::path(delete, path = "/v1/tokens/{id}", tag = "cards", operation_id = "deleteToken", params(("id" = TokenId, Path, description = "The resource's id.")), responses((status = 200, description = "The token and its card are deleted.", body = DeletedView)))]
async fn delete(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = token_id(&id)?;
    if !state.tokens.delete(&who, &id).await.map_err(token_error)? {
        return Err(not_found());
    }
    Ok(HttpResponse::Ok().json(DeletedView {
        id: id.to_string(),
        deleted: true,
    }))
}
