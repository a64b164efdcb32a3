//! API keys found by hash, kept in the process so that authenticating a request costs no
//! indexed read, on PostgreSQL only. Spec 3.1 says a deactivated key answers 401 at once, on
//! every replica: a cached key is served only once this process has provably heard every change
//! to `api_keys` committed before the request arrived.
//!
//! - A trigger (migration `key_changes`) sends `NOTIFY holdfast_api_keys` with the key's hash
//!   whenever a key's activity, type, mode or owner changes or the key is deleted; PostgreSQL
//!   sends it when that transaction commits. [`listen`] holds one connection `LISTEN`ing and
//!   forgets each key named.
//! - The proof is a check: an empty query on that connection. PostgreSQL signals a listening
//!   backend before the committing client is told of the commit, and the backend sends what it
//!   was signalled before the answer to its next query; so once a check *sent after the request
//!   arrived* is answered, every change the request's sender could have seen committed has been
//!   heard. A request for a cached key waits for such a check ([`KeyCache::get`]): one round
//!   trip on the listening connection, shared by every request waiting at the time, instead of
//!   a pooled connection's indexed read. A change committed while the request is in flight may
//!   or may not be seen, exactly as with a read.
//! - A lost connection, or a check not answered within [`CHECK_TIMEOUT`], empties the cache
//!   until a new connection listens; meanwhile every request reads its key.
//! - A read that raced with a change is not cached: entries are filled only when no change was
//!   heard between the miss and the fill (`Miss::epoch`).
//! - Only keys that exist are cached, so a guess never waits for a check and still costs a read
//!   (and the per-address limit). SQLite has no notifications: there, every request reads its
//!   key.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use holdfast_domain::api_key::{ApiKey, KeyHash};
use secrecy::{ExposeSecret, SecretString};
use time::OffsetDateTime;
use tokio::sync::{Notify, watch};
use tokio_postgres::{AsyncMessage, NoTls};

/// The channel the `api_keys` trigger notifies.
const CHANNEL: &str = "holdfast_api_keys";
/// The listening connection's name in `pg_stat_activity`.
const APPLICATION_NAME: &str = "holdfast key cache";
/// How often an idle listening connection is checked, so that a lost one is noticed before a
/// request waits on it.
const CHECK_EVERY: Duration = Duration::from_millis(500);
/// A check not answered within this drops the connection, and a request waits no longer for
/// one before reading its key.
const CHECK_TIMEOUT: Duration = Duration::from_millis(200);
/// Between attempts to listen again.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);
/// Entries kept at most; the cache is emptied when full. Only keys that exist are cached, so
/// this bounds memory, not an attacker.
const CAPACITY: usize = 10_000;

/// The keys this process has read, and what its listening connection has proved.
#[derive(Debug)]
pub(crate) struct KeyCache {
    state: Mutex<State>,
    /// Wakes the listener to send a check: a request is waiting for one.
    wanted: Notify,
    /// The checks answered, for requests to wait on.
    heard: watch::Sender<Heard>,
}

impl Default for KeyCache {
    fn default() -> Self {
        Self {
            state: Mutex::default(),
            wanted: Notify::new(),
            heard: watch::Sender::new(Heard::default()),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// The listening connection's number while one listens: bumped whenever one starts or is
    /// lost, so a check answered on a lost connection vouches for nothing.
    listening: Option<u64>,
    connections: u64,
    /// Checks sent so far, over every connection; the next one sent is numbered one more.
    checks_sent: u64,
    /// Bumped whenever a change is heard or listening starts or stops.
    epoch: u64,
    entries: HashMap<KeyHash, ApiKey>,
}

/// What the listening connection numbered `connection` has proved: every change committed
/// before check number `answered` was sent has been heard.
#[derive(Debug, Default, Clone, Copy)]
struct Heard {
    connection: u64,
    answered: u64,
}

/// A miss, to be filled with what the store reads if nothing changed meanwhile.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Miss {
    epoch: Option<u64>,
}

impl Miss {
    const UNTRUSTED: Self = Self { epoch: None };
}

impl KeyCache {
    /// The key stored under `hash`, once every change committed before this call is known to
    /// have been heard; otherwise a [`Miss`] to fill. Waits for one check of the listening
    /// connection when the key is cached, never when it is not.
    pub(crate) async fn get(&self, hash: &KeyHash) -> Result<ApiKey, Miss> {
        let (connection, needed) = {
            let state = self.lock();
            let Some(connection) = state.listening else {
                return Err(Miss::UNTRUSTED);
            };
            if !state.entries.contains_key(hash) {
                return Err(state.miss());
            }
            (connection, state.checks_sent + 1)
        };
        self.wanted.notify_one();
        let mut heard = self.heard.subscribe();
        let proved = heard.wait_for(|h| h.connection != connection || h.answered >= needed);
        match tokio::time::timeout(CHECK_TIMEOUT, proved).await {
            Ok(Ok(h)) if h.connection == connection => {}
            _ => return Err(Miss::UNTRUSTED),
        }
        let state = self.lock();
        if state.listening != Some(connection) {
            return Err(Miss::UNTRUSTED);
        }
        state.entries.get(hash).cloned().ok_or_else(|| state.miss())
    }

