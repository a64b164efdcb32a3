//! The writes of concurrent payments committed together, on PostgreSQL: group commit.
//!
//! A payment writes twice, each write its own commit that waits for the WAL to reach the disk:
//! its pending row before the processor is called, its completion after. Under load an HTTP
//! worker has several payments in flight at once, and their writes arrive a fraction of a
//! millisecond apart. Each worker thread has one batcher: a write is queued to it and goes at
//! once while fewer than two batches are being written; whatever queues while both are is the
//! next batch, written in one SQL transaction (each write its own prepared statement, all sent
//! at once). A lone write runs as it would alone; under load, one commit carries many. Each payment
//! goes on only once the commit holding its write is done: its pending row is durable before
//! its processor is called, and a 201 still means committed.
//!
//! Only plain writes are batched: pending rows of auths and sales, and their completions with
//! no original to move and no client session to close. A batch that fails as a whole sends
//! each of its writes back to run alone, where an error is its own and is reported as such.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::thread::ThreadId;

use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use holdfast_domain::idempotency::{KeyClaim, KeyedAnswer};
use holdfast_domain::ledger::Journal;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::Event;
use tokio::sync::{Semaphore, mpsc, oneshot};

use super::SqlStore;
use super::completion::{Writes, complete, completion_statement};
use super::pending::{insert_pending, insert_pending_pg};
use crate::conn::{Conn, Db};
use crate::local_pools::on_pinned_thread;
use futures_util::{FutureExt, TryFutureExt};

/// The most writes one SQL transaction carries (more wait for the next): a bound on how long a
/// batch holds its rows' locks.
const MOST_PER_BATCH: usize = 64;

/// How many batches of one thread are written at once, each on a connection of its own: a
/// write that finds fewer waits for nothing. With one, a write arriving during a batch waited
/// for it even at light load (−12–20 % auths at 8 connections); with two, about 5 % less at 8
/// and +41 % at 32; with four, even at 8 but half the gain at 32 (docs/performance.md).
const IN_FLIGHT: usize = 2;

/// One payment's completion, owned, on its way to the batcher of its thread.
pub struct Completing {
    pub txn: Transaction,
    pub event: Event,
    /// `event.data` as stored.
    pub data: String,
    pub reply: Option<KeyedAnswer>,
    /// The journal the outcome posts, if it moves money.
    pub journal: Option<Journal>,
}

impl Completing {
    /// What the completion writes besides the payment's row: no original, no session.
    fn writes(&self) -> Writes<'_> {
        Writes {
            original: None,
            event: &self.event,
            data: &self.data,
            reply: self.reply.as_ref(),
            session: None,
            journal: self.journal.as_ref(),
        }
    }
}

/// A write a batch can carry.
pub enum Write {
    /// A payment's pending row, before its processor is called, and the claim on its
    /// idempotency key that goes with it, if any.
    Pending(Box<(Transaction, Option<KeyClaim>)>),
    /// A payment's completion with nothing else to move.
    Complete(Box<Completing>),
}

/// What a batched write came to: done; not done because a completion's row was no longer
/// pending or a pending row's key was taken; or not decided here, to be run alone (`None`).
type Verdict = Option<bool>;

struct Queued {
    write: Write,
    verdict: oneshot::Sender<Verdict>,
}

/// The batchers of a store, one per thread with a single-threaded runtime of its own (each HTTP
/// worker), started on first use.
#[derive(Clone, Default)]
pub struct Batchers(Arc<RwLock<Queues>>);

/// Each thread's queue to its batcher.
type Queues = HashMap<ThreadId, mpsc::UnboundedSender<Queued>>;

impl Batchers {
    /// Writes the write `make` gives in the next batch of this thread: `Some(true)` once
    /// committed, `Some(false)` if a completion's row was no longer pending or a pending row's
    /// key was taken (nothing written), `None` when it must
    /// run alone (not on PostgreSQL, not on a worker thread, or its batch failed as a whole).
    /// `make` runs only where the write is batched: it copies what the batch needs.
    pub async fn write(&self, store: &SqlStore, make: impl FnOnce() -> Write) -> Verdict {
        if !store.on_postgres() || !on_pinned_thread() {
            return None;
        }
        let (verdict, told) = oneshot::channel();
        let mut queued = Queued {
            write: make(),
            verdict,
        };
        // A thread keeps its batcher until its runtime ends; a later runtime on the same
        // thread finds the old batcher's queue closed and starts its own.
        for _ in 0..2 {
            let queue = self.for_this_thread(store);
            match queue.send(queued) {
                Ok(()) => return told.await.ok().flatten(),
                Err(mpsc::error::SendError(back)) => {
                    queued = back;
                    self.map_mut().remove(&std::thread::current().id());
                }
            }
        }
        None
    }

