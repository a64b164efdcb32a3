//! Response bodies: camelCase JSON, RFC 3339 UTC timestamps.

use holdfast_domain::page::Page;
use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

/// RFC 3339 in UTC with exactly six fractional digits, so every timestamp has the same shape.
const TIMESTAMP: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

pub fn rfc3339(at: OffsetDateTime) -> String {
    at.to_offset(time::UtcOffset::UTC)
        .format(TIMESTAMP)
        .expect("timestamps format")
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListView<T> {
    pub data: Vec<T>,
    pub has_more: bool,
}

impl<T> ListView<T> {
    pub fn from_page<D>(page: Page<D>, view: impl Fn(D) -> T) -> Self {
        Self {
            data: page.data.into_iter().map(view).collect(),
            has_more: page.has_more,
        }
    }
}

#[derive(Debug, Serialize)]
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