    /// Keeps `key`, read after `miss`, unless a change was heard since or listening stopped.
    pub(crate) fn fill(&self, miss: Miss, key: &ApiKey) {
        let mut state = self.lock();
        if miss.epoch != Some(state.epoch) || state.listening.is_none() {
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

    /// Whether a connection listens now (for tests of the listener).
    #[cfg(any(test, feature = "test-support"))]
    pub(crate) fn is_listening(&self) -> bool {
        self.lock().listening.is_some()
    }

    /// Forgets every key but keeps listening: a change was heard that names no key (a
    /// TRUNCATE), so no entry is known to be current.
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

    /// A connection listens: changes committed from now on will be heard. Returns its number.
    fn listening(&self) -> u64 {
        let connection = {
            let mut state = self.lock();
            state.connections += 1;
            state.epoch += 1;
            state.entries.clear();
            state.listening = Some(state.connections);
            state.connections
        };
        self.heard_of(connection);
        connection
    }

    /// A check is about to be sent: its number.
    fn check_sent(&self) -> u64 {
        let mut state = self.lock();
        state.checks_sent += 1;
        state.checks_sent
    }

    /// Check number `check`, sent on connection `connection`, was answered: every change
    /// committed before it was sent has been heard.
    fn checked(&self, connection: u64, check: u64) {
        self.heard.send_if_modified(|h| {
            let news = h.connection == connection && check > h.answered;
            if news {
                h.answered = check;
            }
            news
        });
    }

    /// The listening connection is gone: changes may go unheard, so nothing cached is kept and
    /// nobody waits for its checks.
    fn deaf(&self) {
        let connection = {
            let mut state = self.lock();
            state.connections += 1;
            state.epoch += 1;
            state.entries.clear();
            state.listening = None;
            state.connections
        };
        self.heard_of(connection);
    }

    /// Tells waiters that the connection numbered `connection` started or was lost. Numbers
    /// only grow: a loss told late must not overwrite the start of the next connection.
    fn heard_of(&self, connection: u64) {
        self.heard.send_if_modified(|h| {
            let newer = connection > h.connection;
            if newer {
                h.connection = connection;
                h.answered = 0;
            }
            newer
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is consistent after every statement: a panic elsewhere cannot leave it torn.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl State {
    fn miss(&self) -> Miss {
        Miss {
            epoch: Some(self.epoch),
        }
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
    // Notifications are acted on here, before the connection reads on to the answer of a
    // check that followed them: that order is what a check proves.
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
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        let Some(listening) = cache.upgrade() else {
            return Ok(());
        };
        let connection = listening.listening();
        drop(listening);
        loop {
            let Some(cache) = cache.upgrade() else {
                return Ok(());
            };
            // Whether a request wants it or the connection has been idle for a while.
            let _ = tokio::time::timeout(CHECK_EVERY, cache.wanted.notified()).await;
            let check = cache.check_sent();
            let answer = tokio::time::timeout(CHECK_TIMEOUT, client.simple_query("")).await;
            let Ok(answer) = answer else {
                tracing::warn!("the API key cache's listening connection did not answer a check");
                return Ok(());
            };
            answer?;
            cache.checked(connection, check);
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
    use std::sync::Arc;

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

    /// A cache whose connection listens and answers every check at once, as [`listen_once`]
    /// does with a connection that has nothing to tell.
    fn answering() -> Arc<KeyCache> {
        let cache = Arc::new(KeyCache::default());
        let connection = cache.listening();
        let checker = Arc::downgrade(&cache);
        tokio::spawn(async move {
            while let Some(cache) = checker.upgrade() {
                cache.wanted.notified().await;
                let check = cache.check_sent();
                cache.checked(connection, check);
            }
        });
        cache
    }

    /// Fills the cache with `key` the way a store does: a miss, then the row read.
    async fn read(cache: &KeyCache, key: &ApiKey) {
        let miss = cache.get(&key.hash).await.unwrap_err();
        cache.fill(miss, key);
    }

    /// A request for `key`, running on its own.
    fn spawn_get(
        cache: &Arc<KeyCache>,
        key: &ApiKey,
    ) -> tokio::task::JoinHandle<Result<ApiKey, Miss>> {
        let (cache, hash) = (cache.clone(), key.hash.clone());
        tokio::spawn(async move { cache.get(&hash).await })
    }

    /// Whether `get` has finished after every other task has had its turn.
    async fn finished<T>(get: &mut tokio::task::JoinHandle<T>) -> bool {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        get.is_finished()
    }

    #[tokio::test]
    async fn a_read_key_is_served_until_a_change_to_it_is_heard() {
        let cache = answering();
        let (a, b) = (key(1), key(2));
        read(&cache, &a).await;
        read(&cache, &b).await;
        assert_eq!(cache.get(&a.hash).await.unwrap(), a);
        cache.forget(&a.hash);
        assert!(cache.get(&a.hash).await.is_err());
        assert_eq!(
            cache.get(&b.hash).await.unwrap(),
            b,
            "only the key named is forgotten"
        );
        cache.forget_all();
        assert!(cache.get(&b.hash).await.is_err());
    }

    /// The rule of spec 3.1 the cache must keep: a change committed before a request arrived
    /// is heard before the request is answered. A check already on its way when the request
    /// arrived may have been sent before the change committed, so it proves nothing.
    #[tokio::test]
    async fn a_hit_waits_for_a_check_sent_after_it_arrived() {
        let cache = Arc::new(KeyCache::default());
        let connection = cache.listening();
        let a = key(1);
        read(&cache, &a).await;
        for change_heard in [false, true] {
            let in_flight = cache.check_sent();
            let mut get = spawn_get(&cache, &a);
            assert!(!finished(&mut get).await, "a hit waits for a check");
            cache.checked(connection, in_flight);
            assert!(
                !finished(&mut get).await,
                "a check sent before the request arrived vouches for nothing"
            );
            let after = cache.check_sent();
            if change_heard {
                cache.forget(&a.hash);
            }
            cache.checked(connection, after);
            assert_eq!(get.await.unwrap().is_ok(), !change_heard);
        }
    }

    #[tokio::test]
    async fn a_miss_never_waits() {
        let cache = Arc::new(KeyCache::default());
        cache.listening();
        let a = key(1);
        let mut get = spawn_get(&cache, &a);
        assert!(
            finished(&mut get).await,
            "a key not cached is read without a check"
        );
    }

    #[tokio::test]
    async fn a_hit_gives_up_when_the_connection_is_lost_or_silent() {
        let cache = Arc::new(KeyCache::default());
        let connection = cache.listening();
        let a = key(1);
        read(&cache, &a).await;
        let mut get = spawn_get(&cache, &a);
        assert!(!finished(&mut get).await);
        let check = cache.check_sent();
        cache.deaf();
        cache.checked(connection, check);
        assert!(get.await.unwrap().is_err(), "the connection was lost");

        let lost = cache.listening();
        let check = cache.check_sent();
        cache.deaf();
        cache.listening();
        read(&cache, &a).await;
        let get = spawn_get(&cache, &a);
        cache.checked(lost, check + 1);
        let started = std::time::Instant::now();
        assert!(
            get.await.unwrap().is_err(),
            "a check answered on a lost connection vouches for nothing"
        );
        assert!(
            started.elapsed() >= CHECK_TIMEOUT / 2,
            "given up when no check was answered in time"
        );
    }

    /// The race the epoch closes: a row read before a change, kept after the change was heard,
    /// would be served stale until the next change.
    #[tokio::test]
    async fn a_read_that_raced_with_a_change_is_not_kept() {
        let cache = answering();
        let a = key(1);
        let miss = cache.get(&a.hash).await.unwrap_err();
        cache.forget(&a.hash);
        cache.fill(miss, &a);
        assert!(cache.get(&a.hash).await.is_err());
        let miss = cache.get(&a.hash).await.unwrap_err();
        cache.forget(&key(2).hash);
        cache.fill(miss, &a);
        assert!(
            cache.get(&a.hash).await.is_err(),
            "any change heard meanwhile, whichever key's"
        );
    }

    #[tokio::test]
    async fn nothing_is_served_or_kept_while_no_connection_listens() {
        let cache = KeyCache::default();
        let a = key(1);
        read(&cache, &a).await;
        assert!(cache.get(&a.hash).await.is_err(), "never listened");

        let cache = answering();
        read(&cache, &a).await;
        let miss = cache.get(&key(2).hash).await.unwrap_err();
        cache.deaf();
        assert!(
            cache.get(&a.hash).await.is_err(),
            "a lost connection empties the cache"
        );
        cache.listening();
        cache.fill(miss, &key(2));
        assert!(
            cache.lock().entries.is_empty(),
            "a miss from before the connection was lost is not kept once another listens"
        );
    }

    #[tokio::test]
    async fn this_processs_writes_show_at_once() {
        let cache = answering();
        let (a, b) = (key(1), key(2));
        read(&cache, &a).await;
        read(&cache, &b).await;
        let at = datetime!(2026-11-25 11:00 UTC);
        cache.touched(&a.hash, at);
        assert_eq!(cache.get(&a.hash).await.unwrap().last_used_on, Some(at));
        assert_eq!(cache.get(&b.hash).await.unwrap().last_used_on, None);
        cache.forget(&a.hash);
        assert!(cache.get(&a.hash).await.is_err());
        assert!(cache.get(&b.hash).await.is_ok());
    }

    #[tokio::test]
    async fn a_full_cache_starts_again() {
        let cache = answering();
        let a = key(1);
        read(&cache, &a).await;
        cache.lock().entries.extend((0..CAPACITY).map(|n| {
            let mut other = a.clone();
            other.hash = KeyHash::of(&n.to_string());
            (other.hash.clone(), other)
        }));
        read(&cache, &key(2)).await;
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
