//! JSON views more than one door prints: the API answers with them and the operator CLI prints
//! the same, so a script reads one shape whichever it calls.

pub mod webhooks;

use utoipa::openapi::schema::Type;
use utoipa::openapi::{RefOr, Schema};

/// RFC 3339 in UTC with six fractional digits: the one formatter, shared with the domain's JSON.
pub use holdfast_domain::payment::transaction::format_timestamp as rfc3339;

/// An instant as the API writes it, or `null`.
pub fn timestamp_or_null() -> RefOr<Schema> {
    let RefOr::T(Schema::Object(instant)) = holdfast_domain::schema::timestamp() else {
        unreachable!("the timestamp schema is an object schema")
    };
    let mut nullable = instant;
    nullable.schema_type =
        utoipa::openapi::schema::SchemaType::from_iter([Type::String, Type::Null]);
    RefOr::T(Schema::Object(nullable))
}
