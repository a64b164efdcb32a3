//! The envelope every refusal is sent in, and the words its `type` and `code` may take.

use serde::Serialize;
use utoipa::ToSchema;

use super::ApiError;
use crate::request_context;
use holdfast_domain::payment::transaction::Transaction;

impl ApiError {
    /// The envelope, with the id of the request being served.
    pub fn body(&self) -> ErrorEnvelope {
        let (kind, code, message, param) = self.parts();
        let (decline_code, transaction) = match self {
            Self::PaymentNotApproved {
                decline_code,
                transaction,
                ..
            } => (Some(*decline_code), Some(transaction.clone())),
            _ => (None, None),
        };
        ErrorEnvelope {
            error: ErrorBody {
                kind,
                code,
                message,
                param: param.map(str::to_owned),
                request_id: request_context::current_id(),
                decline_code,
            },
            transaction,
        }
    }
}

/// Every refusal's body. A payment that was recorded but not approved (402, 502, 504) also
/// carries the recorded transaction.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Error)]
pub struct ErrorEnvelope {
    error: ErrorBody,
    #[serde(skip_serializing_if = "Option::is_none")]
    transaction: Option<Box<Transaction>>,
}

impl std::fmt::Display for ErrorEnvelope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| std::fmt::Error)?)
    }
}

/// Every `type` an error of the API can have: what kind of thing went wrong.
pub const ERROR_TYPES: [&str; 7] = [
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "card_error",
    "processor_error",
    "rate_limit_error",
    "api_error",
];

/// Every `code` an error of the API can have; new codes may be added within `/v1`
/// (docs/versioning.md), so a client treats one it does not know by its `type`.
pub const ERROR_CODES: [&str; 17] = [
    "parameter_invalid",
    "limit_reached",
    "bad_request",
    "resource_missing",
    "route_not_found",
    "method_not_allowed",
    "resource_conflict",
    "payload_too_large",
    "invalid_api_key",
    "wrong_key_type",
    "card_declined",
    "processor_error",
    "processor_timeout",
    "rate_limited",
    "internal_error",
    "upstream_failed",
    "overloaded",
];

fn one_of_these(words: &'static [&'static str]) -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(words.iter().copied()))
        .into()
}

fn error_type() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
    one_of_these(&ERROR_TYPES)
}

fn error_code() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
    one_of_these(&ERROR_CODES)
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct ErrorBody {
    /// What kind of thing went wrong.
    #[serde(rename = "type")]
    #[schema(schema_with = error_type)]
    kind: &'static str,
    /// A stable, machine-readable code.
    #[schema(schema_with = error_code)]
    code: &'static str,
    /// For people; never repeats a value the client sent.
    message: String,
    /// The field at fault, when one is.
    #[schema(required = true)]
    param: Option<String>,
    /// This request's id, also in the `x-request-id` header and in our logs.
    #[schema(required = true)]
    request_id: Option<String>,
    /// Why the issuer declined, on a declined payment (`null` when it gave no reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<holdfast_domain::payment::decline::DeclineCode>)]
    #[expect(
        clippy::option_option,
        reason = "absent off payments; null on a payment refused with no decline code"
    )]
    decline_code: Option<Option<&'static str>>,
}
