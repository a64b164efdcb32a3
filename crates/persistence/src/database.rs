//! Opening a database from its URL: pool, connection settings, migrations, health.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::wake_ups::WakeUps;
use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_migrations::{EmbeddedMigrations, embed_migrations};
use holdfast_domain::ports::{
    AchStore, AuditLog, BoardingStore, ClientSessionStore, ComplianceStore, CredentialStore,
    EmailOutbox, EventLog, IdempotencyStore, KeyStore, LedgerStore, LoanStore, MerchantStore,
    NoticeStore, NotificationQueue, PayoutStore, PlatformStore, RoutingStore, StoreError,
    TokenStore, TransactionStore, UserStore, WebhookStore,
};
use secrecy::{ExposeSecret, SecretString};

use crate::conn::{Pools, SqliteConn};
use crate::local_pools::{PgPools, PinnedWork};
use crate::stores::SqlStore;

pub(crate) const PG_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// Held while migrating, so replicas starting together never migrate twice at once.
const MIGRATION_LOCK_ID: i64 = 0x486f_6c64_6661_7374; // "Holdfast"

/// Where the data lives, parsed from `HOLDFAST_DATABASE_URL`.
#[derive(Debug, Clone)]
pub enum DatabaseUrl {
    /// `postgres://…` or `postgresql://…`; may carry a password, so it is kept secret.
    Postgres(SecretString),
    /// `sqlite://PATH` or `sqlite:PATH`: a file, created with its folder when missing.
    Sqlite(PathBuf),
}

#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    #[error(
        "unsupported database URL (expected postgres://…, postgresql://… or sqlite://PATH): {0}"
    )]
    UnsupportedUrl(String),
    #[error("cannot prepare the SQLite file {path}: {source}")]
    SqliteFile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot build the connection pool: {0}")]
    Pool(String),
    #[error("cannot connect to the database: {0}")]
    Connect(String),
    #[error("migrations failed: {0}")]
    Migrate(String),
}

impl DatabaseUrl {
    pub fn parse(raw: &str) -> Result<Self, DatabaseError> {
        if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
            return Ok(Self::Postgres(SecretString::from(raw.to_owned())));
        }
        let path = raw
            .strip_prefix("sqlite://")
            .or_else(|| raw.strip_prefix("sqlite:"))
            .filter(|p| !p.is_empty())
            .ok_or_else(|| {
                // Never echo a URL that might hold a password; the scheme is enough.
                DatabaseError::UnsupportedUrl(raw.split(':').next().unwrap_or_default().to_owned())
            })?;
        Ok(Self::Sqlite(PathBuf::from(path)))
    }

    /// A form safe to log: the backend and, for SQLite, the file.
    pub fn redacted(&self) -> String {
        match self {
            Self::Postgres(_) => "postgres://…".to_owned(),
            Self::Sqlite(path) => format!("sqlite://{}", path.display()),
        }
    }
}

/// Pool sizing and timeouts.
#[derive(Debug, Clone, Copy)]
pub struct PoolOptions {
    /// PostgreSQL connections of the pool the multi-threaded runtime shares (background loops,
    /// commands), and, shared out, of the threads that run runtimes of their own
    /// (`shared_among`). SQLite always uses one: it has a single writer, and one connection per
    /// process avoids lock-upgrade deadlocks between transactions.
    pub max_size: usize,
    /// How many threads with single-threaded runtimes of their own (HTTP workers, delivery
    /// loops) share out `max_size`, each in a pool of its own (`local_pools`).
    pub pinned_threads: usize,
    pub wait_timeout: Duration,
    /// How long the completion of a payment the processor has answered waits for a connection
    /// and, on SQLite, for another process's write lock. New work fails after `wait_timeout`
    /// under overload, before any processor is called; a completion waits its turn instead.
    pub completion_wait: Duration,
}

impl PoolOptions {
    /// These options for a process whose `threads` HTTP workers and delivery loops each run a
    /// runtime of their own.
    #[must_use]
    pub fn shared_among(self, threads: usize) -> Self {
        Self {
            pinned_threads: threads.max(1),
            ..self
        }
    }

    /// Connections of each pinned thread's pool: an equal share of `max_size`, at least two
    /// once shared, so a request that borrows a second connection is not stuck behind its own
    /// first.
    fn pinned_size(&self) -> usize {
        match self.pinned_threads {
            0 | 1 => self.max_size.max(1),
            threads => self.max_size.div_ceil(threads).max(2),
        }
    }
}

