//! The one error envelope:
//! `{"error": {"type", "code", "message", "param", "requestId"}}`.
//!
//! 500s are opaque to the client; their cause goes to the log under the same request id.

use actix_web::http::StatusCode;
use actix_web::http::header::{ALLOW, RETRY_AFTER, WWW_AUTHENTICATE};
use actix_web::{HttpResponse, ResponseError};
use holdfast_domain::auth::{Access, AuthError};
use holdfast_domain::payment::lifecycle::Refused;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::services::{AuthenticateError, PaymentError, ServiceError};

use crate::request_context;

mod envelope;

pub use envelope::{ERROR_CODES, ERROR_TYPES, ErrorEnvelope};

/// The challenge of every 401 for a missing or refused API key.
pub const API_KEY_CHALLENGE: &str = r#"ApiKey realm="holdfast", header="x-api-key""#;

/// Largest request body accepted, in bytes, on every route.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("missing, unknown or inactive API key")]
    Unauthenticated { required: Access },
    #[error("wrong key type")]
    WrongKeyType { required: Access },
    #[error("{resource} not found")]
    NotFound { resource: &'static str },
    #[error("no such route")]
    RouteNotFound,
    /// The path is served, not with this method; `allow` lists the methods it takes, when known
    /// (RFC 9110 15.5.6: a 405 names them in `Allow`).
    #[error("method not allowed")]
    MethodNotAllowed { allow: Option<String> },
    #[error("{param}: {message}")]
    Invalid { param: String, message: String },
    #[error("request body too large")]
    PayloadTooLarge { limit: usize },
    #[error("{param}: {message}")]
    Conflict { param: String, message: String },
    /// A payment that was recorded but not approved: declined (402), or the processor failed
    /// (502) or did not answer in time (504). The body carries the recorded transaction.
    #[error("payment not approved: {code}")]
    PaymentNotApproved {
        status: StatusCode,
        code: &'static str,
        decline_code: Option<&'static str>,
        transaction: Box<Transaction>,
    },
    #[error("internal error: {0}")]
    Internal(String),
    /// A service we called on the client's behalf gave no usable answer (502); the message is
    /// ours and names the service, never its words.
    #[error("{0}")]
    Upstream(String),
    /// A per-platform limit is reached (400): the message names it.
    #[error("{0}")]
    LimitReached(String),
    /// Nothing was done, for now: what the request depends on kept changing (503, with
    /// `Retry-After`); the same request may be sent again, under the same key.
    #[error("{0}")]
    Busy(String),
    /// Over a rate limit; retry after the duration (sent as `Retry-After`, whole seconds).
    #[error("rate limited")]
    RateLimited { retry_after: std::time::Duration },
    /// A refusal made below our handlers (actix's body limit, an unknown method…), in the
    /// envelope like every other.
    #[error("refused with {0}")]
    Status(StatusCode),
}

impl ApiError {
    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            param: param.into(),
            message: message.into(),
        }
    }

    fn parts(&self) -> (&'static str, &'static str, String, Option<&str>) {
        match self {
            Self::Unauthenticated { required } => (
                "authentication_error",
                "invalid_api_key",
                match required {
                    Access::Public => {
                        "Missing, unknown or inactive public key. Give an active public key as \
                         the publicApiKey query parameter."
                    }
                    Access::Private | Access::PublicOrPrivate => {
                        "Missing, unknown or inactive API key. Send an active key in the \
                         x-api-key header."
                    }
                }
                .into(),
                None,
            ),
            Self::WrongKeyType { required } => (
                "permission_error",
                "wrong_key_type",
                match required {
                    Access::Private | Access::PublicOrPrivate => {
                        "This operation needs a private key; public keys can only create single-use tokens."
                    }
                    // The key came in a URL meant for a web page: it is already exposed.
                    Access::Public => {
                        "This is a private key, and a private key must never be put in a web \
                         page: treat it as exposed. Deactivate it now, generate a replacement, \
                         and load the script with a public key."
                    }
                }
                .into(),
                None,
            ),
            Self::NotFound { resource } => (
                "invalid_request_error",
                "resource_missing",
                format!("No such {resource}."),
                Some("id"),
            ),
            Self::RouteNotFound => (
                "invalid_request_error",
                "route_not_found",
                "No such route. See docs/api.md for the endpoints.".into(),
                None,
            ),
            Self::MethodNotAllowed { .. } => (
                "invalid_request_error",
                "method_not_allowed",
                "This route does not accept that HTTP method.".into(),
                None,
            ),
            Self::Invalid { param, message } => (
                "invalid_request_error",
                "parameter_invalid",
                format!("{param}: {message}"),
                Some(param),
            ),
            Self::PayloadTooLarge { limit } => (
                "invalid_request_error",
                "payload_too_large",
                format!("The request body may be at most {limit} bytes."),
                None,
            ),
            Self::Conflict { param, message } => (
                "invalid_request_error",
                "resource_conflict",
                message.clone(),
                Some(param),
            ),
            Self::PaymentNotApproved {
                code, transaction, ..
            } => (
                if *code == "card_declined" {
                    "card_error"
                } else {
                    "processor_error"
                },
                code,
                transaction.authorization.processor_message.clone(),
                None,
            ),
            Self::Internal(_) => ("api_error", "internal_error", INTERNAL.into(), None),
            Self::Upstream(message) => ("api_error", "upstream_failed", message.clone(), None),
            Self::Status(status) => status_parts(*status),
            Self::LimitReached(message) => (
                "invalid_request_error",
                "limit_reached",
                message.clone(),
                None,
            ),
            Self::Busy(message) => ("api_error", "overloaded", message.clone(), None),
            Self::RateLimited { .. } => (
                "rate_limit_error",
                "rate_limited",
                "Too many requests; retry after the time in Retry-After.".into(),
                None,
            ),
        }
    }
}

