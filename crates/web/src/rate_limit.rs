//! Rate limits, per replica: a token bucket per private key, one per public key and client
//! address (a public key is on the merchant's page, so anyone can spend its budget: per address,
//! one client cannot spend the shoppers'), and one per client address on requests that fail
//! authentication, so guessing keys is slow. An address over its failure budget is refused
//! before its key is even looked up: otherwise a right guess inside the lockout would still be
//! served.
//!
//! Buckets live in this process's memory: with N replicas behind a balancer a client gets up to
//! N times the rate. docs/security.md says so.
//!
//! An "address" here is an IPv4 address or an IPv6 /64: one IPv6 subscriber is given a /64 (or
//! more) and can send each request from a new address in it, so per address it would have
//! budgets without end.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use governor::clock::Clock;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use holdfast_domain::auth::{Access, Principal};
use holdfast_domain::ids::KeyId;
use holdfast_domain::mode::KeyType;

/// Requests per second per key type, and failed authentications per minute per address; `None`
/// (set as 0) turns a limit off.
#[derive(Debug, Clone, Copy, Default)]
pub struct RateSettings {
    pub private_per_s: Option<NonZeroU32>,
    pub public_per_s: Option<NonZeroU32>,
    pub failed_auth_per_min: Option<NonZeroU32>,
}

/// A public key's page loads allowed per call it may make: a checkout loads the script, three
/// or four field frames and a relay frame before it tokenizes once.
pub const PAGE_LOADS_PER_CALL: u32 = 10;

/// Admissions between two sweeps of the per-key buckets: counting the buckets locks every
/// shard of the map, so it is not done on each request.
const KEY_SWEEP_EVERY: u32 = 65_536;
/// Failed authentications between two sweeps of the per-address buckets and lockouts: an
/// attacker rotating addresses adds one entry per address, so they are swept by count, whether
/// or not any address was locked out.
const FAILURE_SWEEP_EVERY: u32 = 4_096;

/// A public key's bucket: the key and the client address spending it.
type PublicBucket = (KeyId, Option<IpAddr>);

/// The holder of `address`'s budgets: an IPv4 address itself, an IPv6 address its /64.
fn holder(address: IpAddr) -> IpAddr {
    match address.to_canonical() {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        v4 @ IpAddr::V4(_) => v4,
    }
}

pub struct RateLimits {
    private: Option<DefaultKeyedRateLimiter<KeyId>>,
    public: Option<DefaultKeyedRateLimiter<PublicBucket>>,
    /// A public key's page loads (the client script and its frames, `Access::Public`): one
    /// checkout loads several, so they have a bucket of their own, `PAGE_LOADS_PER_CALL` times
    /// the public rate, and never spend the key's tokenization budget.
    pages: Option<DefaultKeyedRateLimiter<PublicBucket>>,
    failures: Option<DefaultKeyedRateLimiter<IpAddr>>,
    /// Addresses that ran out of failures, and until when they are refused.
    blocked: Mutex<HashMap<IpAddr, Instant>>,
    /// Whether `blocked` may hold anyone: every request asks, and almost always nobody is.
    any_blocked: AtomicBool,
    /// Admissions since the last sweep of idle key buckets.
    admitted: AtomicU32,
    /// Failed authentications since the last sweep of the per-address state.
    failed: AtomicU32,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits")
            .field("private", &self.private.is_some())
            .field("public", &self.public.is_some())
            .field("pages", &self.pages.is_some())
            .field("failures", &self.failures.is_some())
            .finish_non_exhaustive()
    }
}

/// A bucket per key of `rate` requests a second.
fn per_second<K: Clone + Eq + std::hash::Hash>(rate: NonZeroU32) -> DefaultKeyedRateLimiter<K> {
    RateLimiter::keyed(Quota::per_second(rate))
}

impl RateLimits {
    pub fn new(settings: RateSettings) -> Self {
        Self {
            private: settings.private_per_s.map(per_second),
            public: settings.public_per_s.map(per_second),
            pages: settings.public_per_s.map(|rate| {
                per_second(rate.saturating_mul(
                    NonZeroU32::new(PAGE_LOADS_PER_CALL).unwrap_or(NonZeroU32::MIN),
                ))
            }),
            failures: settings
                .failed_auth_per_min
                .map(|rate| RateLimiter::keyed(Quota::per_minute(rate))),
            blocked: Mutex::new(HashMap::new()),
            any_blocked: AtomicBool::new(false),
            admitted: AtomicU32::new(0),
            failed: AtomicU32::new(0),
        }
    }

