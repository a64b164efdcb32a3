//! `POST /notifications/adyen/{connectionId}`: Adyen's standard notifications for one
//! connection (docs/processors/adyen.md). Outside `/v1` and its keys: Adyen authenticates with
//! the connection's Basic-auth credentials and signs every item with its HMAC key, which the
//! notice service checks before anything is kept. Answered `[accepted]` once every item is kept.

use actix_web::http::header::{AUTHORIZATION, RETRY_AFTER, WWW_AUTHENTICATE};
use actix_web::{HttpRequest, HttpResponse, web};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use holdfast_domain::payment::adyen::Secret;
use holdfast_domain::payment::adyen::notifications::NotificationItem;
use holdfast_domain::services::{BasicCredentials, NoticeError, ReceivedItem};
use serde_json::{Value, json};

use crate::ApiState;
use holdfast_web::client_address::client_address;
use holdfast_web::error::ApiError;
use holdfast_web::paths;
use holdfast_web::request_context;

pub fn config(cfg: &mut web::ServiceConfig) {
    // A resource, so another method is a 405 naming `POST`, not a 404.
    cfg.service(web::resource(paths::ADYEN_NOTIFICATIONS).post(adyen));
}

async fn adyen(
    state: web::Data<ApiState>,
    req: HttpRequest,
    connection: web::Path<String>,
    body: web::Bytes,
) -> Result<HttpResponse, ApiError> {
    // A failed attempt spends the address's failed-authentication budget, as a wrong API key
    // does: an address locked out is refused before anything is read.
    let address = client_address(&req);
    if let Some(wait) = state.rate_limits.locked_out(address) {
        return Err(ApiError::RateLimited { retry_after: wait });
    }
    let (live, items) = batch(&body).ok_or_else(|| {
        ApiError::invalid(
            "body",
            "is not an Adyen notification: {live, notificationItems: [{NotificationRequestItem}]}",
        )
    })?;
    let taken = state
        .notices
        .receive_adyen(&connection, basic(&req), live.as_deref(), items)
        .await;
    match taken {
        Ok(taken) => {
            tracing::info!(
                applied = taken.applied,
                kept = taken.kept,
                repeated = taken.repeated,
                "Adyen notifications taken"
            );
            Ok(HttpResponse::Ok()
                .content_type("text/plain; charset=utf-8")
                .body("[accepted]"))
        }
        Err(NoticeError::Unauthorized) => {
            if let Some(wait) = state.rate_limits.failed(address) {
                return Err(ApiError::RateLimited { retry_after: wait });
            }
            Ok(unauthorized())
        }
        Err(NoticeError::NotYet) => Ok(HttpResponse::ServiceUnavailable()
            .insert_header((RETRY_AFTER, "5"))
            .json(envelope(
                "api_error",
                "not_yet_recorded",
                "a transaction this notification names is still being recorded; send it again",
            ))),
        Err(NoticeError::Store(e)) => Err(ApiError::Internal(e.to_string())),
    }
}

/// 401, with the scheme Adyen is to answer with.
fn unauthorized() -> HttpResponse {
    HttpResponse::Unauthorized()
        .insert_header((WWW_AUTHENTICATE, r#"Basic realm="adyen-notifications""#))
        .json(envelope(
            "authentication_error",
            "notification_unauthenticated",
            "the notification's credentials, environment or signatures are not this connection's",
        ))
}

fn envelope(kind: &str, code: &str, message: &str) -> Value {
    json!({"error": {
        "type": kind,
        "code": code,
        "message": message,
        "param": null,
        "requestId": request_context::current_id(),
    }})
}

/// `live` and the items of a body in Adyen's shape; `None` for anything else. Each item is
/// kept without its `additionalData` (the signature, and card details Adyen may add).
fn batch(body: &[u8]) -> Option<(Option<String>, Vec<ReceivedItem>)> {
    let value: Value = serde_json::from_slice(body).ok()?;
    let live = value.get("live").and_then(Value::as_str).map(str::to_owned);
    let items = value
        .get("notificationItems")?
        .as_array()?
        .iter()
        .map(|wrapper| {
            let raw = wrapper.get("NotificationRequestItem")?;
            let item: NotificationItem = serde_json::from_value(raw.clone()).ok()?;
            let mut kept = raw.as_object()?.clone();
            kept.remove("additionalData");
            Some(ReceivedItem {
                item,
                kept: Value::Object(kept).to_string(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some((live, items))
}

/// The request's Basic-auth credentials, if it has well-formed ones.
fn basic(req: &HttpRequest) -> Option<BasicCredentials> {
    let header = req.headers().get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = header.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (username, password) = decoded.split_once(':')?;
    Some(BasicCredentials {
        username: username.to_owned(),
        password: Secret::new(password.to_owned()),
    })
}