impl Default for PoolOptions {
    fn default() -> Self {
        Self {
            max_size: 8,
            pinned_threads: 1,
            wait_timeout: Duration::from_secs(5),
            completion_wait: Duration::from_secs(20),
        }
    }
}

/// An open database: one store object implementing every store port.
#[derive(Debug, Clone)]
pub struct Database {
    store: SqlStore,
    /// Where processes announce and hear of notifications written for the claim; `None` on
    /// SQLite, whose delivering processes poll.
    wake_ups: Option<WakeUps>,
}

/// The store ports as trait objects, for wiring services without naming the backend.
#[derive(Clone)]
pub struct Stores {
    pub platforms: Arc<dyn PlatformStore>,
    pub users: Arc<dyn UserStore>,
    pub keys: Arc<dyn KeyStore>,
    pub merchants: Arc<dyn MerchantStore>,
    pub routing: Arc<dyn RoutingStore>,
    pub notices: Arc<dyn NoticeStore>,
    pub transactions: Arc<dyn TransactionStore>,
    pub events: Arc<dyn EventLog>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    pub tokens: Arc<dyn TokenStore>,
    pub client_sessions: Arc<dyn ClientSessionStore>,
    pub webhooks: Arc<dyn WebhookStore>,
    pub notifications: Arc<dyn NotificationQueue>,
    pub emails: Arc<dyn EmailOutbox>,
    pub credentials: Arc<dyn CredentialStore>,
    pub audit: Arc<dyn AuditLog>,
    pub boarding: Arc<dyn BoardingStore>,
    pub compliance: Arc<dyn ComplianceStore>,
    pub ledger: Arc<dyn LedgerStore>,
    pub payouts: Arc<dyn PayoutStore>,
    pub ach: Arc<dyn AchStore>,
    pub loans: Arc<dyn LoanStore>,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Stores")
    }
}

