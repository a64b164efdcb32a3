//! Sign-in failures counted per account: five wrong passwords for one email within 15 minutes
//! lock that email's sign-in until the window ends, whatever address they come from. Addresses
//! are counted too, by the API's failed-authentication limit (`RateLimits::failed`), so one
//! address cannot try many accounts either.
//!
//! Per replica, like every rate limit here (docs/security.md): N replicas allow N times five.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Wrong passwords an account is allowed within one window.
pub const FAILURES: u32 = 5;
/// The window the failures are counted in, and the lockout after the last one allowed.
pub const WINDOW: Duration = Duration::from_mins(15);
/// Accounts kept before the stale ones are swept: an attacker trying many emails adds one each.
const SWEEP_AT: usize = 10_000;

/// Failures per account (a lower-cased email) since the start of its window.
#[derive(Debug, Default)]
pub struct SignInThrottle {
    accounts: Mutex<HashMap<String, (u32, Instant)>>,
}

impl SignInThrottle {
    /// How long `email` must still wait before trying again, if it is locked.
    pub fn locked(&self, email: &str) -> Option<Duration> {
        self.locked_at(email, Instant::now())
    }

    /// Counts a wrong password for `email`.
    pub fn failed(&self, email: &str) {
        self.failed_at(email, Instant::now());
    }

    /// A right password: the account's count starts again.
    pub fn succeeded(&self, email: &str) {
        self.lock().remove(&key(email));
    }

    fn locked_at(&self, email: &str, now: Instant) -> Option<Duration> {
        let accounts = self.lock();
        let &(count, since) = accounts.get(&key(email))?;
        let ends = since + WINDOW;
        (count >= FAILURES && now < ends).then(|| ends - now)
    }

    fn failed_at(&self, email: &str, now: Instant) {
        let mut accounts = self.lock();
        if accounts.len() >= SWEEP_AT {
            accounts.retain(|_, (_, since)| now < *since + WINDOW);
        }
        let entry = accounts.entry(key(email)).or_insert((0, now));
        if now >= entry.1 + WINDOW {
            *entry = (0, now);
        }
        entry.0 += 1;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u32, Instant)>> {
        self.accounts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One account however its email is typed.
fn key(email: &str) -> String {
    email.trim().to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_wrong_passwords_lock_the_account_for_the_window() {
        let throttle = SignInThrottle::default();
        let start = Instant::now();
        for n in 0..FAILURES {
            assert_eq!(
                throttle.locked_at("ops@example.com", start),
                None,
                "after {n}"
            );
            throttle.failed_at("ops@example.com", start);
        }
        let wait = throttle
            .locked_at(" OPS@example.com", start)
            .expect("locked");
        assert_eq!(wait, WINDOW);
        assert_eq!(
            throttle.locked_at("dev@example.com", start),
            None,
            "another account"
        );
        assert_eq!(
            throttle.locked_at("ops@example.com", start + WINDOW),
            None,
            "the window ends"
        );
        throttle.failed_at("ops@example.com", start + WINDOW);
        assert_eq!(
            throttle.locked_at("ops@example.com", start + WINDOW),
            None,
            "a new window"
        );
        throttle.succeeded("ops@example.com");
        for _ in 0..FAILURES - 1 {
            throttle.failed_at("ops@example.com", start);
        }
        throttle.succeeded("ops@example.com");
        throttle.failed_at("ops@example.com", start);
        assert_eq!(
            throttle.locked_at("ops@example.com", start),
            None,
            "a success starts over"
        );
    }
}
