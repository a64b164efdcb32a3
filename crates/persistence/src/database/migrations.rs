//! Migrations: applied under a PostgreSQL advisory lock so replicas starting together do not
//! race, and reverted one at a time (the migration tests and operators' rollbacks).

use diesel_async::{
    AsyncConnection, AsyncMigrationHarness, AsyncPgConnection, SimpleAsyncConnection,
};
use diesel_migrations::MigrationHarness;
use secrecy::ExposeSecret;

use super::{
    Database, DatabaseError, DatabaseUrl, MIGRATION_LOCK_ID, PG_MIGRATIONS, SQLITE_MIGRATIONS,
    establish_sqlite, prepare_sqlite_file,
};

impl Database {
    /// Applies pending migrations. Needs the multi-threaded tokio runtime (the migration
    /// harness blocks in place).
    pub async fn migrate(url: &DatabaseUrl) -> Result<Vec<String>, DatabaseError> {
        let applied = match url {
            DatabaseUrl::Postgres(secret) => {
                let mut conn = AsyncPgConnection::establish(secret.expose_secret())
                    .await
                    .map_err(|e| DatabaseError::Connect(e.to_string()))?;
                let lock = format!("SELECT pg_advisory_lock({MIGRATION_LOCK_ID})");
                conn.batch_execute(&lock)
                    .await
                    .map_err(|e| DatabaseError::Migrate(e.to_string()))?;
                let mut harness = AsyncMigrationHarness::new(conn);
                let applied = harness
                    .run_pending_migrations(PG_MIGRATIONS)
                    .map(|v| v.iter().map(ToString::to_string).collect())
                    .map_err(|e| DatabaseError::Migrate(e.to_string()));
                // Closing the connection releases the advisory lock.
                drop(harness.into_inner());
                applied?
            }
            DatabaseUrl::Sqlite(path) => {
                prepare_sqlite_file(path)?;
                let conn = establish_sqlite(path.to_string_lossy().into_owned())
                    .await
                    .map_err(|e| DatabaseError::Connect(e.to_string()))?;
                let mut harness = AsyncMigrationHarness::new(conn);
                harness
                    .run_pending_migrations(SQLITE_MIGRATIONS)
                    .map(|v| v.iter().map(ToString::to_string).collect())
                    .map_err(|e| DatabaseError::Migrate(e.to_string()))?
            }
        };
        Ok(applied)
    }

    /// Reverts the newest applied migration (its `down.sql`) and names it. For tests of what a
    /// migration does to the data already stored; the same harness as `migrate`.
    #[cfg(feature = "test-support")]
    pub(crate) async fn revert_last_migration(url: &DatabaseUrl) -> Result<String, DatabaseError> {
        let reverted = match url {
            DatabaseUrl::Postgres(secret) => {
                let conn = AsyncPgConnection::establish(secret.expose_secret())
                    .await
                    .map_err(|e| DatabaseError::Connect(e.to_string()))?;
                AsyncMigrationHarness::new(conn).revert_last_migration(PG_MIGRATIONS)
            }
            DatabaseUrl::Sqlite(path) => {
                let conn = establish_sqlite(path.to_string_lossy().into_owned())
                    .await
                    .map_err(|e| DatabaseError::Connect(e.to_string()))?;
                AsyncMigrationHarness::new(conn).revert_last_migration(SQLITE_MIGRATIONS)
            }
        };
        reverted
            .map(|version| version.to_string())
            .map_err(|e| DatabaseError::Migrate(e.to_string()))
    }
}
