//! `NotificationQueue`: claiming due deliveries fairly (`claim.rs`), recording their outcome
//! with the consecutive-failure counter and the disable email, archiving, and resending.

use std::collections::HashSet;

use diesel::prelude::*;
use diesel::sql_types::Text;
use holdfast_domain::ids::{NotificationId, PlatformId, WebhookId};
use holdfast_domain::ports::{
    ClaimLimits, Claimed, Delivery, Finished, NotificationQueue, Recorded, ResendError, StoreError,
};
use holdfast_domain::webhook::{EventType, Outcome, Subscription, disable_email, failure_disables};
use time::OffsetDateTime;

use super::SqlStore;
use super::claim::fair_due_ids;
use crate::conn::{Conn, Db, Lock};
use crate::error::query_error;
use crate::pg_statement::{Bind, Statement, Unprepared};
use crate::query::{StillPending, still_pending};
use crate::schema::{events as e, notifications as n, users as u, webhooks as w};
use crate::timestamp::Instant;
use crate::webhook_rows::{NewNotificationRow, NotificationRow, WebhookRow};

type ClaimedRow = (
    String,
    String,
    String,
    String,
    String,
    OffsetDateTime,
    Option<WebhookRow>,
);

/// Leases the notifications `ids` (`&[String]`) that are still pending until `until`, and
/// names them. A macro, for `keyed_pending_statements` to show the same statement.
macro_rules! lease_of {
    ($ids:expr, $until:expr) => {
        diesel::update(
            n::table
                .filter(n::id.eq_any($ids))
                .filter(n::state.eq(StillPending)),
        )
        .set(n::lease_until.eq(Some($until)))
        .returning(n::id)
    };
}

/// The read of what the delivery of the pending notifications `ids` needs.
macro_rules! claimed_rows_of {
    ($ids:expr) => {
        n::table
            .inner_join(e::table)
            .left_join(w::table)
            .filter(n::id.eq_any($ids))
            .filter(n::state.eq(StillPending))
            .select((
                n::id,
                n::platform_id,
                n::webhook_id,
                n::event_type,
                e::data,
                e::created_on,
                w::all_columns.nullable(),
            ))
    };
}

/// The archive of the records attempted before `before` (an `Instant`): bodies dropped, row
/// kept. Found through `notifications_archive_idx`, which holds only attempted records; its
/// `NOT archived` is written out, not bound, so that even a generic plan sees the index's
/// condition implied.
macro_rules! archive_of {
    ($before:expr) => {
        diesel::update(
            n::table
                .filter(diesel::dsl::not(n::archived))
                .filter(n::attempted_on.lt($before)),
        )
        .set((
            n::archived.eq(true),
            n::request_body.eq(None::<String>),
            n::response.eq(None::<String>),
        ))
    };
}

/// The record of one outcome, `finished`, of the notification `id` if it is still pending.
macro_rules! outcome_of {
    ($id:expr, $finished:expr) => {
        diesel::update(pending($id))
            .set(final_columns($finished))
            .returning(n::webhook_id)
    };
}

/// Leases the claimed rows and reads what their delivery needs.
async fn lease(
    conn: &mut Conn,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
    limits: ClaimLimits,
    ended: &[&str],
    waiting: &[(&str, i32)],
) -> QueryResult<Vec<ClaimedRow>> {
    conn.lock(Lock::NotificationClaim).await?;
    let ids = fair_due_ids(conn, now, limits, ended, waiting).await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // Only what this update leased is handed out: a row another worker finished since the ids
    // were read is no longer pending, and is not sent again.
    let leased: Vec<String> = conn.load(lease_of!(&ids, lease_until)).await?;
    claimed_rows(conn, &leased).await
}

/// What the delivery of the pending notifications `ids` needs.
async fn claimed_rows(conn: &mut Conn, ids: &[String]) -> QueryResult<Vec<ClaimedRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    conn.load(Unprepared(claimed_rows_of!(ids))).await
}

