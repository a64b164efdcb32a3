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

/// SIGINT and SIGTERM, heard from the moment `listen` returns: the one place both `serve` and
/// `worker` learn to stop. The handlers are installed when it is made, not when it is first
/// awaited, so a signal that arrives while the server starts (a supervisor stopping a process it
/// just saw answer) stops it gracefully instead of killing it with the default action.
#[derive(Debug)]
pub struct ShutdownSignal {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl ShutdownSignal {
    /// Installs the handlers; call it first thing, inside the runtime.
    pub fn listen() -> anyhow::Result<Self> {
        #[cfg(unix)]
        {
            use anyhow::Context as _;
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt()).context("listening for SIGINT")?,
                terminate: signal(SignalKind::terminate()).context("listening for SIGTERM")?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Resolves on the first SIGINT or SIGTERM.
    pub async fn received(mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {},
            _ = self.terminate.recv() => {},
        }
        #[cfg(not(unix))]
        {
            let _ = &mut self;
            let _ = tokio::signal::ctrl_c().await;
        }
    }
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

    /// A signal sent after `listen` and before anything awaits it is heard, not fatal: this test
    /// process would die of its own SIGTERM if the handler waited for the first poll.
    #[tokio::test]
    async fn a_signal_before_the_first_wait_is_heard() {
        let shutdown = ShutdownSignal::listen().unwrap();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &std::process::id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        tokio::time::timeout(std::time::Duration::from_secs(10), shutdown.received())
            .await
            .expect("the SIGTERM was heard");
    }

    #[test]
    fn clock_is_microsecond_precise() {
        assert_eq!(SystemClock.now().nanosecond() % 1_000, 0);
    }
}
