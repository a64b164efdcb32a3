//! Everything a database holds, as bytes, for tests that look for what must not be stored.

use std::fmt::Write as _;
use std::path::Path;

use crate::Env;

impl Env {
    /// SQLite: the raw bytes of the database file and its write-ahead log. PostgreSQL: every
    /// row of every table of the test database, as text (bytea shows as `\x` + hex).
    pub async fn dump(&self) -> Vec<u8> {
        let url = self.database_url();
        if let Some(path) = url.strip_prefix("sqlite://") {
            let mut bytes = Vec::new();
            for suffix in ["", "-wal"] {
                let file = format!("{path}{suffix}");
                if Path::new(&file).exists() {
                    bytes.extend(std::fs::read(&file).expect("read database file"));
                }
            }
            return bytes;
        }
        let client = self.pg_client().await;
        let tables = client
            .query(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
                &[],
            )
            .await
            .expect("list tables");
        let mut text = String::new();
        for row in tables {
            let table: String = row.get(0);
            let sql =
                format!("SELECT coalesce(string_agg(t::text, E'\\n'), '') FROM \"{table}\" t");
            let rows: String = client
                .query_one(&sql, &[])
                .await
                .expect("dump table")
                .get(0);
            let _ = writeln!(text, "-- {table}\n{rows}");
        }
        text.into_bytes()
    }
}

impl Env {
    /// Runs `sql` (one or more statements) on the test database, as an operator with a SQL
    /// shell would: for tests of rows the API can no longer make.
    pub async fn execute_sql(&self, sql: &str) {
        let url = self.database_url();
        if let Some(path) = url.strip_prefix("sqlite://") {
            python_sqlite(
                "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()",
                path,
                sql,
            );
            return;
        }
        self.pg_client()
            .await
            .batch_execute(sql)
            .await
            .expect("the SQL runs");
    }

    /// The rows `sql` (one query, its columns text or null) reads from the test database, each
    /// column as text, as an operator with a SQL shell reads them.
    pub async fn query_text(&self, sql: &str) -> Vec<Vec<Option<String>>> {
        let url = self.database_url();
        if let Some(path) = url.strip_prefix("sqlite://") {
            let out = python_sqlite(
                "import json, sqlite3, sys\n\
                 c = sqlite3.connect(sys.argv[1])\n\
                 rows = c.execute(sys.argv[2]).fetchall()\n\
                 print(json.dumps([[None if v is None else str(v) for v in r] for r in rows]))",
                path,
                sql,
            );
            return serde_json::from_slice(&out).expect("rows as JSON");
        }
        self.pg_client()
            .await
            .simple_query(sql)
            .await
            .expect("the query runs")
            .into_iter()
            .filter_map(|message| match message {
                tokio_postgres::SimpleQueryMessage::Row(row) => Some(
                    (0..row.len())
                        .map(|i| row.get(i).map(str::to_owned))
                        .collect(),
                ),
                _ => None,
            })
            .collect()
    }

    /// A client of the PostgreSQL test database (its connection runs on a task of its own).
    pub async fn pg_client(&self) -> tokio_postgres::Client {
        let (client, connection) =
            tokio_postgres::connect(self.database_url(), tokio_postgres::NoTls)
                .await
                .expect("connect to the PostgreSQL test database");
        tokio::spawn(connection);
        client
    }
}

/// Runs `script` with the SQLite file at `path` and `sql` as its arguments (Python's own
/// sqlite3, as an operator's shell would); its standard output.
fn python_sqlite(script: &str, path: &str, sql: &str) -> Vec<u8> {
    let out = std::process::Command::new("python3")
        .args(["-c", script, path, sql])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Whether `needle` occurs in `haystack`.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}
