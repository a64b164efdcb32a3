//! Instants a set time after or before another, clamped rather than overflowing: a lease's end,
//! a retry's, the age past which a row is stale.

use std::time::Duration;

use time::OffsetDateTime;

/// The longest wait or lease the workers take from their settings: a setting beyond it (a
/// misconfiguration) waits this long rather than overflow a clock.
const LONGEST_WAIT: Duration = Duration::from_hours(24);

/// `by` after `at` (at most a day), never past the instants every backend stores.
pub fn later(at: OffsetDateTime, by: Duration) -> OffsetDateTime {
    time::Duration::try_from(by.min(LONGEST_WAIT))
        .ok()
        .and_then(|by| at.checked_add(by))
        .and_then(holdfast_domain::instant::within_range)
        .unwrap_or(at)
}

/// `by` before `at`, never before the instants every backend stores.
pub fn earlier(at: OffsetDateTime, by: Duration) -> OffsetDateTime {
    time::Duration::try_from(by)
        .ok()
        .and_then(|by| at.checked_sub(by))
        .and_then(holdfast_domain::instant::within_range)
        .unwrap_or(holdfast_domain::instant::EARLIEST)
}