fn claimed(rows: Vec<ClaimedRow>) -> Result<Vec<Claimed>, StoreError> {
    rows.into_iter()
        .map(
            |(id, platform, webhook_id, event_type, event_data, created_on, webhook)| {
                Ok(Claimed {
                    id: NotificationId::from_trusted(id),
                    platform_id: PlatformId::from_trusted(platform),
                    webhook_id: WebhookId::from_trusted(webhook_id),
                    event_type,
                    event_data,
                    created_on,
                    subscription: webhook.map(Subscription::try_from).transpose()?,
                })
            },
        )
        .collect()
}

/// Counts a failure against `webhook`, disabling it at the limit and queueing the email to its
/// creator; whether it disabled it and whether an email was queued.
async fn count_failure(
    conn: &mut Conn,
    webhook: &str,
    notification: &NotificationId,
    finished: &Finished,
    service_name: &str,
) -> QueryResult<(bool, bool)> {
    let this = w::table.filter(w::id.eq(webhook));
    #[expect(
        clippy::arithmetic_side_effects,
        reason = "SQL arithmetic, done by the database in its own types, not by Rust"
    )]
    let (failures, active): (i32, bool) = conn
        .get_result(
            diesel::update(this)
                .set(w::consecutive_failures.eq(w::consecutive_failures + 1))
                .returning((w::consecutive_failures, w::active)),
        )
        .await?;
    if !active || !failure_disables(u32::try_from(failures).unwrap_or(u32::MAX)) {
        return Ok((false, false));
    }
    let row: WebhookRow = conn
        .get_result(diesel::update(this).set(w::active.eq(false)))
        .await?;
    let to: Option<String> = conn
        .first(
            u::table
                .filter(u::id.eq(&row.creator_id))
                .filter(u::platform_id.eq(&row.platform_id))
                .select(u::email),
        )
        .await
        .optional()?;
    let Some(to) = to else {
        return Ok((true, false));
    };
    let subscription = Subscription::try_from(row)
        .map_err(|e| diesel::result::Error::DeserializationError(e.to_string().into()))?;
    let email = disable_email(service_name, &to, &subscription);
    let suffix = notification
        .as_str()
        .trim_start_matches(NotificationId::PREFIX);
    super::emails::queue_email(
        conn,
        &format!("eml_{suffix}"),
        &email,
        finished.attempted_on,
    )
    .await?;
    Ok((true, true))
}

/// Both backends: deletes the records of every subscription that no longer exists. The
/// subscriptions named by records are walked one index probe each (`notifications_history_idx`
/// starts with `webhook_id`), so the statement costs a probe per subscription, not a read of
/// every record. Only PostgreSQL can hold such records (it keeps no foreign key from
/// notifications to subscriptions; docs/decisions.md, "Fan-out locks no parent row").
const DELETE_ORPHANED: &str = "WITH RECURSIVE subs (webhook_id) AS (
    SELECT (SELECT webhook_id FROM notifications ORDER BY webhook_id LIMIT 1)
    UNION ALL
    SELECT (SELECT n.webhook_id FROM notifications n
             WHERE n.webhook_id > s.webhook_id ORDER BY n.webhook_id LIMIT 1)
      FROM subs s
     WHERE s.webhook_id IS NOT NULL
)
DELETE FROM notifications
 WHERE webhook_id IN (SELECT s.webhook_id FROM subs s
                       WHERE s.webhook_id IS NOT NULL
                         AND NOT EXISTS (SELECT 1 FROM webhooks w WHERE w.id = s.webhook_id))";

