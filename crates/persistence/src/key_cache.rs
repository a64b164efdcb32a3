//! API keys found by hash, kept in the process so that authenticating a request costs no round
//! trip, on PostgreSQL only. Spec 3.1 says a deactivated key answers 401 at once, on every
//! replica: the cache is trusted only while this process hears every change to `api_keys`.
//!
//! - A trigger (migration `key_changes`) sends `NOTIFY holdfast_api_keys` with the key's hash
//!   whenever a key's activity, type, mode or owner changes or the key is deleted; PostgreSQL
//!   sends it when that transaction commits. [`listen`] holds one connection `LISTEN`ing and
//!   forgets each key named.
//! - The cache answers only while that connection is known to be alive: it is checked with a
//!   round trip every [`CHECK_EVERY`], and a hit is served only within [`TRUST_FOR`] of the
//!   last check sent. Notifications come on that connection ahead of the answer to a check
//!   sent after they were committed, so whatever committed before a check was heard once the
//!   check is answered. A lost connection empties the cache until a new one listens.
//! - A read that raced with a change is not cached: entries are filled only when no change was
//!   heard between the miss and the fill (`Miss::epoch`).
//! - Only keys that exist are cached, so a guess still costs a read (and the per-address
//!   limit). SQLite has no notifications: there, every request reads its key.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use holdfast_domain::api_key::{ApiKey, KeyHash};
use secrecy::{ExposeSecret, SecretString};
use time::OffsetDateTime;
use tokio_postgres::{AsyncMessage, NoTls};

/// The channel the `api_keys` trigger notifies.
const CHANNEL: &str = "holdfast_api_keys";
/// The listening connection's name in `pg_stat_activity`.
const APPLICATION_NAME: &str = "holdfast key cache";
/// How often the listening connection is checked.
const CHECK_EVERY: Duration = Duration::from_millis(100);
/// How long after a check was sent its answer vouches for the cache: the longest a change can
/// go unheard if the connection silently stops delivering.
const TRUST_FOR: Duration = Duration::from_millis(250);
/// A check not answered within this drops the connection.
const CHECK_TIMEOUT: Duration = Duration::from_millis(200);
/// Between attempts to listen again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);
/// Entries kept at most; the cache is emptied when full. Only keys that exist are cached, so
/// this bounds memory, not an attacker.
const CAPACITY: usize = 10_000;

/// The keys this process has read, while it hears every change to them.
#[derive(Debug, Default)]
pub(crate) struct KeyCache {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Until when the last answered check vouches that every change was heard; `None` while
    /// no connection listens.
    trusted_until: Option<Instant>,
    /// Bumped whenever a change is heard or listening starts or stops.
    epoch: u64,
    entries: HashMap<KeyHash, ApiKey>,
}

/// A miss, to be filled with what the store reads if nothing changed meanwhile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Miss {
    epoch: Option<u64>,
}

impl KeyCache {
    /// The key stored under `hash`, if cached and trusted; otherwise a [`Miss`] to fill.
    pub(crate) fn get(&self, hash: &KeyHash) -> Result<ApiKey, Miss> {
        let state = self.lock();
        if !state.trusted(Instant::now()) {
            return Err(Miss { epoch: None });
        }
        state.entries.get(hash).cloned().ok_or(Miss {
            epoch: Some(state.epoch),
        })
    }

    /// Keeps `key`, read after `miss`, unless a change was heard since or trust was lost.
    pub(crate) fn fill(&self, miss: Miss, key: &ApiKey) {
        let mut state = self.lock();
        if miss.epoch != Some(state.epoch) || !state.trusted(Instant::now()) {
            return;
        }
        if state.entries.len() >= CAPACITY {
            state.entries.clear();
        }
        state.entries.insert(key.hash.clone(), key.clone());
    }

    /// Forgets the key under `hash`: it changed or was deleted.
    pub(crate) fn forget(&self, hash: &KeyHash) {
        let mut state = self.lock();
        state.epoch += 1;
        state.entries.remove(hash);
    }

    /// Whether hits are served now (for tests of the listener).
    #[cfg(any(test, feature = "test-support"))]
    pub(crate) fn is_trusted(&self) -> bool {
        self.lock().trusted(Instant::now())
    }

    /// Forgets every key but keeps trusting the connection: it heard a change it could not
    /// place (a TRUNCATE), so no entry is known to be current.
    fn forget_all(&self) {
        let mut state = self.lock();
        state.epoch += 1;
        state.entries.clear();
    }

