//! Where the data lives, and how many connections reach it.

use std::time::Duration;

use clap::Args;
use holdfast_domain::payment::token::SESSION_HOLD;
use holdfast_persistence::{DatabaseUrl, PoolOptions};

use super::PaymentArgs;

#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// Where the data lives: `postgres://…` or `sqlite://PATH`.
    #[arg(
        long = "database-url",
        env = "HOLDFAST_DATABASE_URL",
        default_value = "sqlite://./data/holdfast.db",
        hide_env_values = true,
        global = true,
        value_parser = parse_database_url
    )]
    pub url: DatabaseUrl,

    /// PostgreSQL connections of the shared pool, and as many again shared out among the HTTP
    /// workers and delivery loops, each in a pool of its own of at least two (SQLite always
    /// uses one).
    #[arg(
        long = "db-pool-size",
        env = "HOLDFAST_DB_POOL_SIZE",
        default_value_t = 8,
        global = true
    )]
    pub pool_size: usize,

    /// How long, in ms, the completion of a payment the processor has answered waits for a
    /// database connection (and, on SQLite, another process's write lock) before giving up;
    /// other work waits 5 s. Keep it below the reconcile age minus the processor timeout.
    #[arg(
        long = "db-completion-wait-ms",
        env = "HOLDFAST_DB_COMPLETION_WAIT_MS",
        default_value_t = 20_000,
        global = true
    )]
    pub completion_wait_ms: u64,
}

impl DatabaseArgs {
    pub fn completion_wait(&self) -> Duration {
        Duration::from_millis(self.completion_wait_ms.max(1))
    }

    pub fn pool(&self) -> PoolOptions {
        PoolOptions {
            completion_wait: self.completion_wait(),
            max_size: self.pool_size.max(1),
            pinned_threads: 1,
            wait_timeout: Duration::from_secs(5),
        }
    }

    /// Refuses settings under which the workers could reverse a payment whose completion is
    /// still waiting for the database (the reconcile age must exceed the processor timeout
    /// plus the completion wait), or under which a payment could still complete after its hold
    /// of its client session lapsed, when the checkout may already be paying again: the hold
    /// must outlast the latest moment reconciliation finishes a payment left pending.
    pub fn check_against(&self, payments: &PaymentArgs) -> anyhow::Result<()> {
        let after = payments.reconcile_after_beyond(self.completion_wait())?;
        let reached = after
            .saturating_add(holdfast_worker::reconcile_every(after))
            .saturating_add(payments.processor_timeout())
            .saturating_add(self.completion_wait());
        let hold = Duration::try_from(SESSION_HOLD)?;
        anyhow::ensure!(
            reached < hold,
            "HOLDFAST_RECONCILE_AFTER_MS ({} ms) with its pass interval, plus \
             HOLDFAST_PROCESSOR_TIMEOUT_MS and HOLDFAST_DB_COMPLETION_WAIT_MS ({} ms in all), must \
             stay below the {} s a payment holds its client session",
            after.as_millis(),
            reached.as_millis(),
            hold.as_secs()
        );
        Ok(())
    }
}

fn parse_database_url(raw: &str) -> Result<DatabaseUrl, String> {
    DatabaseUrl::parse(raw).map_err(|e| e.to_string())
}