impl Database {
    /// Opens a pool. Connections are made lazily; call `ping` to check reachability.
    pub fn open(url: &DatabaseUrl, options: PoolOptions) -> Result<Self, DatabaseError> {
        match url {
            DatabaseUrl::Postgres(secret) => {
                // `Fast` recycling trusts a returned connection unless a query on it failed at the
                // connection level; the default (`Verified`) costs a `SELECT 1` round trip on every
                // checkout, nearly doubling the round trips of a payment. A connection that died
                // while idle fails one query, is marked broken and is replaced.
                let url = secret.expose_secret().to_owned();
                let pool = move |max_size: usize, work: PinnedWork| {
                    let mut config = ManagerConfig::default();
                    config.recycling_method = RecyclingMethod::Fast;
                    if work == PinnedWork::Deliveries {
                        config.custom_setup =
                            Box::new(|url| Box::pin(establish_for_deliveries(url.to_owned())));
                    }
                    let manager =
                        AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                            url.clone(),
                            config,
                        );
                    Pool::builder(manager)
                        .max_size(max_size)
                        .wait_timeout(Some(options.wait_timeout))
                        .create_timeout(Some(options.wait_timeout))
                        .runtime(deadpool_runtime())
                        .build()
                };
                let shared = pool(options.max_size, PinnedWork::Requests)
                    .map_err(|e| DatabaseError::Pool(e.to_string()))?;
                let pinned_size = options.pinned_size();
                #[expect(
                    clippy::expect_used,
                    reason = "the same settings just built the shared pool"
                )]
                let pools = PgPools::new(shared, move |work| {
                    pool(pinned_size, work).expect("the same settings built the shared pool")
                });
                let wake_ups = WakeUps::new(secret.expose_secret().to_owned());
                Ok(Self::over(Pools::Pg(pools), options, Some(wake_ups)))
            }
            DatabaseUrl::Sqlite(path) => {
                prepare_sqlite_file(path)?;
                let mut config = ManagerConfig::default();
                config.custom_setup = Box::new(|url| Box::pin(establish_sqlite(url.to_owned())));
                let manager = AsyncDieselConnectionManager::<SqliteConn>::new_with_config(
                    path.to_string_lossy(),
                    config,
                );
                let pool = Pool::builder(manager)
                    .max_size(1)
                    .wait_timeout(Some(options.wait_timeout))
                    .runtime(deadpool_runtime())
                    .build()
                    .map_err(|e| DatabaseError::Pool(e.to_string()))?;
                Ok(Self::over(Pools::Sqlite(pool), options, None))
            }
        }
    }

    fn over(pools: Pools, options: PoolOptions, wake_ups: Option<WakeUps>) -> Self {
        Self {
            store: SqlStore::new(pools, options.completion_wait),
            wake_ups,
        }
    }

    /// The notifications written through this database are leased at insert and handed to
    /// this process's delivery engine (`DeliveryHints`).
    #[must_use]
    pub fn delivering(self, deliveries: Arc<dyn holdfast_domain::ports::DeliveryHints>) -> Self {
        Self {
            store: self.store.delivering(deliveries),
            ..self
        }
    }

    /// The same database for a delivery loop's own thread: the pool its connections come from
    /// there is made for the few statements it runs over and over (`local_pools`).
    #[must_use]
    pub fn for_deliveries(self) -> Self {
        Self {
            store: self.store.for_deliveries(),
            ..self
        }
    }

    /// Email bodies written through this database are sealed by `sealer`, and opened by it when
    /// leased for sending (`email_bodies`): every process that queues or sends emails on one
    /// database needs the same vault keys.
    #[must_use]
    pub fn sealing_emails(self, sealer: Arc<dyn holdfast_domain::ports::CardVault>) -> Self {
        Self {
            store: self.store.sealing_emails(sealer),
            ..self
        }
    }

    /// The notifications written through this database for the claim, where this process has
    /// no deliverers of its own to poke, are announced to the processes that listen
    /// (`WakeUps::listen`), at most once per `spacing` (their poll), on PostgreSQL. Starts the
    /// announcer on the current tokio runtime.
    #[must_use]
    pub fn announcing(self, spacing: Duration) -> Self {
        let Some(wake_ups) = &self.wake_ups else {
            return self;
        };
        let announcer = wake_ups.announcer(spacing);
        Self {
            store: self.store.announcing(announcer),
            ..self
        }
    }

    /// Where a delivering process listens for the notifications others write for the claim;
    /// `None` on SQLite.
    pub fn wake_ups(&self) -> Option<WakeUps> {
        self.wake_ups.clone()
    }

    /// The setting `name` as the next statement on a pooled connection would see it; `None` on
    /// SQLite.
    #[cfg(feature = "test-support")]
    pub async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        self.store.setting(name).await
    }

    /// How a pooled connection runs the statement it prepared whose text starts with `start`
    /// (`testing::PreparedPlan`); `None` on SQLite or when it has prepared none such.
    #[cfg(feature = "test-support")]
    pub async fn prepared_plan(
        &self,
        start: &str,
    ) -> Result<Option<crate::testing::PreparedPlan>, StoreError> {
        self.store.prepared_plan(start).await
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        self.store.ping().await
    }

    /// What waits to go out: notifications and emails (for the metrics' gauges).
    pub async fn backlogs(&self) -> Result<crate::Backlogs, StoreError> {
        self.store.backlogs().await
    }

    /// The pools' connections in use, idle and waited for.
    pub fn pool_usage(&self) -> crate::PoolUsage {
        self.store.pool_usage()
    }

    pub fn stores(&self) -> Stores {
        let store = &self.store;
        Stores {
            platforms: Arc::new(store.clone()),
            users: Arc::new(store.clone()),
            keys: Arc::new(store.clone()),
            merchants: Arc::new(store.clone()),
            routing: Arc::new(store.clone()),
            notices: Arc::new(store.clone()),
            transactions: Arc::new(store.clone()),
            events: Arc::new(store.clone()),
            idempotency: Arc::new(store.clone()),
            tokens: Arc::new(store.clone()),
            client_sessions: Arc::new(store.clone()),
            webhooks: Arc::new(store.clone()),
            notifications: Arc::new(store.clone()),
            emails: Arc::new(store.clone()),
            credentials: Arc::new(store.clone()),
            audit: Arc::new(store.clone()),
            boarding: Arc::new(store.clone()),
            compliance: Arc::new(store.clone()),
            ledger: Arc::new(store.clone()),
            payouts: Arc::new(store.clone()),
            ach: Arc::new(store.clone()),
            loans: Arc::new(store.clone()),
        }
    }
}

mod connect;
mod migrations;

use connect::{deadpool_runtime, establish_for_deliveries, establish_sqlite, prepare_sqlite_file};

#[cfg(test)]
mod tests;