    /// Notes that this process wrote the time of last use of the key under `hash`.
    pub(crate) fn touched(&self, hash: &KeyHash, at: OffsetDateTime) {
        if let Some(key) = self.lock().entries.get_mut(hash) {
            key.last_used_on = Some(at);
        }
    }

    /// A connection listens: changes committed after it began listening will be heard.
    fn listening(&self, check_sent: Instant) {
        let mut state = self.lock();
        state.epoch += 1;
        state.entries.clear();
        state.trusted_until = Some(check_sent + TRUST_FOR);
    }

    /// A check sent at `sent` was answered: every change committed before it was heard.
    fn checked(&self, sent: Instant) {
        let mut state = self.lock();
        if state.trusted_until.is_some() {
            state.trusted_until = Some(sent + TRUST_FOR);
        }
    }

    /// The listening connection is gone: changes may go unheard, so nothing cached is kept.
    fn deaf(&self) {
        let mut state = self.lock();
        state.epoch += 1;
        state.entries.clear();
        state.trusted_until = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is consistent after every statement: a panic elsewhere cannot leave it torn.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl State {
    fn trusted(&self, now: Instant) -> bool {
        self.trusted_until.is_some_and(|until| now < until)
    }
}

/// Listens for key changes on `url` for as long as `cache` lives, reconnecting after a loss.
pub(crate) async fn listen(cache: Weak<KeyCache>, url: SecretString) {
    while cache.strong_count() > 0 {
        if let Err(e) = listen_once(&cache, &url).await {
            tracing::warn!(error = %e, "the API key cache stopped listening; keys are read from the database until it listens again");
        }
        if let Some(cache) = cache.upgrade() {
            cache.deaf();
        }
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}

/// One listening connection, until it fails, a check goes unanswered or `cache` is dropped.
async fn listen_once(
    cache: &Weak<KeyCache>,
    url: &SecretString,
) -> Result<(), tokio_postgres::Error> {
    let mut config: tokio_postgres::Config = url.expose_secret().parse()?;
    config.application_name(APPLICATION_NAME);
    let (client, mut connection) = config.connect(NoTls).await?;
    let heard = cache.clone();
    let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
    let driver = tokio::spawn(async move {
        while let Some(Ok(message)) = messages.next().await {
            let (AsyncMessage::Notification(n), Some(cache)) = (message, heard.upgrade()) else {
                continue;
            };
            match parse_hash(n.payload()) {
                Some(hash) => cache.forget(&hash),
                None => cache.forget_all(),
            }
        }
        // The connection is gone: stop trusting at once, not at the next check.
        if let Some(cache) = heard.upgrade() {
            cache.deaf();
        }
    });
    let outcome = async {
        let sent = Instant::now();
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        let Some(listening) = cache.upgrade() else {
            return Ok(());
        };
        listening.listening(sent);
        drop(listening);
        loop {
            tokio::time::sleep(CHECK_EVERY).await;
            let sent = Instant::now();
            let answer = tokio::time::timeout(CHECK_TIMEOUT, client.simple_query("")).await;
            let Some(cache) = cache.upgrade() else {
                return Ok(());
            };
            let Ok(answer) = answer else {
                tracing::warn!("the API key cache's listening connection did not answer a check");
                return Ok(());
            };
            answer?;
            cache.checked(sent);
        }
    }
    .await;
    driver.abort();
    outcome
}

/// The hash a notification names (`encode(value_hash, 'hex')`); `None` for anything else,
/// `all` included.
fn parse_hash(payload: &str) -> Option<KeyHash> {
    let mut bytes = [0u8; 32];
    let decoded = base16ct::lower::decode(payload, &mut bytes).ok()?;
    (decoded.len() == bytes.len()).then(|| KeyHash::from_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use holdfast_domain::api_key::{KeyName, KeyStatus, KeyValue};
    use holdfast_domain::ids::{KeyId, PlatformId, UserId};
    use holdfast_domain::mode::{KeyType, Mode};
    use time::macros::datetime;

    fn key(n: u8) -> ApiKey {
        let value = KeyValue::generate(KeyType::Private, Mode::Test, &format!("{n:0>26}")).unwrap();
        ApiKey {
            id: KeyId::from_suffix(&n.to_string()),
            platform_id: PlatformId::from_suffix("1"),
            name: KeyName::parse("Backend").unwrap(),
            key_type: KeyType::Private,
            mode: Mode::Test,
            status: KeyStatus::Active,
            hash: value.hash(),
            last4: value.last4(),
            created_by: UserId::from_suffix("1"),
            created_on: datetime!(2026-11-25 10:00 UTC),
            last_used_on: None,
        }
    }

    fn listening() -> KeyCache {
        let cache = KeyCache::default();
        cache.listening(Instant::now());
        cache
    }

    /// Fills the cache with `key` the way a store does: a miss, then the row read.
    fn read(cache: &KeyCache, key: &ApiKey) {
        let miss = cache.get(&key.hash).unwrap_err();
        cache.fill(miss, key);
    }

    #[test]
    fn a_read_key_is_served_until_a_change_to_it_is_heard() {
        let cache = listening();
        let (a, b) = (key(1), key(2));
        read(&cache, &a);
        read(&cache, &b);
        assert_eq!(cache.get(&a.hash).unwrap(), a);
        cache.forget(&a.hash);
        assert!(cache.get(&a.hash).is_err());
        assert_eq!(
            cache.get(&b.hash).unwrap(),
            b,
            "only the key named is forgotten"
        );
        cache.forget_all();
        assert!(cache.get(&b.hash).is_err());
    }

    /// The race the epoch closes: a row read before a change, kept after the change was heard,
    /// would be served stale until the next change.
    #[test]
    fn a_read_that_raced_with_a_change_is_not_kept() {
        let cache = listening();
        let a = key(1);
        let miss = cache.get(&a.hash).unwrap_err();
        cache.forget(&a.hash);
        cache.fill(miss, &a);
        assert!(cache.get(&a.hash).is_err());
        let miss = cache.get(&a.hash).unwrap_err();
        cache.forget(&key(2).hash);
        cache.fill(miss, &a);
        assert!(
            cache.get(&a.hash).is_err(),
            "any change heard meanwhile, whichever key's"
        );
    }

    #[test]
    fn nothing_is_served_or_kept_while_no_connection_listens() {
        let cache = KeyCache::default();
        let a = key(1);
        read(&cache, &a);
        assert!(cache.get(&a.hash).is_err(), "never listened");

        let cache = listening();
        read(&cache, &a);
        let miss = cache.get(&key(2).hash).unwrap_err();
        cache.deaf();
        assert!(
            cache.get(&a.hash).is_err(),
            "a lost connection empties the cache"
        );
        cache.listening(Instant::now());
        cache.fill(miss, &key(2));
        assert!(
            cache.get(&key(2).hash).is_err(),
            "a miss from before the connection was lost is not kept once another listens"
        );
    }

    #[test]
    fn trust_lapses_when_checks_go_unanswered() {
        let cache = listening();
        let a = key(1);
        read(&cache, &a);
        cache.lock().trusted_until = Some(Instant::now());
        assert!(cache.get(&a.hash).is_err());
        cache.checked(Instant::now());
        assert_eq!(
            cache.get(&a.hash).unwrap(),
            a,
            "an answered check restores trust"
        );
        cache.deaf();
        cache.checked(Instant::now());
        assert!(
            !cache.is_trusted(),
            "a check does not revive a lost connection"
        );
        read(&cache, &a);
        assert!(
            cache.get(&a.hash).is_err(),
            "nor is anything kept meanwhile"
        );
    }

    #[test]
    fn this_processs_writes_show_at_once() {
        let cache = listening();
        let (a, b) = (key(1), key(2));
        read(&cache, &a);
        read(&cache, &b);
        let at = datetime!(2026-11-25 11:00 UTC);
        cache.touched(&a.hash, at);
        assert_eq!(cache.get(&a.hash).unwrap().last_used_on, Some(at));
        assert_eq!(cache.get(&b.hash).unwrap().last_used_on, None);
        cache.forget(&a.hash);
        assert!(cache.get(&a.hash).is_err());
        assert!(cache.get(&b.hash).is_ok());
    }

    #[test]
    fn a_full_cache_starts_again() {
        let cache = listening();
        let a = key(1);
        read(&cache, &a);
        cache.lock().entries.extend((0..CAPACITY).map(|n| {
            let mut other = a.clone();
            other.hash = KeyHash::of(&n.to_string());
            (other.hash.clone(), other)
        }));
        read(&cache, &key(2));
        let state = cache.lock();
        assert_eq!(state.entries.len(), 1);
    }

    #[test]
    fn notifications_name_a_hash_in_hex_or_nothing() {
        let a = key(1);
        let hex = base16ct::lower::encode_string(a.hash.as_bytes());
        assert_eq!(parse_hash(&hex), Some(a.hash));
        for other in ["all", "", &hex[1..], &format!("{}zz", &hex[2..])] {
            assert_eq!(parse_hash(other), None, "{other}");
        }
    }
}
