//! Response bodies: camelCase JSON, RFC 3339 UTC timestamps.

use holdfast_domain::page::Page;
/// RFC 3339 in UTC with six fractional digits: the one formatter, shared with the domain's JSON.
pub use holdfast_domain::payment::transaction::format_timestamp as rfc3339;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::schema::Type;
use utoipa::openapi::{RefOr, Schema};

/// A page of a list, newest first; `hasMore` says whether `startingAfter` the last id gives more.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListView<T> {
    pub data: Vec<T>,
    pub has_more: bool,
}

impl<T> ListView<T> {
    /// A page of views that borrow from its items.
    pub fn of<'a, D>(page: &'a Page<D>, view: impl Fn(&'a D) -> T) -> Self {
        Self {
            data: page.data.iter().map(view).collect(),
            has_more: page.has_more,
        }
    }

    pub fn from_page<D>(page: Page<D>, view: impl Fn(D) -> T) -> Self {
        Self {
            data: page.data.into_iter().map(view).collect(),
            has_more: page.has_more,
        }
    }
}

/// What a deletion answers.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Deleted)]
pub struct DeletedView {
    pub id: String,
    pub deleted: bool,
}

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

#[cfg(test)]
mod tests {
    use super::rfc3339;
    use time::macros::datetime;

    #[test]
    fn timestamps_always_have_six_fraction_digits_in_utc() {
        assert_eq!(
            rfc3339(datetime!(2026-11-22 23:19:35 UTC)),
            "2026-11-22T23:19:35.000000Z"
        );
        assert_eq!(
            rfc3339(datetime!(2026-11-22 23:19:35.31 UTC)),
            "2026-11-22T23:19:35.310000Z"
        );
        assert_eq!(
            rfc3339(datetime!(2026-11-23 01:00:00.000001 +02:00)),
            "2026-11-22T23:00:00.000001Z"
        );
    }
}
