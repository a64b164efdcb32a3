//! The migrated template every PostgreSQL test database is copied from, made once per migration
//! list, and the names and URLs of the copies.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use diesel::migration::MigrationSource;
use diesel::pg::Pg;
use tokio_postgres::Client;

use super::TEMPLATE_LOCK_ID;
use crate::database::PG_MIGRATIONS;
use crate::{Database, DatabaseUrl};

/// Creates the migrated template once per migration list, under an advisory lock so parallel
/// test processes wait for the first instead of racing it.
pub(super) async fn ensure_template(admin: &Client, admin_url: &str) -> String {
    let template = format!("holdfast_tpl_{:016x}", fnv1a(&migrations_fingerprint()));
    admin
        .execute("SELECT pg_advisory_lock($1)", &[&TEMPLATE_LOCK_ID])
        .await
        .expect("template lock");
    let exists = admin
        .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&template])
        .await
        .expect("look up template")
        .is_some();
    if !exists {
        // Built under another name and renamed when complete, so a crash mid-way never leaves a
        // half-migrated template behind.
        let building = format!("{template}_building");
        let statements = [
            format!("DROP DATABASE IF EXISTS {building} WITH (FORCE)"),
            format!("CREATE DATABASE {building}"),
        ];
        for sql in statements {
            admin.batch_execute(&sql).await.expect("create template");
        }
        let url = DatabaseUrl::parse(&with_database(admin_url, &building)).expect("url");
        Database::migrate(&url).await.expect("migrate template");
        admin
            .execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                &[&building],
            )
            .await
            .expect("disconnect template");
        admin
            .batch_execute(&format!("ALTER DATABASE {building} RENAME TO {template}"))
            .await
            .expect("publish template");
        // Templates of older migration lists are of no further use.
        let stale = admin
            .query(
                "SELECT datname::text FROM pg_database WHERE datname LIKE 'holdfast\\_tpl\\_%' AND datname <> $1",
                &[&template],
            )
            .await
            .expect("list old templates");
        for row in stale {
            let name: String = row.get(0);
            let _ = admin
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .await;
        }
    }
    admin
        .execute("SELECT pg_advisory_unlock($1)", &[&TEMPLATE_LOCK_ID])
        .await
        .expect("template unlock");
    template
}

/// The names of the embedded migrations and the SQL text of each, so an edited migration gets
/// a new template too. Tests run in the source tree, where the SQL files are.
fn migrations_fingerprint() -> Vec<u8> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/postgres");
    let mut bytes = Vec::new();
    for migration in MigrationSource::<Pg>::migrations(&PG_MIGRATIONS).expect("embedded migrations")
    {
        let name = migration.name().to_string();
        bytes.extend(name.as_bytes());
        let up = dir.join(&name).join("up.sql");
        bytes.extend(std::fs::read(&up).unwrap_or_else(|e| panic!("{}: {e}", up.display())));
    }
    bytes
}

pub(super) fn unique_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_nanos();
    format!(
        "holdfast_test_{}_{}_{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Swaps the database name in a URL, keeping its query string.
pub(super) fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let root = match base[authority_start..].find('/') {
        Some(i) => &base[..authority_start + i],
        None => base,
    };
    match query {
        Some(q) => format!("{root}/{name}?{q}"),
        None => format!("{root}/{name}"),
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}
