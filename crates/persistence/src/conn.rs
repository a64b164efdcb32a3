//! A connection to either backend, and running one query on it.
//!
//! Every query is written once with diesel's DSL over the one schema, as an ordinary expression
//! that rustfmt formats and the compiler checks; `Conn` runs it on the backend the store was
//! opened on. Its methods ask that the query be runnable on *both* backends, so a query one of
//! them cannot run fails to compile where it is written, not at run time on the other backend.
//! Where the SQL truly differs (a lock, a row-locking clause, the hot completion), the caller
//! matches on the variant.

use std::sync::Arc;
use std::time::Duration;

use crate::wake_ups::Announcer;
use deadpool::managed::Timeouts;
use diesel::QueryResult;
use diesel::query_dsl::methods::LimitDsl;
use diesel::sqlite::SqliteConnection;
use diesel_async::methods::{ExecuteDsl, LoadQuery};
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, TransactionManager};
use futures_util::future::Either;
use holdfast_domain::ports::{CardVault, Claimed, DeliveryHints, HandOff, StoreError};

use crate::error::unexpected;

pub use lock::Lock;

mod lock;

pub type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

/// The pool of whichever backend the database is.
#[derive(Clone)]
pub enum Pools {
    Pg(crate::local_pools::PgPools),
    Sqlite(Pool<SqliteConn>),
}

impl Pools {
    /// A connection for `work`, waiting up to `wait` for one (the pool's own timeout when
    /// `None`).
    pub async fn get(
        &self,
        work: crate::local_pools::PinnedWork,
        wait: Option<Duration>,
    ) -> Result<Conn, StoreError> {
        fn within(pool_timeouts: Timeouts, wait: Option<Duration>) -> Timeouts {
            Timeouts {
                wait: wait.or(pool_timeouts.wait),
                ..pool_timeouts
            }
        }
        match self {
            Self::Pg(pools) => {
                let pool = pools.for_this_thread(work);
                pool.timeout_get(&within(pool.timeouts(), wait))
                    .await
                    .map(|c| Conn::over(Db::Pg(c)))
            }
            Self::Sqlite(pool) => pool
                .timeout_get(&within(pool.timeouts(), wait))
                .await
                .map(|c| Conn::over(Db::Sqlite(c))),
        }
        .map_err(unexpected)
    }

    /// Connections in use, idle and waited for, over all of the backend's pools.
    pub fn usage(&self) -> PoolUsage {
        let statuses = match self {
            Self::Pg(pools) => pools.statuses(),
            Self::Sqlite(pool) => vec![pool.status()],
        };
        statuses
            .iter()
            .fold(PoolUsage::default(), |sum, s| PoolUsage {
                used: sum.used.saturating_add(s.size.saturating_sub(s.available)),
                idle: sum.idle.saturating_add(s.available),
                waiting: sum.waiting.saturating_add(s.waiting),
                max: sum.max.saturating_add(s.max_size),
            })
    }

    /// How many connections are open, in all of the backend's pools.
    pub fn open(&self) -> usize {
        match self {
            Self::Pg(pools) => pools.open(),
            Self::Sqlite(pool) => pool.status().size,
        }
    }
}

/// The pools' connections at one instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Lent out.
    pub used: usize,
    /// Open and free.
    pub idle: usize,
    /// Requests waiting for one.
    pub waiting: usize,
    /// The most the pools may open.
    pub max: usize,
}

/// One pooled connection, returned to its pool when dropped. A connection dropped inside a
/// transaction (a panic, a cancelled request) is discarded by the pool, never reused half-done.
pub struct Conn {
    /// The backend's connection, for the few places whose SQL differs.
    pub db: Db,
    /// This process's delivery engine, when it takes the notifications this process writes
    /// (`DeliveryHints`).
    deliveries: Option<Arc<dyn DeliveryHints>>,
    /// Where this process announces the notifications it writes for the claim to other
    /// processes, when it delivers none itself (`wake_ups`).
    announcer: Option<Announcer>,
    /// What seals the email bodies written on this connection (`email_bodies`), if anything.
    email_sealer: Option<Arc<dyn CardVault>>,
    /// Hand-offs written in the open transaction: sent when it commits, given back otherwise.
    hand_offs: Vec<(Box<dyn HandOff>, Vec<Claimed>)>,
    /// Notifications were written for the claim in the open transaction.
    poke_at_commit: bool,
    /// Open transactions (an inner one is a savepoint).
    depth: u32,
}

/// Either backend's pooled connection.
#[expect(
    clippy::large_enum_variant,
    reason = "one lives per store call, on the stack; boxing would allocate on every checkout"
)]
pub enum Db {
    Pg(Object<AsyncPgConnection>),
    Sqlite(Object<SqliteConn>),
}

