//! Test databases: every test gets its own, so tests run in parallel with nothing shared.
//!
//! - SQLite: a fresh file in a temporary folder, migrated.
//! - PostgreSQL: `CREATE DATABASE … TEMPLATE` from a template migrated once (its name carries a
//!   hash of the migration list, so a new migration makes a new template). The server comes from
//!   `HOLDFAST_TEST_DATABASE_URL`. When it is unset the PostgreSQL tests are skipped with a
//!   message, except under `CI=true`, where that is a failure. When it is set, an unreachable
//!   server is always a failure.
#![allow(
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "test support (the `test-support` feature): a panic is the failure report"
)]

use tokio_postgres::{Client, NoTls};

use crate::{Database, DatabaseUrl, PoolOptions};

mod template;

use template::{ensure_template, unique_name, with_database};

pub const TEST_DATABASE_URL_VAR: &str = "HOLDFAST_TEST_DATABASE_URL";
const TEMPLATE_LOCK_ID: i64 = 0x486f_6c64_7465_6d70;

/// How a connection runs one of its prepared statements (`Database::prepared_plan`).
#[derive(Debug, Clone)]
pub struct PreparedPlan {
    /// What `EXPLAIN EXECUTE` prints, a line per node.
    pub plan: String,
    /// Runs with the generic plan, made once and kept.
    pub generic_plans: i64,
    /// Runs planned for their values, each planned again.
    pub custom_plans: i64,
}

impl PreparedPlan {
    /// `(custom_plans, generic_plans)`: how its runs were planned.
    pub fn runs(&self) -> (i64, i64) {
        (self.custom_plans, self.generic_plans)
    }
}

/// Every statement that finds rows by their key and checks that they are still pending, as
/// PostgreSQL is sent it: what it does, and its SQL with `$n` parameters. Each must find its
/// rows by their key, never through an index of pending rows (docs/decisions.md, "Rows found
/// by their key, never by a pending index").
pub fn statements_finding_pending_rows_by_key() -> Vec<(&'static str, String)> {
    crate::stores::keyed_pending_statements()
}

/// The hourly archive's statement (records attempted before a time lose their bodies) as
/// PostgreSQL is sent it, with `$n` parameters.
pub fn archive_statement() -> String {
    crate::stores::archive_statement()
}

/// An idle worker's probe for any pending notification, as PostgreSQL is sent it.
pub fn any_pending_statement() -> &'static str {
    crate::stores::any_pending_statement()
}

/// The hourly sweep of the records deleted subscriptions left behind, as PostgreSQL is sent it.
pub fn orphan_sweep_statement() -> &'static str {
    crate::stores::orphan_sweep_statement()
}

/// `EXECUTE name(NULL, …)` with one NULL for each of its `parameters`, for an `EXPLAIN` of a
/// prepared statement's generic plan, which is the same whatever the values.
pub(crate) fn execute_with_nulls(name: &str, parameters: i32) -> String {
    match usize::try_from(parameters).unwrap_or(0) {
        // PostgreSQL refuses an empty list: `EXECUTE name()` is a syntax error.
        0 => format!("EXECUTE {name}"),
        n => format!("EXECUTE {name}({})", vec!["NULL"; n].join(", ")),
    }
}

/// A database that exists for one test and is dropped with it.
#[derive(Debug)]
pub struct TestDatabase {
    url: String,
    cleanup: Cleanup,
}

#[derive(Debug)]
enum Cleanup {
    Sqlite(
        #[expect(dead_code, reason = "held only to delete the folder on drop")] tempfile::TempDir,
    ),
    Postgres {
        admin_url: String,
        name: String,
    },
}

impl TestDatabase {
    /// A migrated SQLite database in a temporary folder.
    pub async fn sqlite() -> Self {
        let dir = tempfile::tempdir().expect("temporary folder");
        let url = format!("sqlite://{}", dir.path().join("holdfast.db").display());
        Database::migrate(&DatabaseUrl::parse(&url).expect("sqlite url"))
            .await
            .expect("migrate the SQLite test database");
        Self {
            url,
            cleanup: Cleanup::Sqlite(dir),
        }
    }