    /// No limits (operator commands, the in-process tests).
    pub fn off() -> Self {
        Self::new(RateSettings::default())
    }

    /// Whether `who`, calling from `address`, may make one more request of a route that
    /// requires `access` now; else how long to wait.
    pub fn admit(
        &self,
        who: &Principal,
        access: Access,
        address: Option<IpAddr>,
    ) -> Result<(), Duration> {
        let Some(key) = &who.key_id else {
            return Ok(());
        };
        let public = match (access, who.key_type) {
            (Access::Public, _) => &self.pages,
            (_, KeyType::Public) => &self.public,
            (_, KeyType::Private) => return self.spend(self.private.as_ref(), key),
        };
        self.spend(public.as_ref(), &(key.clone(), address.map(holder)))
    }

    /// One request from `bucket` of `limiter`, if that limit is on.
    fn spend<K>(
        &self,
        limiter: Option<&DefaultKeyedRateLimiter<K>>,
        bucket: &K,
    ) -> Result<(), Duration>
    where
        K: Clone + Eq + std::hash::Hash,
    {
        let Some(limiter) = limiter else {
            return Ok(());
        };
        limiter
            .check_key(bucket)
            .map_err(|not_until| not_until.wait_time_from(limiter.clock().now()))?;
        // Buckets gone quiet are full again: dropping them forgets nothing.
        if self.admitted.fetch_add(1, Ordering::Relaxed) % KEY_SWEEP_EVERY == KEY_SWEEP_EVERY - 1 {
            limiter.retain_recent();
        }
        Ok(())
    }

    /// Whether `address` is still refused for its failed authentications, and for how long.
    pub fn locked_out(&self, address: Option<IpAddr>) -> Option<Duration> {
        let address = holder(address?);
        if !self.any_blocked.load(Ordering::Acquire) {
            return None;
        }
        let until = *self.lock_blocked().get(&address)?;
        until.checked_duration_since(Instant::now())
    }

    /// Counts a failed authentication from `address`; `Some(wait)` when that was one too many.
    pub fn failed(&self, address: Option<IpAddr>) -> Option<Duration> {
        let (failures, address) = (self.failures.as_ref()?, holder(address?));
        if self.failed.fetch_add(1, Ordering::Relaxed) % FAILURE_SWEEP_EVERY
            == FAILURE_SWEEP_EVERY - 1
        {
            failures.retain_recent();
            let mut blocked = self.lock_blocked();
            let now = Instant::now();
            blocked.retain(|_, until| *until > now);
            self.any_blocked
                .store(!blocked.is_empty(), Ordering::Release);
        }
        let wait = failures
            .check_key(&address)
            .err()?
            .wait_time_from(failures.clock().now());
        let mut blocked = self.lock_blocked();
        let now = Instant::now();
        blocked.insert(address, now.checked_add(wait).unwrap_or(now));
        self.any_blocked.store(true, Ordering::Release);
        Some(wait)
    }

    fn lock_blocked(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Instant>> {
        self.blocked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holdfast_domain::ids::{PlatformId, UserId};
    use holdfast_domain::mode::Mode;

    fn who(key_type: KeyType, key: &str) -> Principal {
        Principal {
            scope: holdfast_domain::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Test),
            key_type,
            key_id: Some(KeyId::from_suffix(key)),
            user_id: UserId::from_suffix("1"),
        }
    }

    fn limits(private: u32, public: u32, failures: u32) -> RateLimits {
        RateLimits::new(RateSettings {
            private_per_s: NonZeroU32::new(private),
            public_per_s: NonZeroU32::new(public),
            failed_auth_per_min: NonZeroU32::new(failures),
        })
    }

    /// The address the tests' requests come from.
    const HERE: Option<IpAddr> = Some(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST));

    /// A public key is on the merchant's page: a client that spends its budget from one
    /// address leaves every other address theirs. A private key's budget is the key's.
    #[test]
    fn a_public_keys_budget_is_per_address_a_private_keys_per_key() {
        let limits = limits(2, 2, 0);
        let elsewhere = Some(IpAddr::from([10, 0, 0, 9]));
        for (key, access) in [
            (who(KeyType::Public, "p"), Access::PublicOrPrivate),
            (who(KeyType::Public, "p"), Access::Public),
        ] {
            while limits.admit(&key, access, HERE).is_ok() {}
            assert!(
                limits.admit(&key, access, elsewhere).is_ok(),
                "{access:?}: another address keeps its budget"
            );
        }
        let private = who(KeyType::Private, "s");
        while limits.admit(&private, Access::Private, HERE).is_ok() {}
        assert!(
            limits.admit(&private, Access::Private, elsewhere).is_err(),
            "a private key's budget is the key's, wherever it calls from"
        );
    }