/// PostgreSQL: a batch of successes and skips recorded in one statement, with the counters of
/// the subscriptions that succeeded reset. The reset writes only a counter that is not already
/// 0, so deliveries to a healthy subscription never lock its row (they all queued on it).
/// Each row is found by its key ([`StillPending`]).
///
/// Its last bind, true when the statement is its own transaction, lets it commit without
/// waiting for the disk unless it reset a counter (docs/decisions.md, "Recorded successes commit
/// asynchronously"): a crash of PostgreSQL may then forget a success, which is sent again, but
/// never a reset, whose loss would let failures that were not consecutive disable a
/// subscription. `relaxed` relies on PostgreSQL evaluating a subquery's volatile output even
/// when nothing reads it.
const RECORD_QUIETLY_PG: &str = concat!(
    "\
WITH v AS (
    SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int4[],
                         ?::timestamptz[])
        AS v (id, state, endpoint_url, request_body, response, requests, attempted_on)
), done AS (
    UPDATE notifications n
       SET state = v.state, endpoint_url = v.endpoint_url, request_body = v.request_body,
           response = v.response, requests = v.requests, attempted_on = v.attempted_on,
           lease_until = NULL
      FROM v
     WHERE n.id = v.id AND n.state = ",
    still_pending!(),
    "
 RETURNING n.id, n.webhook_id, v.state
), reset AS (
    UPDATE webhooks w
       SET consecutive_failures = 0
     WHERE w.id IN (SELECT webhook_id FROM done WHERE state = 'succeeded')
       AND w.consecutive_failures <> 0
 RETURNING w.id
)
SELECT done.id
  FROM done,
       (SELECT CASE WHEN ? AND NOT EXISTS (SELECT FROM reset)
                    THEN set_config('synchronous_commit', 'off', true) END) AS relaxed"
);

/// The final columns of one notification.
#[derive(AsChangeset)]
#[diesel(table_name = n, treat_none_as_null = true)]
struct FinalColumns {
    state: &'static str,
    endpoint_url: Option<String>,
    request_body: Option<String>,
    response: Option<String>,
    requests: i32,
    attempted_on: Option<Instant>,
    lease_until: Option<Instant>,
}

fn final_columns(finished: &Finished) -> FinalColumns {
    FinalColumns {
        state: finished.outcome.as_str(),
        endpoint_url: finished.endpoint_url.clone(),
        request_body: finished.request_body.clone(),
        response: finished.response.clone(),
        requests: requests(finished),
        attempted_on: Some(Instant(finished.attempted_on)),
        lease_until: None,
    }
}

fn requests(finished: &Finished) -> i32 {
    i32::try_from(finished.requests).unwrap_or(i32::MAX)
}

/// How a batch of outcomes commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Commit {
    /// In a transaction that records a failure: its counter, disable and email wait for the
    /// disk, and so does everything else in it.
    Durable,
    /// One statement, its own transaction, which need not wait for the disk unless it resets a
    /// counter (`RECORD_QUIETLY_PG`).
    Relaxed,
}

impl Commit {
    fn of(outcomes: &[(NotificationId, Finished)]) -> Self {
        if outcomes
            .iter()
            .any(|(_, finished)| matches!(finished.outcome, Outcome::Failed))
        {
            Self::Durable
        } else {
            Self::Relaxed
        }
    }
}