/// What a 500 says: nothing of its cause, which is in the log under the same request id.
const INTERNAL: &str = "Something went wrong on our side. Quote the requestId when you contact us.";

/// Our words for a status that a lower layer chose and no variant of ours names.
fn status_parts(status: StatusCode) -> (&'static str, &'static str, String, Option<&'static str>) {
    let (kind, code, message) = match status.as_u16() {
        400..=499 => (
            "invalid_request_error",
            "bad_request",
            "The request could not be read.",
        ),
        503 => (
            "api_error",
            "overloaded",
            "The server is busy; retry in a moment.",
        ),
        _ => ("api_error", "internal_error", INTERNAL),
    };
    (kind, code, message.to_owned(), None)
}

impl ApiError {
    /// The refusal for a status a lower layer rendered (actix's 404, 405, 413…): the variant we
    /// have for it, else `Status`.
    pub fn for_status(status: StatusCode) -> Self {
        match status {
            StatusCode::NOT_FOUND => Self::RouteNotFound,
            StatusCode::METHOD_NOT_ALLOWED => Self::MethodNotAllowed { allow: None },
            StatusCode::PAYLOAD_TOO_LARGE => Self::PayloadTooLarge {
                limit: MAX_BODY_BYTES,
            },
            other => Self::Status(other),
        }
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            Self::WrongKeyType { .. } => StatusCode::FORBIDDEN,
            Self::NotFound { .. } | Self::RouteNotFound => StatusCode::NOT_FOUND,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Invalid { .. } | Self::LimitReached(_) => StatusCode::BAD_REQUEST,
            Self::PayloadTooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Conflict { .. } => StatusCode::CONFLICT,
            Self::PaymentNotApproved { status, .. } | Self::Status(status) => *status,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            Self::Upstream(_) => StatusCode::BAD_GATEWAY,
            Self::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    fn error_response(&self) -> HttpResponse {
        self.log_cause();
        let mut response = HttpResponse::build(self.status_code());
        match self {
            Self::RateLimited { retry_after } => {
                response.insert_header((RETRY_AFTER, retry_after_seconds(*retry_after)));
            }
            Self::Busy(_) => {
                response.insert_header((RETRY_AFTER, "1"));
            }
            Self::MethodNotAllowed { allow: Some(allow) } => {
                response.insert_header((ALLOW, allow.as_str()));
            }
            // RFC 9110 11.6.1: a 401 carries a challenge. The key travels in `x-api-key` (or,
            // on a hosted client's routes, in the query): no registered scheme fits, so the
            // challenge names the header.
            Self::Unauthenticated { .. } => {
                response.insert_header((WWW_AUTHENTICATE, API_KEY_CHALLENGE));
            }
            _ => {}
        }
        response.json(self.body())
    }
}

/// `Retry-After` for a wait: whole seconds rounded up, at least 1, so a client that obeys it
/// never comes back early.
pub fn retry_after_seconds(wait: std::time::Duration) -> u64 {
    wait.as_secs()
        .saturating_add(u64::from(wait.subsec_nanos() > 0))
        .max(1)
}

impl ApiError {
    /// What a page shows of this refusal: the envelope's message, never the cause of a 500
    /// (which goes to the log, as `error_response` does).
    pub fn shown(&self) -> String {
        self.log_cause();
        self.parts().2
    }

