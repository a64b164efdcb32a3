use proptest::prelude::*;
use time::macros::{date, datetime};

use super::*;

#[test]
fn offsets_that_push_an_instant_past_either_end_are_refused() {
    for raw in [
        "9999-12-31T23:59:59-23:59",
        "9999-12-31T23:59:59.999999999-00:01",
        "0001-01-01T00:00:00+00:01",
        "0000-01-01T00:00:00Z",
        "0001-01-01T00:00:59+00:01",
    ] {
        let refused = parse_rfc3339("createdFrom", raw).unwrap_err();
        assert_eq!(refused.field, "createdFrom", "{raw}");
        assert!(!refused.message.contains(raw), "{raw} repeated");
    }
}

#[test]
fn the_ends_themselves_are_accepted_in_utc() {
    assert_eq!(
        parse_rfc3339("f", "0001-01-01T00:00:00Z"),
        Ok(datetime!(0001-01-01 0:00 UTC))
    );
    assert_eq!(
        parse_rfc3339("f", "9999-12-31T23:59:59.999999Z"),
        Ok(LATEST)
    );
    assert_eq!(
        parse_rfc3339("f", "2026-12-05T10:00:00+01:00"),
        Ok(datetime!(2026-12-05 9:00 UTC))
    );
    // Nanoseconds past the last microsecond are past LATEST.
    assert!(parse_rfc3339("f", "9999-12-31T23:59:59.9999999Z").is_err());
}

#[test]
fn days_are_bounded_and_the_last_one_ends_at_latest() {
    assert_eq!(parse_day("9999-12-31"), Some(date!(9999 - 12 - 31)));
    assert_eq!(parse_day("0000-01-01"), None);
    assert_eq!(parse_day("2026-02-30"), None);
    assert_eq!(end_of(date!(9999 - 12 - 31)), LATEST);
    assert_eq!(
        end_of(date!(2026 - 12 - 05)),
        datetime!(2026-12-06 0:00 UTC)
    );
    assert_eq!(day_ending_at(LATEST), date!(9999 - 12 - 31));
    assert_eq!(
        day_ending_at(end_of(date!(2026 - 12 - 05))),
        date!(2026 - 12 - 05)
    );
    assert_eq!(
        day_ending_at(OffsetDateTime::UNIX_EPOCH),
        date!(1969 - 12 - 31)
    );
}

proptest! {
    /// Whatever is sent, the answer is a value in range or a refusal, never a panic.
    #[test]
    fn any_text_is_an_instant_in_range_or_a_refusal(raw in any::<String>()) {
        if let Ok(at) = parse_rfc3339("f", &raw) {
            prop_assert!((EARLIEST..=LATEST).contains(&at));
            prop_assert_eq!(at.offset(), UtcOffset::UTC);
        }
    }

    /// Well-formed timestamps at every year and offset, the extremes included.
    #[test]
    fn every_offset_of_every_year_is_in_range_or_refused(
        year in 0..=9999i32,
        month in 1..=12u8,
        day in 1..=28u8,
        hour in 0..=23u8,
        minute in 0..=59u8,
        fraction in "(\\.[0-9]{1,9})?",
        sign in prop::sample::select(vec!['+', '-']),
        offset_hours in 0..=23u8,
        offset_minutes in 0..=59u8,
    ) {
        let raw = format!(
            "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:59{fraction}\
             {sign}{offset_hours:02}:{offset_minutes:02}"
        );
        match parse_rfc3339("f", &raw) {
            Ok(at) => prop_assert!((EARLIEST..=LATEST).contains(&at)),
            Err(refused) => prop_assert!(year <= 1 || year >= 9999, "{raw}: {refused}"),
        }
    }

    #[test]
    fn any_text_is_a_day_or_none(raw in any::<String>()) {
        if let Some(day) = parse_day(&raw) {
            prop_assert!(start_of(day) <= end_of(day));
            prop_assert_eq!(day_ending_at(end_of(day)), day);
        }
    }
}