/// Records successes and skips (no failure among `outcomes`), marking in `recorded` those that
/// were still pending.
async fn record_quietly(
    conn: &mut Conn,
    outcomes: &[(NotificationId, Finished)],
    recorded: &mut [Recorded],
    commit: Commit,
) -> QueryResult<()> {
    if outcomes.is_empty() {
        return Ok(());
    }
    let done: HashSet<String> = match conn.db {
        Db::Pg(ref mut pg) => {
            let ids: Vec<&str> = outcomes.iter().map(|(id, _)| id.as_str()).collect();
            let states: Vec<&str> = outcomes.iter().map(|(_, f)| f.outcome.as_str()).collect();
            let column = |pick: fn(&Finished) -> Option<&str>| -> Vec<Option<&str>> {
                outcomes.iter().map(|(_, f)| pick(f)).collect()
            };
            let urls = column(|f| f.endpoint_url.as_deref());
            let bodies = column(|f| f.request_body.as_deref());
            let responses = column(|f| f.response.as_deref());
            let counts: Vec<i32> = outcomes.iter().map(|(_, f)| requests(f)).collect();
            let times: Vec<OffsetDateTime> = outcomes.iter().map(|(_, f)| f.attempted_on).collect();
            let statement = Statement::<Text>::new(
                RECORD_QUIETLY_PG,
                vec![
                    Bind::Texts(&ids),
                    Bind::Texts(&states),
                    Bind::OptTexts(&urls),
                    Bind::OptTexts(&bodies),
                    Bind::OptTexts(&responses),
                    Bind::Ints(&counts),
                    Bind::Times(&times),
                    Bind::Bool(commit == Commit::Relaxed),
                ],
            );
            // Prepared, and planned once on a delivery connection (`DELIVERY_PLANNING`).
            let done: Vec<String> = diesel_async::RunQueryDsl::load(statement, &mut **pg).await?;
            done.into_iter().collect()
        }
        Db::Sqlite(_) => {
            let mut done = HashSet::new();
            let mut succeeded = Vec::new();
            for (id, finished) in outcomes {
                if let Some(webhook) = record_one(conn, id, finished).await? {
                    done.insert(id.to_string());
                    if matches!(finished.outcome, Outcome::Succeeded) {
                        succeeded.push(webhook);
                    }
                }
            }
            if !succeeded.is_empty() {
                conn.execute(
                    diesel::update(
                        w::table
                            .filter(w::id.eq_any(&succeeded))
                            .filter(w::consecutive_failures.ne(0)),
                    )
                    .set(w::consecutive_failures.eq(0)),
                )
                .await?;
            }
            done
        }
    };
    for ((id, _), recorded) in outcomes.iter().zip(recorded) {
        recorded.recorded = done.contains(id.as_str());
    }
    Ok(())
}

/// Records `outcomes` in their order: successes and skips together, failures one by one between
/// them, so the counter sees the outcomes in their order. In the caller's transaction when it
/// writes more than one statement (`Commit::Durable`).
#[expect(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "`recorded` is as long as `outcomes`, and every index and range comes from \
              enumerating `outcomes`"
)]
async fn record_in_order(
    conn: &mut Conn,
    outcomes: &[(NotificationId, Finished)],
    service_name: &str,
    commit: Commit,
) -> QueryResult<Vec<Recorded>> {
    let mut recorded = vec![Recorded::NOT; outcomes.len()];
    let mut quiet_from = 0;
    for (i, (id, finished)) in outcomes.iter().enumerate() {
        if matches!(finished.outcome, Outcome::Failed) {
            let quiet = quiet_from..i;
            let (before, marks) = (&outcomes[quiet.clone()], &mut recorded[quiet]);
            record_quietly(conn, before, marks, Commit::Durable).await?;
            recorded[i] = record_failure(conn, id, finished, service_name).await?;
            quiet_from = i + 1;
        }
    }
    let rest = quiet_from..;
    record_quietly(conn, &outcomes[rest.clone()], &mut recorded[rest], commit).await?;
    Ok(recorded)
}

/// The notification `id` while it is pending: of two workers finishing the same notification
/// (a lease that ran out), the first one counts.
fn pending(id: &NotificationId) -> PendingOne<'_> {
    n::table
        .filter(n::id.eq(id.as_str()))
        .filter(n::state.eq(StillPending))
}

type PendingOne<'a> = diesel::dsl::Filter<
    diesel::dsl::Filter<n::table, diesel::dsl::Eq<n::id, &'a str>>,
    diesel::dsl::Eq<n::state, StillPending>,
>;

/// Records `id`'s outcome if it is still pending; its subscription's id if it was.
async fn record_one(
    conn: &mut Conn,
    id: &NotificationId,
    finished: &Finished,
) -> QueryResult<Option<String>> {
    conn.get_result(outcome_of!(id, finished)).await.optional()
}

/// The archive's statement as PostgreSQL is sent it (`testing::archive_statement`).
#[cfg(feature = "test-support")]
pub(crate) fn archive_statement() -> String {
    super::pg_sql_of(&archive_of!(Instant(OffsetDateTime::UNIX_EPOCH)))
}

