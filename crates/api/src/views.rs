//! Response bodies: camelCase JSON, RFC 3339 UTC timestamps.

use holdfast_domain::page::Page;
pub use holdfast_web::views::{rfc3339, timestamp_or_null};
use serde::Serialize;
use utoipa::ToSchema;

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
