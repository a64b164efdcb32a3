//! JSON Schemas of the types that are the API's JSON (feature `openapi`), so the HTTP door's
//! OpenAPI document describes them from the code that writes them.

pub mod rules;

use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};

/// A string that is one of `words`: the schema of a `words!` enum, from its own list.
pub fn one_of_words(words: impl IntoIterator<Item = &'static str>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(words))
        .into()
}

/// A typed id: `prefix` then 1 to 64 ASCII letters or digits.
pub fn id_with_prefix(prefix: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(format!("^{prefix}[0-9A-Za-z]{{1,64}}$")))
        .examples([format!("{prefix}01JDQ8Y6M2Z4R7V9T3B5N8K1XW")])
        .into()
}

/// An instant as the API writes it: RFC 3339 in UTC with six fractional digits.
pub fn timestamp() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::DateTime,
        )))
        .examples(["2026-11-24T12:00:00.000000Z"])
        .into()
}

/// A schema written as JSON (for a type whose JSON is written by hand).
#[expect(
    clippy::expect_used,
    reason = "our own JSON, checked by the OpenAPI tests whenever the document is built"
)]
pub fn from_json(value: serde_json::Value) -> RefOr<Schema> {
    serde_json::from_value(value).expect("a JSON Schema utoipa reads")
}

/// Implements `ToSchema` for a type whose schema `$schema` builds.
macro_rules! schema_of {
    ($name:ident, $schema:expr) => {
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
                $schema
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}
pub(crate) use schema_of;