/// An idle worker's probe for pending notifications (`testing::any_pending_statement`).
#[cfg(feature = "test-support")]
pub(crate) fn any_pending_statement() -> &'static str {
    ANY_PENDING
}

/// The hourly sweep of deleted subscriptions' records (`testing::orphan_sweep_statement`).
#[cfg(feature = "test-support")]
pub(crate) fn orphan_sweep_statement() -> &'static str {
    DELETE_ORPHANED
}

/// This module's statements that find notifications by their key while they are pending, as
/// PostgreSQL is sent them (`testing::statements_finding_pending_rows_by_key`).
#[cfg(feature = "test-support")]
pub(super) fn keyed_pending_statements() -> Vec<(&'static str, String)> {
    let ids = [String::new()];
    let id = NotificationId::from_trusted(String::new());
    let finished = Finished {
        outcome: Outcome::Failed,
        endpoint_url: None,
        request_body: None,
        response: None,
        requests: 1,
        attempted_on: OffsetDateTime::UNIX_EPOCH,
    };
    vec![
        (
            "the claim's lease",
            super::pg_sql_of(&lease_of!(&ids, OffsetDateTime::UNIX_EPOCH)),
        ),
        (
            "the read of the rows leased",
            super::pg_sql_of(&claimed_rows_of!(&ids)),
        ),
        (
            "one outcome",
            super::pg_sql_of(&outcome_of!(&id, &finished)),
        ),
        (
            "a batch of outcomes",
            super::statement_sql(RECORD_QUIETLY_PG),
        ),
    ]
}

/// Records a failure and counts it against its subscription.
async fn record_failure(
    conn: &mut Conn,
    id: &NotificationId,
    finished: &Finished,
    service_name: &str,
) -> QueryResult<Recorded> {
    let Some(webhook) = record_one(conn, id, finished).await? else {
        return Ok(Recorded::NOT);
    };
    let (disabled, email_queued) =
        count_failure(conn, &webhook, id, finished, service_name).await?;
    Ok(Recorded {
        recorded: true,
        disabled,
        email_queued,
    })
}

/// Whether any notification is pending, read off the pending rows' partial index
/// (`notifications_pending_idx`). The state is written in the SQL, not bound: a delivery
/// connection keeps generic plans, and a generic plan for `state = $1` cannot prove the
/// index's predicate, so it read the whole table (25–75 ms on a small bench database, where
/// this takes well under one).
const ANY_PENDING: &str =
    "SELECT EXISTS (SELECT 1 FROM notifications WHERE state = 'pending') AS pending";

#[derive(QueryableByName)]
struct AnyPending {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    pending: bool,
}

#[async_trait::async_trait]
impl NotificationQueue for SqlStore {
    async fn claim_notifications(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limits: ClaimLimits,
        ended: &[NotificationId],
        waiting: &[(WebhookId, u32)],
    ) -> Result<Vec<Claimed>, StoreError> {
        if limits.batch == 0 {
            return Ok(Vec::new());
        }
        let ended: Vec<&str> = ended.iter().map(NotificationId::as_str).collect();
        let waiting: Vec<(&str, i32)> = waiting
            .iter()
            .map(|(webhook, count)| (webhook.as_str(), i32::try_from(*count).unwrap_or(i32::MAX)))
            .collect();
        let mut conn = self.conn().await?;
        let rows = conn
            .transaction(async |conn| lease(conn, now, lease_until, limits, &ended, &waiting).await)
            .await
            .map_err(query_error("notifications"))?;
        claimed(rows)
    }

