//! A new connection's settings: SQLite's journal and durability, a delivery loop's planning.

use std::path::Path;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};

use super::DatabaseError;
use crate::conn::SqliteConn;

pub(super) fn deadpool_runtime() -> deadpool::Runtime {
    deadpool::Runtime::Tokio1
}

pub(super) fn prepare_sqlite_file(path: &Path) -> Result<(), DatabaseError> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|source| DatabaseError::SqliteFile {
                path: path.to_owned(),
                source,
            })
        }
        _ => Ok(()),
    }
}

/// How a delivery loop's connections plan: each prepared statement once, with its generic
/// plan, kept for the connection. The statement that records a batch of outcomes was planned
/// for every batch, which cost PostgreSQL as much as running it; PostgreSQL would keep planning
/// it for batches under ten rows, the usual size (docs/decisions.md, "A delivery connection
/// keeps its generic plans"). No sequential scans: every statement these connections run finds
/// rows through an index, and on a new database, before the first `ANALYZE`, a plan that reads
/// the whole table looks cheapest and would be kept. The claim, whose caps and lists shape its
/// plan, asks for a plan of its own in its transaction (`conn::Lock::NotificationClaim`).
const DELIVERY_PLANNING: &str =
    "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off";

pub(super) async fn establish_for_deliveries(
    url: String,
) -> diesel::ConnectionResult<AsyncPgConnection> {
    establish_then(&url, DELIVERY_PLANNING).await
}

/// A connection to `url` that has run `setup` before it is handed out.
async fn establish_then<C: AsyncConnection + SimpleAsyncConnection>(
    url: &str,
    setup: &str,
) -> diesel::ConnectionResult<C> {
    let mut conn = C::establish(url).await?;
    conn.batch_execute(setup)
        .await
        .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
    Ok(conn)
}

/// WAL lets readers (other processes, such as the operator CLI) run beside the writer;
/// `busy_timeout` makes a second process wait for the lock instead of failing at once.
/// `synchronous = FULL` syncs the WAL at every commit: with NORMAL a commit survives a killed
/// process but not a power loss, and a payment answered 201 must survive both (the cost is in
/// docs/performance.md).
pub(super) async fn establish_sqlite(url: String) -> diesel::ConnectionResult<SqliteConn> {
    establish_then(
        &url,
        "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL;",
    )
    .await
}
