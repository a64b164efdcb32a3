//! The store adapters: one `SqlStore` implements every store port, each in its own file, with
//! every query written once for both backends (`conn.rs` says how).

mod ach;
mod audit;
mod backlogs;
mod balance_transactions;
pub use backlogs::Backlogs;
mod boarding;
mod claim;
mod client_sessions;
mod completion;
mod compliance;
pub(crate) mod credentials;
mod emails;
mod group_commit;
mod idempotency;
mod keys;
mod ledger;
mod ledger_check;
mod loan_rows;
mod loans;
mod merchants;
mod notices;
mod notifications;
mod outbox;
mod payout_runs;
mod payouts;
mod pending;
mod platforms;
mod routing;
mod settlement;
mod tokens;
mod transactions;
mod webhooks;

use std::sync::Arc;
use std::time::Duration;

use crate::wake_ups::Announcer;
use diesel::QueryResult;
#[cfg(feature = "test-support")]
use diesel::QueryableByName;
use holdfast_domain::ports::{CardVault, DeliveryHints, StoreError, SubscriptionChange};

use crate::conn::{Conn, Pools};
use crate::local_pools::PinnedWork;

/// Every statement that finds rows by their key and checks that they are still pending
/// (`query::StillPending`), as PostgreSQL is sent it: what it does, and its SQL.
#[cfg(feature = "test-support")]
pub(crate) fn keyed_pending_statements() -> Vec<(&'static str, String)> {
    let mut all = notifications::keyed_pending_statements();
    all.extend(completion::keyed_pending_statements());
    all
}

#[cfg(feature = "test-support")]
pub(crate) use notifications::{any_pending_statement, archive_statement, orphan_sweep_statement};

/// The SQL diesel sends PostgreSQL for `query`, without its values.
#[cfg(feature = "test-support")]
fn pg_sql_of<Q: diesel::query_builder::QueryFragment<diesel::pg::Pg>>(query: &Q) -> String {
    let shown = diesel::debug_query::<diesel::pg::Pg, _>(query).to_string();
    let sql = shown.split(" -- binds:").next().unwrap_or_default();
    sql.to_owned()
}

/// The SQL a `pg_statement::Statement` of `sql` sends PostgreSQL, its `?` marks numbered.
#[cfg(feature = "test-support")]
fn statement_sql(sql: &'static str) -> String {
    use crate::pg_statement::{Bind, Statement};
    let binds = vec![Bind::Bool(false); sql.matches('?').count()];
    pg_sql_of(&Statement::<()>::new(sql, binds))
}

/// Every store port, on PostgreSQL or SQLite.
#[derive(Clone)]
pub struct SqlStore {
    pools: Pools,
    completion_wait: Duration,
    /// Each worker thread's batcher of payment writes (`group_commit`).
    batchers: group_commit::Batchers,
    /// Where the notifications this process writes are handed for delivery, if anywhere.
    deliveries: Option<Arc<dyn DeliveryHints>>,
    /// Where the notifications this process writes for the claim are announced, if anywhere.
    announcer: Option<Announcer>,
    /// What seals email bodies at rest (`email_bodies`); in clear without one.
    email_sealer: Option<Arc<dyn CardVault>>,
    /// What the connections of this handle do, which picks a pinned thread's pool
    /// (`local_pools`).
    work: PinnedWork,
}

impl std::fmt::Debug for SqlStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlStore")
            .field("open_connections", &self.pools.open())
            .finish_non_exhaustive()
    }
}

impl SqlStore {
    pub(crate) fn new(pools: Pools, completion_wait: Duration) -> Self {
        Self {
            pools,
            completion_wait,
            batchers: group_commit::Batchers::default(),
            deliveries: None,
            announcer: None,
            email_sealer: None,
            work: PinnedWork::Requests,
        }
    }

    /// This handle's connections are a delivery loop's (`Database::for_deliveries`).
    pub(crate) fn for_deliveries(mut self) -> Self {
        self.work = PinnedWork::Deliveries;
        self
    }

    pub(crate) fn sealing_emails(mut self, sealer: Arc<dyn CardVault>) -> Self {
        self.email_sealer = Some(sealer);
        self
    }

    pub(crate) fn delivering(mut self, deliveries: Arc<dyn DeliveryHints>) -> Self {
        self.deliveries = Some(deliveries);
        self
    }

    pub(crate) fn announcing(mut self, announcer: Announcer) -> Self {
        self.announcer = Some(announcer);
        self
    }