    async fn any_pending(&self) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        conn.get_result::<AnyPending, _>(diesel::sql_query(ANY_PENDING))
            .await
            .map(|row| row.pending)
            .map_err(query_error("notifications"))
    }

    #[tracing::instrument(skip_all, fields(notifications = outcomes.len()), err)]
    async fn complete_notifications(
        &self,
        outcomes: &[(NotificationId, Finished)],
        service_name: &str,
    ) -> Result<Vec<Recorded>, StoreError> {
        let mut conn = self.conn().await?;
        let commit = Commit::of(outcomes);
        if commit == Commit::Relaxed && matches!(conn.db, Db::Pg(_)) {
            // Without a failure the batch is one statement on PostgreSQL, its own transaction:
            // no BEGIN and COMMIT round trips, and no wait for the disk unless it resets a
            // counter.
            return record_in_order(&mut conn, outcomes, service_name, commit)
                .await
                .map_err(query_error("notifications"));
        }
        let durable = Commit::Durable;
        conn.transaction(async |conn| record_in_order(conn, outcomes, service_name, durable).await)
            .await
            .map_err(query_error("notifications"))
    }

    async fn archive_deliveries(&self, before: OffsetDateTime) -> Result<u64, StoreError> {
        let mut conn = self.conn().await?;
        let archived = conn
            .execute(archive_of!(Instant(before)))
            .await
            .map_err(query_error("notifications"))?;
        Ok(u64::try_from(archived).unwrap_or(0))
    }

    async fn delete_orphaned_deliveries(&self) -> Result<u64, StoreError> {
        let mut conn = self.conn().await?;
        let deleted = conn
            .execute(diesel::sql_query(DELETE_ORPHANED))
            .await
            .map_err(query_error("notifications"))?;
        Ok(u64::try_from(deleted).unwrap_or(0))
    }

    async fn resend(
        &self,
        platform: &PlatformId,
        id: &NotificationId,
        new_id: &NotificationId,
        now: OffsetDateTime,
    ) -> Result<Delivery, ResendError> {
        let mut conn = self.conn().await?;
        let original: NotificationRow = conn
            .first(
                n::table
                    .filter(n::platform_id.eq(platform.as_str()))
                    .filter(n::id.eq(id.as_str())),
            )
            .await
            .optional()
            .map_err(query_error("notifications"))?
            .ok_or(ResendError::NotFound)?;
        if !original
            .event_type
            .parse::<EventType>()
            .is_ok_and(EventType::is_transaction)
        {
            return Err(ResendError::NotTransaction);
        }
        if original.archived {
            return Err(ResendError::Archived);
        }
        let active: bool = conn
            .first(
                w::table
                    .filter(w::id.eq(&original.webhook_id))
                    .select(w::active),
            )
            .await
            .map_err(query_error("webhooks"))?;
        if !active {
            return Err(ResendError::Inactive);
        }
        let row: NotificationRow = conn
            .get_result(
                diesel::insert_into(n::table)
                    .values(NewNotificationRow::resend(&original, new_id, now)),
            )
            .await
            .map_err(query_error("notifications"))?;
        // Claimed at once, not at the next poll.
        conn.poke_deliverers();
        Ok(Delivery::try_from(row)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_batch_without_a_failure_may_commit_relaxed() {
        use Outcome::{Failed, Skipped, Succeeded};
        let cases = [
            (vec![Succeeded], Commit::Relaxed),
            (vec![Skipped], Commit::Relaxed),
            (vec![Succeeded, Skipped, Succeeded], Commit::Relaxed),
            (vec![Failed], Commit::Durable),
            (vec![Succeeded, Failed, Skipped], Commit::Durable),
        ];
        for (outcomes, expected) in cases {
            let batch: Vec<(NotificationId, Finished)> = outcomes
                .iter()
                .enumerate()
                .map(|(n, &outcome)| {
                    let finished = Finished {
                        outcome,
                        endpoint_url: None,
                        request_body: None,
                        response: None,
                        requests: 1,
                        attempted_on: OffsetDateTime::UNIX_EPOCH,
                    };
                    (NotificationId::from_suffix(&n.to_string()), finished)
                })
                .collect();
            assert_eq!(Commit::of(&batch), expected, "{outcomes:?}");
        }
    }
}
