//! `/v1/apple-pay/merchant-sessions`: Apple Pay's merchant validation, asked by the wallet relay
//! frame when Apple's sheet calls `onvalidatemerchant` (docs/hosted-fields.md). Part of making a
//! single-use token from Apple Pay, so a public key may ask (spec 5.3).

use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::payment::wallet::{
    MerchantSession, MerchantValidation, SandboxSession, WalletRefusal,
};
use holdfast_domain::services::TokenError;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller};
use super::routes::Routes;
use crate::ApiState;
use holdfast_web::error::ApiError;

/// Where Apple looks for the domain association file.
pub const DOMAIN_ASSOCIATION_PATH: &str =
    "/.well-known/apple-developer-merchantid-domain-association";

/// The domain association file, outside `/v1`: Apple fetches it without a key.
pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.route(DOMAIN_ASSOCIATION_PATH, web::get().to(domain_association));
}

async fn domain_association(state: web::Data<ApiState>) -> Result<HttpResponse, ApiError> {
    let file = state
        .apple_pay_domain_association
        .clone()
        .ok_or(ApiError::RouteNotFound)?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; charset=utf-8")
        .insert_header((
            actix_web::http::header::CACHE_CONTROL,
            "public, max-age=3600",
        ))
        .body(file.to_vec()))
}

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/apple-pay/merchant-sessions",
        Access::PublicOrPrivate,
        web::route().to(create),
    );
}

/// What Apple's sheet gave the page: where to validate, and the page's domain.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"validationUrl": "https://apple-pay-gateway-cert.apple.com/paymentservices/startSession", "domainName": "shop.example", "displayName": "Example Shop"}))]
struct MerchantValidationBody {
    #[schema(schema_with = crate::openapi::fields::validation_url, required = true)]
    validation_url: Option<String>,
    #[schema(schema_with = crate::openapi::fields::domain_name, required = true)]
    domain_name: Option<String>,
    /// The name Apple's sheet shows; the domain name (its first 64 characters) if not given.
    #[schema(schema_with = crate::openapi::fields::display_name)]
    display_name: Option<String>,
}

/// The merchant session, in the shape `completeMerchantValidation` takes: Apple's own answer,
/// unchanged, when a merchant identity certificate is configured; else (test mode) a sandbox
/// session in the same shape, whose `signature` is `sandbox`.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ApplePayMerchantSession)]
struct MerchantSessionView<'a> {
    merchant_session_identifier: &'a str,
    epoch_timestamp: i64,
    expires_at: i64,
    nonce: &'a str,
    merchant_identifier: &'a str,
    domain_name: &'a str,
    display_name: &'a str,
    /// Apple's signature; `sandbox` for a sandbox session, which only a test-mode sheet accepts.
    signature: &'a str,
}

fn sandbox_view(session: &SandboxSession) -> MerchantSessionView<'_> {
    MerchantSessionView {
        merchant_session_identifier: &session.merchant_session_identifier,
        epoch_timestamp: session.epoch_timestamp,
        expires_at: session.expires_at,
        nonce: &session.nonce,
        merchant_identifier: &session.merchant_identifier,
        domain_name: &session.domain_name,
        display_name: &session.display_name,
        signature: "sandbox",
    }
}

/// Validates the merchant for Apple Pay: Apple's gateway is asked over mutual TLS when a merchant
/// identity certificate is configured; without one, a sandbox session in test mode.
#[utoipa::path(post, path = "/v1/apple-pay/merchant-sessions", tag = "hosted client", operation_id = "createApplePayMerchantSession", request_body = MerchantValidationBody, responses((status = 200, description = "The merchant session for `completeMerchantValidation`.", body = MerchantSessionView), (status = 502, description = "Apple's gateway gave no merchant session.", body = holdfast_web::error::ErrorEnvelope)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    ApiJson(body): ApiJson<MerchantValidationBody>,
) -> Result<HttpResponse, ApiError> {
    let validation_url = body
        .validation_url
        .ok_or_else(|| ApiError::invalid("validationUrl", "is required"))?;
    let domain = body
        .domain_name
        .ok_or_else(|| ApiError::invalid("domainName", "is required"))?;
    // A domain name is ASCII: its first 64 characters are a display name Apple takes.
    let display_name = body.display_name.unwrap_or_else(|| {
        domain
            .chars()
            .take(holdfast_domain::payment::wallet::DISPLAY_NAME_MAX_CHARS)
            .collect()
    });
    let asked = MerchantValidation {
        validation_url,
        domain,
        display_name,
    };
    let session = state
        .tokens
        .apple_pay_merchant_session(&who, asked)
        .await
        .map_err(|err| match err {
            TokenError::Wallet(refusal @ WalletRefusal::NotConfigured(_)) => ApiError::invalid(
                "validationUrl",
                format!("{refusal}: merchant validation needs a merchant identity certificate"),
            ),
            other => super::tokens::token_error(other),
        })?;
    Ok(match session {
        MerchantSession::Apple(json) => HttpResponse::Ok()
            .content_type(actix_web::http::header::ContentType::json())
            .body(json),
        MerchantSession::Sandbox(sandbox) => HttpResponse::Ok().json(sandbox_view(&sandbox)),
    })
}
