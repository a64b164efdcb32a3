//! One delivery attempt (spec 6.2): up to four HTTP requests, what is retried, the backoff, and
//! the notification body.

use std::time::Duration;

use time::OffsetDateTime;

use crate::payment::transaction::format_timestamp;
use crate::ports::{PostResult, SendFailure};

/// How long a delivery record keeps its bodies (spec 2.4: a 15-day history); older records
/// are archived, keeping the row and its outcome.
pub const HISTORY: time::Duration = time::Duration::days(15);

/// The first request plus up to three retries.
pub const MAX_REQUESTS: u32 = 4;

crate::words! {
    /// The final outcome of a notification, recorded once.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum Outcome {
        /// The receiver answered 2xx.
        Succeeded,
        /// No 2xx answer after the retries, or a failure that is not retried.
        Failed,
        /// Not sent: the subscription was inactive (or gone) when its turn came.
        Skipped,
    }
}

/// What to do after a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryDecision {
    /// The receiver answered 2xx; the notification is delivered.
    Succeeded,
    /// Wait, then send again.
    Retry,
    /// Final failure: a 4xx or 3xx, a refused address, or the retries are used up.
    GiveUp,
}

/// `requests_made` counts the request just answered.
pub fn decide(result: &PostResult, requests_made: u32) -> RetryDecision {
    let retryable = match result {
        PostResult::Answered { status, .. } if (200..300).contains(status) => {
            return RetryDecision::Succeeded;
        }
        PostResult::Answered { status, .. } => *status >= 500,
        PostResult::Failed(
            SendFailure::Dns(_) | SendFailure::Connect(_) | SendFailure::Timeout,
        ) => true,
        PostResult::Failed(SendFailure::Refused(_) | SendFailure::Invalid(_)) => false,
    };
    if retryable && requests_made < MAX_REQUESTS {
        RetryDecision::Retry
    } else {
        RetryDecision::GiveUp
    }
}

/// The pause before retry `retry` (1, 2, 3): `base`, doubling each time, with "equal jitter":
/// half fixed, half scaled by `jitter` in `[0, 1)`, so retries from many workers spread out.
pub fn backoff(base: Duration, retry: u32, jitter: f64) -> Duration {
    let full = base.saturating_mul(1 << retry.saturating_sub(1).min(16));
    let half = full / 2;
    half + half.mul_f64(jitter.clamp(0.0, 1.0))
}

/// The JSON sent to the receiver. `data` is the event's stored JSON, written by us.
pub fn notification_body(
    id: &str,
    event_id: &str,
    event_type: &str,
    created_on: OffsetDateTime,
    data: &str,
) -> String {
    format!(
        r#"{{"id":"{id}","eventId":"{event_id}","eventType":"{event_type}","createdOn":"{}","data":{data}}}"#,
        format_timestamp(created_on)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(status: u16) -> PostResult {
        PostResult::Answered {
            status,
            body: String::new(),
        }
    }

    #[test]
    fn spec_6_2_table() {
        use RetryDecision::{GiveUp, Retry, Succeeded};
        let cases = [
            (answered(200), 1, Succeeded),
            (answered(204), 4, Succeeded),
            (answered(299), 1, Succeeded),
            (answered(500), 1, Retry),
            (answered(503), 3, Retry),
            (answered(500), 4, GiveUp),
            (answered(400), 1, GiveUp),
            (answered(404), 1, GiveUp),
            (answered(429), 1, GiveUp),
            (answered(301), 1, GiveUp),
            (answered(302), 1, GiveUp),
            (PostResult::Failed(SendFailure::Timeout), 1, Retry),
            (PostResult::Failed(SendFailure::Timeout), 4, GiveUp),
            (
                PostResult::Failed(SendFailure::Connect("refused".into())),
                2,
                Retry,
            ),
            (PostResult::Failed(SendFailure::Dns("nx".into())), 3, Retry),
            (
                PostResult::Failed(SendFailure::Refused("127.0.0.1".into())),
                1,
                GiveUp,
            ),
            (
                PostResult::Failed(SendFailure::Invalid("url".into())),
                1,
                GiveUp,
            ),
        ];
        for (result, n, want) in cases {
            assert_eq!(decide(&result, n), want, "{result:?} after {n}");
        }
    }

    #[test]
    fn backoff_doubles_within_its_jitter_band() {
        let base = Duration::from_secs(1);
        assert_eq!(backoff(base, 1, 0.0), Duration::from_millis(500));
        assert_eq!(backoff(base, 1, 1.0), Duration::from_secs(1));
        assert_eq!(backoff(base, 2, 0.0), Duration::from_secs(1));
        assert_eq!(backoff(base, 3, 0.5), Duration::from_secs(3));
    }

    #[test]
    fn body_has_ids_type_time_and_data() {
        let body = notification_body(
            "ntf_1",
            "evt_1",
            "merchant.created",
            time::macros::datetime!(2026-11-23 01:02:03 UTC),
            r#"{"id":"mid_1"}"#,
        );
        assert_eq!(
            body,
            r#"{"id":"ntf_1","eventId":"evt_1","eventType":"merchant.created","createdOn":"2026-11-23T01:02:03.000000Z","data":{"id":"mid_1"}}"#
        );
    }
}
