//! The real clock and id source.

use std::sync::Mutex;

use holdfast_domain::api_key::{SECRET_ALPHABET, SECRET_LEN};
use holdfast_domain::ports::{Clock, Ids};
use time::OffsetDateTime;

/// Wall-clock time in UTC, truncated to microseconds: the precision both databases store, so a
/// value written and read back compares equal.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        let now = OffsetDateTime::now_utc();
        now.replace_microsecond(now.microsecond()).unwrap_or(now)
    }
}

/// ULIDs (time-ordered, so ids sort by creation and inserts stay at the right edge of indexes)
/// and key secrets from nanoid's cryptographically secure generator.
#[derive(Default)]
pub struct RandomIds {
    // Monotonic within the process: two ids in the same millisecond still sort in order.
    generator: Mutex<ulid::Generator>,
}

impl std::fmt::Debug for RandomIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RandomIds")
    }
}

impl Ids for RandomIds {
    fn next_id(&self) -> String {
        let mut generator = self
            .generator
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        generator
            .generate()
            .unwrap_or_else(|_| ulid::Ulid::new())
            .to_string()
    }

    fn key_secret(&self) -> String {
        nanoid::nanoid!(SECRET_LEN, &SECRET_ALPHABET)
    }
}

/// Resolves on SIGINT or SIGTERM: the one place both `serve` and `worker` learn to stop.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(err) => {
                tracing::error!(error = %err, "SIGTERM cannot be heard; stop with SIGINT");
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use holdfast_domain::api_key::KeyValue;
    use holdfast_domain::mode::{KeyType, Mode};

    #[test]
    fn ids_increase_and_secrets_make_valid_keys() {
        let ids = RandomIds::default();
        let a = ids.next_id();
        let b = ids.next_id();
        assert!(a < b, "{a} < {b}");
        let secret = ids.key_secret();
        assert_ne!(secret, ids.key_secret());
        assert!(KeyValue::generate(KeyType::Private, Mode::Live, &secret).is_ok());
    }

    #[test]
    fn clock_is_microsecond_precise() {
        assert_eq!(SystemClock.now().nanosecond() % 1_000, 0);
    }
}