    #[test]
    fn each_key_has_a_bucket_of_its_types_rate() {
        let limits = limits(5, 2, 0);
        let admitted = |key: &Principal| {
            (0..10)
                .filter(|_| limits.admit(key, Access::PublicOrPrivate, HERE).is_ok())
                .count()
        };
        assert_eq!(admitted(&who(KeyType::Private, "a")), 5);
        assert_eq!(
            admitted(&who(KeyType::Private, "b")),
            5,
            "another key, its own bucket"
        );
        assert_eq!(admitted(&who(KeyType::Public, "c")), 2);
        let wait = limits
            .admit(&who(KeyType::Public, "c"), Access::PublicOrPrivate, HERE)
            .unwrap_err();
        assert!(
            wait > Duration::ZERO && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
    }

    /// A checkout's page loads never spend its key's tokenization budget, and have a budget of
    /// their own.
    #[test]
    fn a_public_keys_page_loads_have_their_own_bucket() {
        let limits = limits(0, 2, 0);
        let key = who(KeyType::Public, "p");
        let pages = (0..100)
            .filter(|_| limits.admit(&key, Access::Public, HERE).is_ok())
            .count();
        assert_eq!(pages, 2 * PAGE_LOADS_PER_CALL as usize);
        let calls = (0..10)
            .filter(|_| limits.admit(&key, Access::PublicOrPrivate, HERE).is_ok())
            .count();
        assert_eq!(calls, 2, "the tokenization budget is untouched");
    }

    #[test]
    fn zero_turns_a_limit_off() {
        let limits = limits(0, 0, 0);
        let key = who(KeyType::Private, "a");
        assert!((0..10_000).all(|_| limits.admit(&key, Access::Private, HERE).is_ok()));
        let public = who(KeyType::Public, "b");
        assert!((0..10_000).all(|_| limits.admit(&public, Access::Public, HERE).is_ok()));
        let address = Some(IpAddr::from([10, 0, 0, 1]));
        assert!((0..1_000).all(|_| limits.failed(address).is_none()));
        assert_eq!(limits.locked_out(address), None);
    }

    #[test]
    fn an_address_out_of_failures_is_locked_out_alone() {
        let limits = limits(0, 0, 3);
        let guesser = Some(IpAddr::from([10, 0, 0, 1]));
        let other = Some(IpAddr::from([10, 0, 0, 2]));
        assert!((0..3).all(|_| limits.failed(guesser).is_none()));
        assert_eq!(limits.locked_out(guesser), None);
        let wait = limits
            .failed(guesser)
            .expect("the fourth failure is one too many");
        assert!(wait > Duration::from_secs(10), "{wait:?}");
        assert!(limits.locked_out(guesser).is_some());
        assert_eq!(limits.locked_out(other), None);
        assert!(limits.failed(other).is_none());
    }

    /// An IPv6 client that takes a new address of its /64 for every guess is still one guesser,
    /// and one shopper; the next /64 is someone else.
    #[test]
    fn an_ipv6_clients_budgets_are_its_64s() {
        let at = |address: &str| -> Option<IpAddr> { Some(address.parse().unwrap()) };
        let limits = limits(0, 2, 3);
        let rotating = ["2001:db8:0:7::1", "2001:db8:0:7::2", "2001:db8:0:7:ffff::3"];
        assert!(rotating.iter().all(|a| limits.failed(at(a)).is_none()));
        assert!(limits.failed(at("2001:db8:0:7:1:2:3:4")).is_some());
        assert!(limits.locked_out(at("2001:db8:0:7::9")).is_some());
        assert_eq!(limits.locked_out(at("2001:db8:0:8::1")), None);
        let key = who(KeyType::Public, "p");
        let spent = (1..=10)
            .filter(|n| {
                let address = at(&format!("2001:db8:0:7::{n:x}"));
                limits.admit(&key, Access::PublicOrPrivate, address).is_ok()
            })
            .count();
        assert_eq!(spent, 2, "one /64, one budget");
        assert!(
            limits
                .admit(&key, Access::PublicOrPrivate, at("2001:db8:0:8::1"))
                .is_ok()
        );
        // IPv4 addresses stay apart, also written as IPv6.
        assert!((0..3).all(|_| limits.failed(at("192.0.2.1")).is_none()));
        assert!(limits.failed(at("::ffff:192.0.2.1")).is_some());
        assert_eq!(limits.locked_out(at("192.0.2.2")), None);
    }
}