    /// Tells this process's delivery loops of a change to a subscription it made, for the rows
    /// waiting in their lines (`SubscriptionChange`).
    fn subscription_changed(&self, change: SubscriptionChange) {
        if let Some(deliveries) = &self.deliveries {
            deliveries.changed(change);
        }
    }

    /// The setting `name` as a session sees it between statements, on PostgreSQL (for tests
    /// that a statement's or a transaction's own setting does not outlive it).
    #[cfg(feature = "test-support")]
    pub(crate) async fn setting(&self, name: &str) -> Result<Option<String>, StoreError> {
        use diesel::sql_types::Text;
        #[derive(QueryableByName)]
        struct Setting {
            #[diesel(sql_type = Text)]
            value: String,
        }
        let mut conn = self.conn().await?;
        if matches!(conn.db, crate::conn::Db::Sqlite(_)) {
            return Ok(None);
        }
        let setting: Setting = conn
            .get_result(
                diesel::sql_query("SELECT current_setting($1) AS value").bind::<Text, _>(name),
            )
            .await
            .map_err(crate::error::unexpected)?;
        Ok(Some(setting.value))
    }

    /// How a pooled connection runs the statement it has prepared whose text starts with
    /// `start`, on PostgreSQL: the plan `EXPLAIN` shows for it, and how many times it was run
    /// with a generic plan and with a custom one. `None` on SQLite or when it has none such.
    #[cfg(feature = "test-support")]
    pub(crate) async fn prepared_plan(
        &self,
        start: &str,
    ) -> Result<Option<crate::testing::PreparedPlan>, StoreError> {
        use diesel::OptionalExtension;
        use diesel::sql_types::{BigInt, Integer, Text};
        #[derive(QueryableByName)]
        struct Prepared {
            #[diesel(sql_type = Text)]
            name: String,
            #[diesel(sql_type = Integer)]
            parameters: i32,
            #[diesel(sql_type = BigInt)]
            generic_plans: i64,
            #[diesel(sql_type = BigInt)]
            custom_plans: i64,
        }
        #[derive(QueryableByName)]
        struct Line {
            #[diesel(sql_type = Text, column_name = "QUERY PLAN")]
            line: String,
        }
        let mut conn = self.conn().await?;
        if matches!(conn.db, crate::conn::Db::Sqlite(_)) {
            return Ok(None);
        }
        let prepared: Option<Prepared> = conn
            .get_result(
                diesel::sql_query(
                    "SELECT name, cardinality(parameter_types) AS parameters, generic_plans, \
                            custom_plans \
                       FROM pg_prepared_statements WHERE starts_with(statement, $1)",
                )
                .bind::<Text, _>(start),
            )
            .await
            .optional()
            .map_err(crate::error::unexpected)?;
        let Some(prepared) = prepared else {
            return Ok(None);
        };
        let execute = crate::testing::execute_with_nulls(&prepared.name, prepared.parameters);
        let lines: Vec<Line> = conn
            .load(diesel::sql_query(format!("EXPLAIN {execute}")))
            .await
            .map_err(crate::error::unexpected)?;
        Ok(Some(crate::testing::PreparedPlan {
            plan: lines
                .into_iter()
                .map(|l| l.line)
                .collect::<Vec<_>>()
                .join("\n"),
            generic_plans: prepared.generic_plans,
            custom_plans: prepared.custom_plans,
        }))
    }

    async fn conn(&self) -> Result<Conn, StoreError> {
        let conn = self.pools.get(self.work, None).await?;
        Ok(conn
            .delivering(self.deliveries.clone(), self.announcer.clone())
            .sealing_emails(self.email_sealer.clone()))
    }

    fn on_postgres(&self) -> bool {
        matches!(self.pools, Pools::Pg(_))
    }

    /// A connection within `wait` rather than the pool's own timeout.
    async fn conn_within(&self, wait: Duration) -> Result<Conn, StoreError> {
        let conn = self.pools.get(self.work, Some(wait)).await?;
        Ok(conn
            .delivering(self.deliveries.clone(), self.announcer.clone())
            .sealing_emails(self.email_sealer.clone()))
    }

    /// Whether the database answers a trivial query.
    pub(crate) fn pool_usage(&self) -> crate::conn::PoolUsage {
        self.pools.usage()
    }

    pub async fn ping(&self) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::sql_query("SELECT 1"))
            .await
            .map(drop)
            .map_err(crate::error::unexpected)
    }
}

/// `NotFound` unless exactly one row changed.
fn one_row(changed: usize) -> QueryResult<()> {
    if changed == 1 {
        Ok(())
    } else {
        Err(diesel::result::Error::NotFound)
    }
}
