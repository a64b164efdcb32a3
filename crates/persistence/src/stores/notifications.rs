//! `NotificationQueue`: claiming due deliveries fairly (`claim.rs`), recording their outcome
//! with the consecutive-failure counter and the disable email, archiving, and resending.

use diesel::prelude::*;
use holdfast_domain::ids::{NotificationId, PlatformId};
use holdfast_domain::ports::{
    ClaimLimits, Claimed, Delivery, Finished, NotificationQueue, Recorded, ResendError, StoreError,
};
use holdfast_domain::webhook::{EventType, Outcome, Subscription, disable_email, failure_disables};
use time::OffsetDateTime;

use super::SqlStore;
use super::claim::fair_due_ids;
use crate::conn::{Conn, Lock};
use crate::error::query_error;
use crate::schema::{events as e, notifications as n, users as u, webhooks as w};
use crate::timestamp::Instant;
use crate::webhook_rows::{NewNotificationRow, NotificationRow, WebhookRow};

type ClaimedRow = (String, String, String, OffsetDateTime, Option<WebhookRow>);

/// Leases the claimed rows and reads what their delivery needs.
async fn lease(
    conn: &mut Conn,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
    limits: ClaimLimits,
) -> QueryResult<Vec<ClaimedRow>> {
    conn.lock(Lock::NotificationClaim).await?;
    let ids = fair_due_ids(conn, now, limits).await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // Only what this update leased is handed out: a row another worker finished since the ids
    // were read is no longer pending, and is not sent again.
    let leased: Vec<String> = conn
        .load(
            diesel::update(
                n::table
                    .filter(n::id.eq_any(&ids))
                    .filter(n::state.eq("pending")),
            )
            .set(n::lease_until.eq(Some(lease_until)))
            .returning(n::id),
        )
        .await?;
    if leased.is_empty() {
        return Ok(Vec::new());
    }
    conn.load(
        n::table
            .inner_join(e::table)
            .left_join(w::table)
            .filter(n::id.eq_any(&leased))
            .select((
                n::id,
                n::event_type,
                e::data,
                n::created_on,
                w::all_columns.nullable(),
            )),
    )
    .await
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

#[async_trait::async_trait]
impl NotificationQueue for SqlStore {
    async fn claim_notifications(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limits: ClaimLimits,
    ) -> Result<Vec<Claimed>, StoreError> {
        if limits.batch == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        let rows = conn
            .transaction(async |conn| lease(conn, now, lease_until, limits).await)
            .await
            .map_err(query_error("notifications"))?;
        rows.into_iter()
            .map(|(id, event_type, event_data, created_on, webhook)| {
                Ok(Claimed {
                    id: NotificationId::from_trusted(id),
                    event_type,
                    event_data,
                    created_on,
                    subscription: webhook.map(Subscription::try_from).transpose()?,
                })
            })
            .collect()
    }

    #[tracing::instrument(
        skip_all,
        fields(notification = %id, outcome = finished.outcome.as_str()),
        err
    )]
    async fn complete_notification(
        &self,
        id: &NotificationId,
        finished: &Finished,
        service_name: &str,
    ) -> Result<Recorded, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let mut recorded = Recorded {
                recorded: false,
                disabled: false,
                email_queued: false,
            };
            // Only a pending notification takes an outcome: of two workers finishing the same
            // notification (a lease that ran out), the first one counts.
            let webhook: Option<String> = conn
                .get_result(
                    diesel::update(
                        n::table
                            .filter(n::id.eq(id.as_str()))
                            .filter(n::state.eq("pending")),
                    )
                    .set((
                        n::state.eq(finished.outcome.as_str()),
                        n::endpoint_url.eq(&finished.endpoint_url),
                        n::request_body.eq(&finished.request_body),
                        n::response.eq(&finished.response),
                        n::requests.eq(i32::try_from(finished.requests).unwrap_or(i32::MAX)),
                        n::attempted_on.eq(Some(finished.attempted_on)),
                        n::lease_until.eq(None::<OffsetDateTime>),
                    ))
                    .returning(n::webhook_id),
                )
                .await
                .optional()?;
            let Some(webhook) = webhook else {
                return Ok(recorded);
            };
            recorded.recorded = true;
            match finished.outcome {
                Outcome::Skipped => {}
                Outcome::Succeeded => {
                    conn.execute(
                        diesel::update(w::table.filter(w::id.eq(&webhook)))
                            .set(w::consecutive_failures.eq(0)),
                    )
                    .await?;
                }
                Outcome::Failed => {
                    (recorded.disabled, recorded.email_queued) =
                        count_failure(conn, &webhook, id, finished, service_name).await?;
                }
            }
            diesel::QueryResult::Ok(recorded)
        })
        .await
        .map_err(query_error("notifications"))
    }

    async fn archive_deliveries(&self, before: OffsetDateTime) -> Result<u64, StoreError> {
        let mut conn = self.conn().await?;
        let archived = conn
            .execute(
                diesel::update(
                    n::table
                        .filter(n::archived.eq(false))
                        .filter(n::attempted_on.lt(Instant(before))),
                )
                .set((
                    n::archived.eq(true),
                    n::request_body.eq(None::<String>),
                    n::response.eq(None::<String>),
                )),
            )
            .await
            .map_err(query_error("notifications"))?;
        Ok(u64::try_from(archived).unwrap_or(0))
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
        Ok(Delivery::try_from(row)?)
    }
}