impl Conn {
    fn over(db: Db) -> Self {
        Self {
            db,
            deliveries: None,
            announcer: None,
            email_sealer: None,
            hand_offs: Vec::new(),
            poke_at_commit: false,
            depth: 0,
        }
    }

    /// This connection's writes of notifications are handed to `deliveries`' deliverers, or
    /// else announced through `announcer`.
    pub fn delivering(
        mut self,
        deliveries: Option<Arc<dyn DeliveryHints>>,
        announcer: Option<Announcer>,
    ) -> Self {
        self.deliveries = deliveries;
        self.announcer = announcer;
        self
    }

    /// Email bodies written on this connection are sealed by `sealer`.
    pub fn sealing_emails(mut self, sealer: Option<Arc<dyn CardVault>>) -> Self {
        self.email_sealer = sealer;
        self
    }

    /// `body` as the outbox keeps it for email `id`: sealed when this connection has a sealer.
    pub fn email_body_at_rest(&self, id: &str, body: &str) -> String {
        match &self.email_sealer {
            Some(sealer) => crate::email_bodies::seal(sealer.as_ref(), id, body),
            None => body.to_owned(),
        }
    }

    /// The sealer of this connection's email bodies, to open them.
    pub fn email_sealer(&self) -> Option<&dyn CardVault> {
        self.email_sealer.as_deref()
    }

    /// Room to hand off the notifications to `webhooks` written in the open transaction;
    /// `None` outside a transaction, where nothing could wait for the commit.
    pub fn reserve_hand_off(&self, webhooks: &[&str]) -> Option<Box<dyn HandOff>> {
        if self.depth == 0 {
            return None;
        }
        self.deliveries.as_ref()?.reserve(webhooks)
    }

    /// `rows`, leased at insert under `reservation`, go to the deliverers once the open
    /// transaction commits.
    pub fn hand_off_at_commit(&mut self, reservation: Box<dyn HandOff>, rows: Vec<Claimed>) {
        self.hand_offs.push((reservation, rows));
    }

    /// Notifications were written for the claim: wake this process's deliverers to claim them,
    /// or, where it has none, announce them to the processes that deliver (once the open
    /// transaction commits, so the claim can see them).
    pub fn poke_deliverers(&mut self) {
        match (&self.deliveries, &self.announcer) {
            (None, None) => {}
            _ if self.depth > 0 => self.poke_at_commit = true,
            (Some(deliveries), _) => deliveries.due(),
            (None, Some(announcer)) => announcer.announce(),
        }
    }
}

/// A query both backends can load rows of `U` from.
pub trait Loads<'q, U>:
    LoadQuery<'q, AsyncPgConnection, U> + LoadQuery<'q, SqliteConn, U> + 'q
{
}

impl<'q, U, Q> Loads<'q, U> for Q where
    Q: LoadQuery<'q, AsyncPgConnection, U> + LoadQuery<'q, SqliteConn, U> + 'q
{
}

/// A statement both backends can execute.
pub trait Executes<'q>: ExecuteDsl<AsyncPgConnection> + ExecuteDsl<SqliteConn> + 'q {}

impl<'q, Q> Executes<'q> for Q where Q: ExecuteDsl<AsyncPgConnection> + ExecuteDsl<SqliteConn> + 'q {}

/// An async closure over the connection whose future is `Send`: stable Rust cannot name an async
/// closure's future to bound it otherwise, and a transaction's body runs inside `Send` futures.
pub trait TransactionBody<'c, R>:
    AsyncFnOnce(&'c mut Conn) -> R + FnOnce(&'c mut Conn) -> <Self as TransactionBody<'c, R>>::Fut
{
    type Fut: Future<Output = R> + Send;
}

impl<'c, F, Fut, R> TransactionBody<'c, R> for F
where
    F: AsyncFnOnce(&'c mut Conn) -> R + FnOnce(&'c mut Conn) -> Fut,
    Fut: Future<Output = R> + Send,
{
    type Fut = Fut;
}

// The query methods return `impl Future + Send` rather than being `async fn`s: the futures of
// the two backends are `Send` by diesel-async's contract, and saying so here spares every
// caller's future from proving it again through the query's lifetimes (which rustc cannot).
impl Conn {
    /// All the rows `query` returns.
    pub fn load<'c, 'q, U, Q>(
        &'c mut self,
        query: Q,
    ) -> impl Future<Output = QueryResult<Vec<U>>> + Send + 'c
    where
        U: Send + 'static,
        Q: Loads<'q, U>,
        'q: 'c,
    {
        match &mut self.db {
            Db::Pg(conn) => Either::Left(query.load(&mut **conn)),
            Db::Sqlite(conn) => Either::Right(query.load(&mut **conn)),
        }
    }