    /// A migrated PostgreSQL database of its own, or `None` (with a message) when no server is
    /// configured outside CI.
    pub async fn postgres() -> Option<Self> {
        let Some(admin_url) = std::env::var(TEST_DATABASE_URL_VAR)
            .ok()
            .filter(|v| !v.is_empty())
        else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{TEST_DATABASE_URL_VAR} must be set when CI=true: PostgreSQL tests may not be skipped"
            );
            eprintln!("skipping: {TEST_DATABASE_URL_VAR} is not set");
            return None;
        };
        let admin = connect(&admin_url).await;
        let template = ensure_template(&admin, &admin_url).await;
        let name = unique_name();
        admin
            .batch_execute(&format!("CREATE DATABASE {name} TEMPLATE {template}"))
            .await
            .unwrap_or_else(|e| panic!("create test database {name}: {e}"));
        Some(Self {
            url: with_database(&admin_url, &name),
            cleanup: Cleanup::Postgres { admin_url, name },
        })
    }

    /// The URL to give `HOLDFAST_DATABASE_URL`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Drops a PostgreSQL test database at once, closing its connections (for tests of what
    /// happens when the database goes away). Does nothing to SQLite.
    pub async fn drop_now(&self) {
        if let Cleanup::Postgres { admin_url, name } = &self.cleanup {
            connect(admin_url)
                .await
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await
                .expect("drop test database");
        }
    }

    /// How many PostgreSQL transactions last wrote the `transactions` rows of `ids`, read off
    /// their `xmin` (for tests of what commits together).
    pub async fn commits_that_wrote_transactions(&self, ids: &[&str]) -> i64 {
        let ids: Vec<String> = ids.iter().map(|id| (*id).to_owned()).collect();
        connect(&self.url)
            .await
            .query_one(
                "SELECT count(DISTINCT xmin::text) FROM transactions WHERE id = ANY($1)",
                &[&ids],
            )
            .await
            .expect("read the rows' xmin")
            .get(0)
    }

    /// The `xmax` of the row of `table` whose id is `id`: the last transaction that locked,
    /// updated or deleted it, kept after that transaction ends ("0" for none). A write that
    /// locks the row changes it. (For tests of what a write locks; `table` is the test's own
    /// literal.)
    pub async fn row_xmax(&self, table: &str, id: &str) -> String {
        connect(&self.url)
            .await
            .query_one(
                &format!("SELECT xmax::text FROM {table} WHERE id = $1"),
                &[&id],
            )
            .await
            .unwrap_or_else(|e| panic!("read the xmax of {table} {id}: {e}"))
            .get(0)
    }

    /// Runs `sql` on the database, outside any pool (for tests that set up what the stores do
    /// not write, or run maintenance such as `ANALYZE`). Does nothing to SQLite.
    pub async fn execute(&self, sql: &str) {
        if let Cleanup::Postgres { .. } = self.cleanup {
            connect(&self.url)
                .await
                .batch_execute(sql)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
    }

    /// The column `text` of every row `sql` selects, on either backend: for a test that reads
    /// what the stores cannot (a schema older than the code, between migrations).
    pub async fn texts(&self, sql: &str) -> Vec<String> {
        match self.cleanup {
            Cleanup::Postgres { .. } => connect(&self.url)
                .await
                .query(sql, &[])
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .iter()
                .map(|row| row.get::<_, String>(0))
                .collect(),
            Cleanup::Sqlite(_) => {
                use diesel::{Connection, RunQueryDsl};
                #[derive(diesel::QueryableByName)]
                struct Text {
                    #[diesel(sql_type = diesel::sql_types::Text)]
                    text: String,
                }
                let path = self.url.trim_start_matches("sqlite://");
                let mut conn = diesel::SqliteConnection::establish(path)
                    .unwrap_or_else(|e| panic!("open {path}: {e}"));
                diesel::sql_query(sql)
                    .load::<Text>(&mut conn)
                    .unwrap_or_else(|e| panic!("{sql}: {e}"))
                    .into_iter()
                    .map(|row| row.text)
                    .collect()
            }
        }
    }

    /// The generic plan PostgreSQL makes for `sql` (a statement with `$n` parameters), as
    /// `EXPLAIN (VERBOSE)` prints it, expressions included: the plan a prepared statement keeps
    /// once it stops planning for each run's values. `None` on SQLite.
    pub async fn generic_plan(&self, sql: &str) -> Option<String> {
        let Cleanup::Postgres { .. } = self.cleanup else {
            return None;
        };
        let client = connect(&self.url).await;
        let prepare = format!("SET plan_cache_mode = force_generic_plan; PREPARE probe AS {sql}");
        client
            .batch_execute(&prepare)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        let parameters: i32 = client
            .query_one(
                "SELECT cardinality(parameter_types) FROM pg_prepared_statements \
                  WHERE name = 'probe'",
                &[],
            )
            .await
            .expect("the statement prepared")
            .get(0);
        let execute = execute_with_nulls("probe", parameters);
        let lines = client
            .query(&format!("EXPLAIN (VERBOSE) {execute}"), &[])
            .await
            .unwrap_or_else(|e| panic!("EXPLAIN {sql}: {e}"));
        Some(
            lines
                .iter()
                .map(|line| line.get::<_, String>(0))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// Reverts the newest migration and names it; `reapply_migrations` runs it again.
    pub async fn revert_last_migration(&self) -> String {
        let url = DatabaseUrl::parse(&self.url).expect("test url");
        Database::revert_last_migration(&url)
            .await
            .expect("revert the newest migration")
    }

    /// Applies the migrations not applied, as a starting server does.
    pub async fn reapply_migrations(&self) -> Vec<String> {
        let url = DatabaseUrl::parse(&self.url).expect("test url");
        Database::migrate(&url).await.expect("migrate again")
    }

    /// Reverts the newest migrations down to `version` (`20261125000001`), that one
    /// included, runs `between`, and applies them all again, checking that the same ones came
    /// back.
    pub async fn revert_through_and_reapply(&self, version: &str, between: impl AsyncFnOnce()) {
        let mut reverted = Vec::new();
        while reverted
            .last()
            .is_none_or(|v: &String| v.replace('-', "") != version)
        {
            assert!(reverted.len() < 64, "never reached {version}: {reverted:?}");
            reverted.push(self.revert_last_migration().await);
        }
        between().await;
        let mut applied = self.reapply_migrations().await;
        applied.reverse();
        assert_eq!(applied, reverted, "the same migrations, once each");
    }

    pub fn open(&self) -> Database {
        let url = DatabaseUrl::parse(&self.url).expect("test url");
        Database::open(&url, PoolOptions::default()).expect("open test database")
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let Cleanup::Postgres { admin_url, name } = &self.cleanup else {
            return;
        };
        let (admin_url, name) = (admin_url.clone(), name.clone());
        // Drop may run inside a runtime, which cannot block; a thread with its own runtime can.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async {
                let admin = connect(&admin_url).await;
                admin
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(()))) {
            eprintln!("warning: could not drop test database: {dropped:?}");
        }
    }
}

async fn connect(url: &str) -> Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| {
            panic!("{TEST_DATABASE_URL_VAR} is set but PostgreSQL is unreachable: {e}")
        });
    tokio::spawn(connection);
    client
}

#[cfg(test)]
mod tests {
    use super::with_database;

    #[test]
    fn swaps_database_name() {
        let cases = [
            ("postgres://u@h:5432/postgres", "postgres://u@h:5432/x"),
            (
                "postgres://u@h:5432/postgres?sslmode=disable",
                "postgres://u@h:5432/x?sslmode=disable",
            ),
            ("postgres://u@h:5432", "postgres://u@h:5432/x"),
        ];
        for (url, want) in cases {
            assert_eq!(with_database(url, "x"), want);
        }
    }
}