    /// A 500's cause, to the log under the request id its answer quotes.
    fn log_cause(&self) {
        if let Self::Internal(cause) = self {
            let request_id = request_context::current_id();
            tracing::error!(request_id, cause, "request failed");
        }
    }
}

impl From<ServiceError> for ApiError {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::NotFound(resource) => Self::NotFound { resource },
            ServiceError::Invalid(invalid) => Self::invalid(invalid.field, invalid.message),
            ServiceError::Conflict { field, message } => Self::Conflict {
                param: field.into(),
                message,
            },
            ServiceError::LimitReached(message) => Self::LimitReached(message),
            ServiceError::Busy(message) => Self::Busy(message),
            ServiceError::Store(e) => Self::Internal(e.to_string()),
        }
    }
}

impl From<holdfast_domain::Invalid> for ApiError {
    fn from(invalid: holdfast_domain::Invalid) -> Self {
        Self::invalid(invalid.field, invalid.message)
    }
}

impl ApiError {
    pub fn from_auth(err: AuthenticateError, required: Access) -> Self {
        match err {
            AuthenticateError::Denied(AuthError::Unauthenticated) => {
                Self::Unauthenticated { required }
            }
            AuthenticateError::Denied(AuthError::WrongKeyType) => Self::WrongKeyType { required },
            AuthenticateError::Store(e) => Self::Internal(e.to_string()),
        }
    }
}

impl From<PaymentError> for ApiError {
    fn from(err: PaymentError) -> Self {
        Self::from(&err)
    }
}

/// A refusal rendered for the answer stored under a request's key, as it is sent.
impl From<&PaymentError> for ApiError {
    fn from(err: &PaymentError) -> Self {
        match err {
            PaymentError::Invalid(invalid) => invalid.clone().into(),
            PaymentError::Refused(refused @ Refused::AmountTooHigh { .. }) => {
                Self::invalid("amount", refused.to_string())
            }
            PaymentError::Refused(refused) => Self::Conflict {
                param: "transactionId".into(),
                message: refused.to_string(),
            },
            PaymentError::Store(e) => Self::Internal(e.to_string()),
            // `TransactionRequests` claims the key and runs again; never a client's answer.
            err @ PaymentError::KeyNotClaimed => Self::Internal(err.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every refusal the API renders has a `type` and a `code` the document lists.
    #[test]
    fn every_refusal_has_a_listed_type_and_code() {
        let refusals = [
            ApiError::Unauthenticated {
                required: Access::Private,
            },
            ApiError::WrongKeyType {
                required: Access::Public,
            },
            ApiError::NotFound {
                resource: "merchant",
            },
            ApiError::RouteNotFound,
            ApiError::MethodNotAllowed { allow: None },
            ApiError::invalid("name", "is required"),
            ApiError::PayloadTooLarge {
                limit: MAX_BODY_BYTES,
            },
            ApiError::Conflict {
                param: "id".into(),
                message: "taken".into(),
            },
            ApiError::Internal("cause".into()),
            ApiError::Upstream("Apple".into()),
            ApiError::LimitReached("16".into()),
            ApiError::Busy("kept changing".into()),
            ApiError::RateLimited {
                retry_after: std::time::Duration::from_secs(1),
            },
            ApiError::Status(StatusCode::BAD_REQUEST),
            ApiError::Status(StatusCode::SERVICE_UNAVAILABLE),
            ApiError::Status(StatusCode::INTERNAL_SERVER_ERROR),
        ];
        for refusal in &refusals {
            let (kind, code, ..) = refusal.parts();
            assert!(ERROR_TYPES.contains(&kind), "{refusal:?}: {kind}");
            assert!(ERROR_CODES.contains(&code), "{refusal:?}: {code}");
        }
        // A payment not approved carries the code its outcome gives (api/transactions/answer.rs).
        for code in ["card_declined", "processor_error", "processor_timeout"] {
            assert!(ERROR_CODES.contains(&code), "{code}");
        }
    }

    /// A page shows the envelope's words: a 500's cause stays in the log, a refusal keeps its
    /// message.
    #[test]
    fn a_page_is_shown_the_envelopes_message() {
        let internal = ApiError::Internal("pool timed out on db.internal:5432".into());
        assert_eq!(internal.shown(), INTERNAL);
        let refused = ApiError::invalid("payment.token", "no such token");
        assert_eq!(refused.shown(), "payment.token: no such token");
    }
}
