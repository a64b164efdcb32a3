//! Completions of concurrent payments committed together, on PostgreSQL: group commit.
//!
//! Every payment ends with one completion (`completion.rs`): one statement, one round trip, one
//! commit that waits for the WAL to reach the disk. Under load an HTTP worker has several
//! payments waiting on their processors at once, and their completions arrive a fraction of a
//! millisecond apart. Each worker thread has one batcher: a completion is queued to it, and
//! whatever has queued while the previous batch was being written is the next batch, written
//! in one SQL transaction (each payment's own prepared statement, all sent at once). A lone
//! completion waits for nothing and runs as it would alone; under load, one commit carries
//! many. Each payment still answers only once its own completion has committed: a 201 still
//! means committed.
//!
//! Only the plain completion is batched (an auth or sale with no original to move and no client
//! session to close). A batch that fails as a whole sends each of its completions back to run
//! alone, where an error is its own and is reported as such.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::thread::ThreadId;

use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::Event;
use tokio::sync::{mpsc, oneshot};

use super::SqlStore;
use super::completion::{Writes, complete, completion_statement};
use crate::conn::{Conn, Db};
use crate::local_pools::on_pinned_thread;
use crate::payment_rows::CompletedRow;

/// The most completions one SQL transaction carries (more wait for the next): a bound on how
/// long a batch holds its rows' locks.
const MOST_PER_BATCH: usize = 64;

/// One payment's completion, owned, on its way to the batcher of its thread.
pub struct Completing {
    pub txn: Transaction,
    pub event: Event,
    /// `event.data` as stored.
    pub data: String,
    pub reply: Option<KeyedAnswer>,
}

/// What a batched completion came to: completed; not completed because its row was no longer
/// pending; or not decided here, to be run alone (`None`).
type Verdict = Option<bool>;

struct Queued {
    completing: Completing,
    verdict: oneshot::Sender<Verdict>,
}

/// The batchers of a store, one per thread with a single-threaded runtime of its own (each HTTP
/// worker), started on first use.
#[derive(Clone, Default)]
pub struct Batchers(Arc<RwLock<HashMap<ThreadId, mpsc::UnboundedSender<Queued>>>>);

impl Batchers {
    /// Completes `completing` in the next batch of this thread: `Some(true)` once committed,
    /// `Some(false)` if its row was no longer pending, `None` when it must run alone (not on
    /// PostgreSQL, not on a worker thread, or its batch failed as a whole).
    pub async fn complete(&self, store: &SqlStore, completing: Completing) -> Verdict {
        if !store.on_postgres() || !on_pinned_thread() {
            return None;
        }
        let (verdict, told) = oneshot::channel();
        let mut queued = Queued {
            completing,
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
                    self.write().remove(&std::thread::current().id());
                }
            }
        }
        None
    }

    fn for_this_thread(&self, store: &SqlStore) -> mpsc::UnboundedSender<Queued> {
        let thread = std::thread::current().id();
        if let Some(queue) = self.read().get(&thread) {
            return queue.clone();
        }
        self.write()
            .entry(thread)
            .or_insert_with(|| {
                let (queue, queued) = mpsc::unbounded_channel();
                tokio::spawn(complete_in_batches(store.clone(), queued));
                queue
            })
            .clone()
    }

    fn read(
        &self,
    ) -> std::sync::RwLockReadGuard<'_, HashMap<ThreadId, mpsc::UnboundedSender<Queued>>> {
        // Entries are only added or replaced whole: a panic cannot leave the map half-changed.
        self.0
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(
        &self,
    ) -> std::sync::RwLockWriteGuard<'_, HashMap<ThreadId, mpsc::UnboundedSender<Queued>>> {
        self.0
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The batcher: whatever queued while the last batch was written is the next batch.
async fn complete_in_batches(store: SqlStore, mut queue: mpsc::UnboundedReceiver<Queued>) {
    let mut batch = Vec::with_capacity(MOST_PER_BATCH);
    while queue.recv_many(&mut batch, MOST_PER_BATCH).await > 0 {
        let written = write_batch(&store, &batch).await;
        for queued in batch.drain(..) {
            let verdict = written
                .as_ref()
                .map(|done| done.contains(queued.completing.txn.id.as_str()));
            // A payment whose request was dropped meanwhile is not waiting: nothing to tell.
            let _ = queued.verdict.send(verdict);
        }
    }
}

/// Writes `batch` in one statement: the ids of the payments it completed, or `None` when the
/// batch failed as a whole.
async fn write_batch(store: &SqlStore, batch: &[Queued]) -> Option<HashSet<String>> {
    let completing: Vec<&Completing> = batch.iter().map(|q| &q.completing).collect();
    let written = async {
        let mut conn = store.conn_within(store.completion_wait).await.ok()?;
        let written = match completing.as_slice() {
            // Alone, the one-row statement: prepared once per connection, never planned again,
            // where a batch's statement is planned for every batch.
            [one] => complete_one(&mut conn, one).await,
            _ => complete_many(&mut conn, &completing).await,
        };
        written
            .inspect_err(|e| tracing::warn!(error = %e, payments = batch.len(), "a batch of completions failed; each runs alone"))
            .ok()
    };
    written.await
}

/// Completes `one` with the one-row statement; its id if it was still pending.
async fn complete_one(conn: &mut Conn, one: &Completing) -> QueryResult<HashSet<String>> {
    let writes = Writes {
        original: None,
        event: &one.event,
        data: &one.data,
        reply: one.reply.as_ref(),
        session: None,
    };
    match complete(conn, &one.txn, writes).await {
        Ok(_) => Ok(HashSet::from([one.txn.id.to_string()])),
        Err(diesel::result::Error::NotFound) => Ok(HashSet::new()),
        Err(e) => Err(e),
    }
}

/// Completes every payment of `batch` whose row is still pending, in one SQL transaction: each
/// its own prepared `COMPLETE_PG` (completion.rs), all sent at once (pipelined) between one
/// BEGIN and one COMMIT. Three round trips and one commit for the batch, where alone each takes
/// one round trip and one commit, and nothing to plan. The ids it completed.
pub async fn complete_many(conn: &mut Conn, batch: &[&Completing]) -> QueryResult<HashSet<String>> {
    let rows: Vec<CompletedRow<'_>> = batch.iter().map(|c| CompletedRow::from(&c.txn)).collect();
    let counts = conn
        .transaction(async |conn| {
            let Db::Pg(ref pg) = conn.db else {
                unreachable!("batches are written on PostgreSQL only");
            };
            // Through a shared reference, diesel-async sends every statement before the first
            // answer comes back.
            let pg: &AsyncPgConnection = pg;
            let statements = batch.iter().zip(&rows).map(|(c, row)| {
                let writes = Writes {
                    original: None,
                    event: &c.event,
                    data: &c.data,
                    reply: c.reply.as_ref(),
                    session: None,
                };
                completion_statement(&c.txn, row, writes)
                    .get_result::<(i64, i64, i64, i64)>(&mut { pg })
            });
            futures_util::future::try_join_all(statements).await
        })
        .await?;
    if counts
        .iter()
        .any(|&(_, _, _, notifications)| notifications > 0)
    {
        conn.poke_deliverers();
    }
    Ok(batch
        .iter()
        .zip(counts)
        .filter(|(_, (done, ..))| *done == 1)
        .map(|(c, _)| c.txn.id.to_string())
        .collect())
}
