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
    /// Counts an attempt for `email` before its password is checked, or says how long the
    /// account must still wait. Counted first, attempts sent at once cannot together pass the
    /// limit while their passwords are being checked.
    pub fn attempt(&self, email: &str) -> Result<Attempt<'_>, Duration> {
        self.attempt_at(email, Instant::now())
    }

    #[expect(
        clippy::arithmetic_side_effects,
        reason = "instants of this process's life plus 15 minutes; counts capped at FAILURES"
    )]
    fn attempt_at(&self, email: &str, now: Instant) -> Result<Attempt<'_>, Duration> {
        let key = key(email);
        let mut accounts = self.lock();
        if accounts.len() >= SWEEP_AT {
            accounts.retain(|_, (_, since)| now < *since + WINDOW);
        }
        let entry = accounts.entry(key.clone()).or_insert((0, now));
        if now >= entry.1 + WINDOW {
            *entry = (0, now);
        }
        let ends = entry.1 + WINDOW;
        if entry.0 >= FAILURES {
            return Err(ends - now);
        }
        entry.0 += 1;
        Ok(Attempt {
            throttle: self,
            key,
            settled: false,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (u32, Instant)>> {
        self.accounts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// One sign-in attempt (or reset link), counted as a failure until it is known: a wrong
/// password leaves it counted, a right one starts the account's count again, and one whose
/// password could not be checked (the store failed) is given back when dropped.
#[derive(Debug)]
#[must_use = "an attempt not settled is given back"]
pub struct Attempt<'t> {
    throttle: &'t SignInThrottle,
    key: String,
    settled: bool,
}

impl Attempt<'_> {
    /// A wrong password, or a reset link sent: the attempt stays counted.
    pub fn stays_counted(mut self) {
        self.settled = true;
    }

    /// A right password: the account's count starts again.
    pub fn succeeded(mut self) {
        self.settled = true;
        self.throttle.lock().remove(&self.key);
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.settled
            && let Some(entry) = self.throttle.lock().get_mut(&self.key)
        {
            entry.0 = entry.0.saturating_sub(1);
        }
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
            throttle
                .attempt_at("ops@example.com", start)
                .unwrap_or_else(|_| panic!("refused after {n}"))
                .stays_counted();
        }
        let wait = throttle
            .attempt_at(" OPS@example.com", start)
            .expect_err("locked");
        assert_eq!(wait, WINDOW);
        assert!(
            throttle.attempt_at("dev@example.com", start).is_ok(),
            "another account"
        );
        throttle
            .attempt_at("ops@example.com", start + WINDOW)
            .expect("the window ends")
            .stays_counted();
        assert!(
            throttle
                .attempt_at("ops@example.com", start + WINDOW)
                .is_ok(),
            "a new window"
        );
        let other = "dev@example.com";
        for _ in 0..FAILURES - 1 {
            throttle.attempt_at(other, start).unwrap().stays_counted();
        }
        throttle.attempt_at(other, start).unwrap().succeeded();
        for _ in 0..FAILURES - 1 {
            throttle.attempt_at(other, start).unwrap().stays_counted();
        }
        assert!(
            throttle.attempt_at(other, start).is_ok(),
            "a success starts over"
        );
    }

    /// Attempts whose passwords are still being checked count: five at once, and the sixth is
    /// refused before any of them is known. One that could not be checked is given back.
    #[test]
    fn attempts_count_before_their_passwords_are_checked() {
        let throttle = SignInThrottle::default();
        let start = Instant::now();
        let mut pending: Vec<Attempt<'_>> = (0..FAILURES)
            .map(|_| throttle.attempt_at("ops@example.com", start).unwrap())
            .collect();
        assert!(
            throttle.attempt_at("ops@example.com", start).is_err(),
            "five in flight lock the account"
        );
        drop(pending.pop());
        let sixth = throttle.attempt_at("ops@example.com", start);
        assert!(sixth.is_ok(), "an attempt given back frees its place");
        sixth.unwrap().stays_counted();
        for attempt in pending {
            attempt.stays_counted();
        }
        assert!(throttle.attempt_at("ops@example.com", start).is_err());
    }
}