    fn for_this_thread(&self, store: &SqlStore) -> mpsc::UnboundedSender<Queued> {
        let thread = std::thread::current().id();
        if let Some(queue) = self.map().get(&thread) {
            return queue.clone();
        }
        self.map_mut()
            .entry(thread)
            .or_insert_with(|| {
                let (queue, queued) = mpsc::unbounded_channel();
                tokio::spawn(write_in_batches(store.clone(), queued));
                queue
            })
            .clone()
    }

    // Entries are only added or removed whole: a panic cannot leave the map half-changed.
    fn map(&self) -> RwLockReadGuard<'_, Queues> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn map_mut(&self) -> RwLockWriteGuard<'_, Queues> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The batcher: writes go at once while fewer than `IN_FLIGHT` batches are being written;
/// whatever queues while they all are is the next batch.
async fn write_in_batches(store: SqlStore, mut queue: mpsc::UnboundedReceiver<Queued>) {
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    loop {
        let Ok(turn) = in_flight.clone().acquire_owned().await else {
            return;
        };
        let mut batch = Vec::with_capacity(MOST_PER_BATCH);
        if queue.recv_many(&mut batch, MOST_PER_BATCH).await == 0 {
            return;
        }
        let store = store.clone();
        tokio::spawn(async move {
            let writes: Vec<&Write> = batch.iter().map(|q| &q.write).collect();
            let written = write_batch(&store, &writes).await;
            drop(turn);
            for (n, queued) in batch.into_iter().enumerate() {
                #[expect(
                    clippy::indexing_slicing,
                    reason = "write_batch answers one verdict per write, in their order"
                )]
                let verdict = written.as_ref().map(|done| done[n]);
                // A payment whose request was dropped meanwhile is not waiting: nothing to tell.
                let _ = queued.verdict.send(verdict);
            }
        });
    }
}

/// Writes `batch`: for each write, whether it was done; `None` when the batch failed as a
/// whole.
async fn write_batch(store: &SqlStore, batch: &[&Write]) -> Option<Vec<bool>> {
    // New work fails after the pool's own wait under overload, before any processor is called;
    // a payment the processor has answered waits for its completion (`PoolOptions`).
    let completes = batch.iter().any(|w| matches!(w, Write::Complete(_)));
    let conn = if completes {
        store.conn_within(store.completion_wait).await
    } else {
        store.conn().await
    };
    let mut conn = conn.ok()?;
    let written = match batch {
        // Alone, as it would run alone: one statement, its own commit, no BEGIN and COMMIT.
        [one] => write_one(&mut conn, one).await.map(|done| vec![done]),
        _ => write_many(&mut conn, batch).await,
    };
    written
        .inspect_err(|e| tracing::warn!(error = %e, writes = batch.len(), "a batch of payment writes failed; each runs alone"))
        .ok()
}

/// `write` alone: whether it was done.
async fn write_one(conn: &mut Conn, write: &Write) -> QueryResult<bool> {
    match write {
        Write::Pending(pending) => insert_pending(conn, &pending.0, pending.1.as_ref()).await,
        Write::Complete(c) => match complete(conn, &c.txn, c.writes()).await {
            Ok(_) => Ok(true),
            Err(diesel::result::Error::NotFound) => Ok(false),
            Err(e) => Err(e),
        },
    }
}

/// Writes every write of `batch` in one SQL transaction: each its own prepared statement, all
/// sent at once (pipelined) between one BEGIN and one COMMIT. Three round trips and one commit
/// for the batch, where alone each takes one round trip and one commit, and nothing to plan.
/// For each write, whether it was done.
async fn write_many(conn: &mut Conn, batch: &[&Write]) -> QueryResult<Vec<bool>> {
    let outcomes = conn
        .transaction(async |conn| {
            let Db::Pg(ref pg) = conn.db else {
                unreachable!("batches are written on PostgreSQL only");
            };
            // Through a shared reference, diesel-async sends every statement before the first
            // answer comes back.
            let pg: &AsyncPgConnection = pg;
            let statements = batch.iter().map(|write| match write {
                Write::Complete(c) => completion_statement(&c.txn, c.writes())
                    .get_result::<(i64, i64, i64, i64)>(&mut { pg })
                    .map_ok(|(done, _, _, notifications)| (done == 1, notifications))
                    .boxed(),
                Write::Pending(pending) => insert_pending_pg(pg, &pending.0, pending.1.as_ref())
                    .map_ok(|written| (written, 0))
                    .boxed(),
            });
            futures_util::future::try_join_all(statements).await
        })
        .await?;
    if outcomes.iter().any(|&(_, notifications)| notifications > 0) {
        conn.poke_deliverers();
    }
    Ok(outcomes.into_iter().map(|(done, _)| done).collect())
}
