//! `/v1/tokens`: card tokens (spec 5.3). Any key creates a single-use token (consumed by the
//! first transaction that names it, 15 minutes to live); a private key may create a vault token,
//! used any number of times. Only private keys read tokens back, never their card number.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::TokenId;
use holdfast_domain::payment::token::{Token, TokenKind};
use holdfast_domain::services::TokenError;
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::extract::{ApiJson, Caller};
use super::idempotency::{AnswerWithChange, created};
use super::routes::Routes;
use super::transactions::PaymentBody;
use super::views::rfc3339;
use crate::state::AppState;

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
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateToken {
    #[serde(rename = "type")]
    kind: Option<String>,
    payment: Option<PaymentBody>,
}

fn view(token: &Token) -> Value {
    json!({
        "id": token.id,
        "type": token.kind.as_str(),
        "mode": token.mode.as_str(),
        "card": token.card,
        "used": token.used_on.is_some(),
        "expiresOn": token.expires_on.map(rfc3339),
        "createdOn": rfc3339(token.created_on),
    })
}

async fn create(
    state: web::Data<AppState>,
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
    let payment = body
        .payment
        .ok_or_else(|| ApiError::invalid("payment", "is required"))?;
    if payment.token.is_some() {
        return Err(ApiError::invalid(
            "payment.token",
            "a token is made from card fields, not from another token",
        ));
    }
    // The CVV is checked when sent but never kept (it may not be stored after authorization, and
    // a vault token outlives many).
    let card = payment.card_input();
    let answer = AnswerWithChange::new(&req, |t: &Token| created(&view(t)));
    let token = state
        .tokens
        .create(&who, kind, card, answer.recorder().as_ref())
        .await
        .map_err(token_error)?;
    Ok(answer.send(&token))
}

fn token_error(err: TokenError) -> ApiError {
    match err {
        TokenError::VaultNeedsPrivateKey => ApiError::WrongKeyType {
            required: Access::Private,
        },
        TokenError::Invalid(invalid) => invalid.into(),
        TokenError::Store(e) => ApiError::Internal(e.to_string()),
    }
}

async fn get(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound { resource: "token" };
    let id = TokenId::parse("id", &id).map_err(|_| not_found())?;
    let token = state
        .tokens
        .get(&who, &id)
        .await
        .map_err(token_error)?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(view(&token)))
}
