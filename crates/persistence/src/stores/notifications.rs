//! `NotificationQueue`: claiming due deliveries fairly (`claim.rs`), recording their outcome
//! with the consecutive-failure counter and the disable email, archiving, resending, and test
//! events.

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::QueryFragment;
use holdfast_domain::ids::{EventId, NotificationId, PlatformId, WebhookId};
use holdfast_domain::ports::{
    ClaimLimits, Claimed, Delivery, Event, Finished, NotificationQueue, Recorded, ResendError,
    StoreError, TestEventError,
};
use holdfast_domain::scope::Scope;
use holdfast_domain::webhook::{EventType, Subscription};
use time::OffsetDateTime;

use super::SqlStore;
use super::claim::fair_due_ids;
use crate::conn::{Conn, Db, Executes, Loads, Lock};
use crate::error::query_error;
use crate::pg_statement::Unprepared;
use crate::query::StillPending;
use crate::schema::{events as e, notifications as n, webhooks as w};
use crate::timestamp::Instant;
use crate::webhook_rows::{NewNotificationRow, NotificationRow, WebhookRow};
use outcomes::{Commit, record_in_order};

mod outcomes;
mod test_event;

type ClaimedRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    OffsetDateTime,
    Option<WebhookRow>,
);

/// Leases the notifications `ids` that are still pending until `until`, and names them.
fn lease_of(
    ids: &[String],
    until: OffsetDateTime,
) -> impl Loads<'_, String> + QueryFragment<Pg> + Send {
    diesel::update(
        n::table
            .filter(n::id.eq_any(ids))
            .filter(n::state.eq(StillPending)),
    )
    .set(n::lease_until.eq(Some(until)))
    .returning(n::id)
}

/// The read of what the delivery of the pending notifications `ids` needs, planned for the
/// ids it is given (`Unprepared`).
fn claimed_rows_of(ids: &[String]) -> impl Loads<'_, ClaimedRow> + QueryFragment<Pg> + Send {
    Unprepared(
        n::table
            .inner_join(e::table)
            .left_join(w::table)
            .filter(n::id.eq_any(ids))
            .filter(n::state.eq(StillPending))
            .select((
                n::id,
                n::event_id,
                n::platform_id,
                n::webhook_id,
                n::event_type,
                e::data,
                e::created_on,
                w::all_columns.nullable(),
            )),
    )
}

/// The archive of the records attempted before `before`: bodies dropped, row kept. Found
/// through `notifications_archive_idx`, which holds only attempted records; its `NOT archived`
/// is written out, not bound, so that even a generic plan sees the index's condition implied.
fn archive_of(before: OffsetDateTime) -> impl Executes<'static> + QueryFragment<Pg> + Send {
    diesel::update(
        n::table
            .filter(diesel::dsl::not(n::archived))
            .filter(n::attempted_on.lt(Instant(before))),
    )
    .set((
        n::archived.eq(true),
        n::request_body.eq(None::<String>),
        n::response.eq(None::<String>),
    ))
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
    let leased: Vec<String> = conn.load(lease_of(&ids, lease_until)).await?;
    claimed_rows(conn, &leased).await
}

/// What the delivery of the pending notifications `ids` needs.
async fn claimed_rows(conn: &mut Conn, ids: &[String]) -> QueryResult<Vec<ClaimedRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    conn.load(claimed_rows_of(ids)).await
}

fn claimed(rows: Vec<ClaimedRow>) -> Result<Vec<Claimed>, StoreError> {
    rows.into_iter()
        .map(
            |(id, event_id, platform, webhook_id, event_type, event_data, created_on, webhook)| {
                Ok(Claimed {
                    id: NotificationId::from_trusted(id),
                    event_id: EventId::from_trusted(event_id),
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

/// The archive's statement as PostgreSQL is sent it (`testing::archive_statement`).
#[cfg(feature = "test-support")]
pub(crate) fn archive_statement() -> String {
    super::pg_sql_of(&archive_of(OffsetDateTime::UNIX_EPOCH))
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
        outcome: holdfast_domain::webhook::Outcome::Failed,
        endpoint_url: None,
        request_body: None,
        response: None,
        requests: 1,
        attempted_on: OffsetDateTime::UNIX_EPOCH,
    };
    vec![
        (
            "the claim's lease",
            super::pg_sql_of(&lease_of(&ids, OffsetDateTime::UNIX_EPOCH)),
        ),
        (
            "the read of the rows leased",
            super::pg_sql_of(&claimed_rows_of(&ids)),
        ),
        (
            "one outcome",
            super::pg_sql_of(&outcomes::outcome_of(&id, &finished)),
        ),
        (
            "a batch of outcomes",
            super::statement_sql(outcomes::RECORD_QUIETLY_PG),
        ),
    ]
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
            .execute(archive_of(before))
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

    async fn queue_test(
        &self,
        scope: &Scope,
        webhook: &WebhookId,
        event: &Event,
    ) -> Result<Delivery, TestEventError> {
        let mut conn = self.conn().await?;
        test_event::queue_test(&mut conn, scope, webhook, event).await
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