    /// The first row `query` returns; `NotFound` when there is none.
    pub fn get_result<'c, 'q, U, Q>(
        &'c mut self,
        query: Q,
    ) -> impl Future<Output = QueryResult<U>> + Send + 'c
    where
        U: Send + 'static,
        Q: Loads<'q, U>,
        'q: 'c,
    {
        match &mut self.db {
            Db::Pg(conn) => Either::Left(query.get_result(&mut **conn)),
            Db::Sqlite(conn) => Either::Right(query.get_result(&mut **conn)),
        }
    }

    /// `query` limited to its first row; `NotFound` when there is none.
    pub fn first<'c, 'q, U, Q>(
        &'c mut self,
        query: Q,
    ) -> impl Future<Output = QueryResult<U>> + Send + 'c
    where
        U: Send + 'static,
        Q: LimitDsl,
        Q::Output: Loads<'q, U>,
        'q: 'c,
    {
        self.get_result(query.limit(1))
    }

    /// How many rows `statement` changed.
    pub fn execute<'c, 'q, Q>(
        &'c mut self,
        statement: Q,
    ) -> impl Future<Output = QueryResult<usize>> + Send + 'c
    where
        Q: Executes<'q>,
        'q: 'c,
    {
        match &mut self.db {
            Db::Pg(conn) => Either::Left(statement.execute(&mut **conn)),
            Db::Sqlite(conn) => Either::Right(statement.execute(&mut **conn)),
        }
    }

    /// Takes `lock` for the rest of the open transaction (nothing where the backend needs none).
    pub async fn lock(&mut self, lock: Lock) -> QueryResult<()> {
        match lock.statement(self) {
            Some(sql) => self.execute(diesel::sql_query(sql)).await.map(drop),
            None => Ok(()),
        }
    }

    /// Runs `body` in one SQL transaction: committed when it returns `Ok`, rolled back when it
    /// returns `Err` (whose error is kept over a failed rollback's).
    pub async fn transaction<R, E, F>(&mut self, body: F) -> Result<R, E>
    where
        F: for<'r> TransactionBody<'r, Result<R, E>> + Send,
        R: Send,
        E: From<diesel::result::Error> + Send,
    {
        self.begin().await?;
        self.depth = self.depth.saturating_add(1);
        let result = body(&mut *self).await;
        self.depth = self.depth.saturating_sub(1);
        // What was written for hand-off goes once the outermost transaction commits, and is
        // dropped otherwise, giving back its room. (Ids of a savepoint rolled back are handed
        // too: they are not found, and their room comes back then.)
        let (hand_offs, poke) = if self.depth == 0 {
            (
                std::mem::take(&mut self.hand_offs),
                std::mem::take(&mut self.poke_at_commit),
            )
        } else {
            (Vec::new(), false)
        };
        match result {
            Ok(value) => {
                self.commit().await?;
                for (reservation, ids) in hand_offs {
                    reservation.hand(ids);
                }
                if poke {
                    self.poke_deliverers();
                }
                Ok(value)
            }
            Err(error) => {
                // A failed rollback leaves the connection broken: the pool discards it.
                if let Err(rollback) = self.rollback().await {
                    tracing::warn!(error = %rollback, "rollback failed");
                }
                Err(error)
            }
        }
    }

    async fn begin(&mut self) -> QueryResult<()> {
        match &mut self.db {
            Db::Pg(conn) => begin_on(&mut **conn).await,
            Db::Sqlite(conn) => begin_on(&mut **conn).await,
        }
    }

    async fn commit(&mut self) -> QueryResult<()> {
        match &mut self.db {
            Db::Pg(conn) => commit_on(&mut **conn).await,
            Db::Sqlite(conn) => commit_on(&mut **conn).await,
        }
    }

    async fn rollback(&mut self) -> QueryResult<()> {
        match &mut self.db {
            Db::Pg(conn) => rollback_on(&mut **conn).await,
            Db::Sqlite(conn) => rollback_on(&mut **conn).await,
        }
    }
}

async fn begin_on<C: AsyncConnection>(conn: &mut C) -> QueryResult<()> {
    C::TransactionManager::begin_transaction(conn).await
}

async fn commit_on<C: AsyncConnection>(conn: &mut C) -> QueryResult<()> {
    C::TransactionManager::commit_transaction(conn).await
}

async fn rollback_on<C: AsyncConnection>(conn: &mut C) -> QueryResult<()> {
    C::TransactionManager::rollback_transaction(conn).await
}
