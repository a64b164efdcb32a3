//! Instants that come from outside: parsed, normalised to UTC and held inside the range that every
//! backend stores.
//!
//! `time` represents years -9999 to 9999 in any offset, so `9999-12-31T23:59:59-23:59` parses
//! and its UTC instant (in year 10000) cannot be represented at all: converting it panics.
//! PostgreSQL keeps microseconds from 4713 BC, SQLite keeps the ISO-8601 text (whose order is the
//! instants' order only for years 0001 to 9999). So the rule for every door is one range,
//! [`EARLIEST`] to [`LATEST`] in UTC; anything else is refused before it reaches a store.

use time::macros::{datetime, format_description};
use time::{Date, OffsetDateTime, UtcOffset};

use crate::Invalid;

/// The earliest instant accepted: 0001-01-01T00:00:00Z.
pub const EARLIEST: OffsetDateTime = datetime!(0001-01-01 0:00 UTC);
/// The latest instant accepted: 9999-12-31T23:59:59.999999Z (PostgreSQL keeps microseconds).
pub const LATEST: OffsetDateTime = datetime!(9999-12-31 23:59:59.999_999 UTC);

/// What the refusal says, without the value (no error repeats what was sent).
const RULE: &str = "must be an RFC 3339 timestamp between 0001-01-01T00:00:00Z and \
                    9999-12-31T23:59:59.999999Z";

/// An RFC 3339 timestamp from outside, in UTC, refused as `field` when it does not parse or its
/// UTC instant lies outside [`EARLIEST`]..=[`LATEST`].
pub fn parse_rfc3339(field: &'static str, raw: &str) -> Result<OffsetDateTime, Invalid> {
    let refused = || Invalid::new(field, RULE);
    let at = OffsetDateTime::parse(raw, &time::format_description::well_known::Rfc3339)
        .map_err(|_| refused())?;
    within_range(at).ok_or_else(refused)
}

/// `at` in UTC when its instant lies inside the stored range; `None` otherwise, never a panic.
pub fn within_range(at: OffsetDateTime) -> Option<OffsetDateTime> {
    let utc = at.checked_to_offset(UtcOffset::UTC)?;
    (EARLIEST..=LATEST).contains(&utc).then_some(utc)
}

/// A calendar day written `YYYY-MM-DD`, between 0001-01-01 and 9999-12-31; `None` otherwise.
pub fn parse_day(raw: &str) -> Option<Date> {
    let day = Date::parse(raw, format_description!("[year]-[month]-[day]")).ok()?;
    (day >= EARLIEST.date()).then_some(day)
}

/// The first instant of `day` in UTC.
pub fn start_of(day: Date) -> OffsetDateTime {
    day.midnight().assume_utc()
}

/// The first instant after `day` in UTC, or [`LATEST`] for the last day there is: a range that
/// ends "before the day after" ends at the end of what is stored.
pub fn end_of(day: Date) -> OffsetDateTime {
    day.next_day().map_or(LATEST, start_of)
}

/// The day an exclusive end made by [`end_of`] closes: the day of the instant just before it.
pub fn day_ending_at(end: OffsetDateTime) -> Date {
    end.checked_sub(time::Duration::NANOSECOND)
        .unwrap_or(end)
        .date()
}

#[cfg(test)]
mod tests;
