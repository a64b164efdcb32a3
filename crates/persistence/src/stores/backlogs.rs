//! What waits to go out, for an operator's gauges: undelivered notifications (how many, and
//! since when the oldest) and unsent emails. Read when metrics are scraped, not on any request.

use diesel::prelude::*;
use holdfast_domain::ports::StoreError;
use time::OffsetDateTime;

use super::SqlStore;
use crate::error::query_error;
use crate::schema::{emails as m, notifications as n};

/// The backlogs at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backlogs {
    /// Notifications not yet delivered or given up on.
    pub notifications: u64,
    /// When the oldest of them was created.
    pub oldest_notification: Option<OffsetDateTime>,
    /// Emails not yet sent or given up on.
    pub emails: u64,
}

fn count(rows: i64) -> u64 {
    u64::try_from(rows).unwrap_or(0)
}

impl SqlStore {
    /// Three small reads: `(state, …)` and the outbox's columns are indexed for the claims.
    pub async fn backlogs(&self) -> Result<Backlogs, StoreError> {
        let mut conn = self.conn().await?;
        let pending = || n::table.filter(n::state.eq("pending"));
        let notifications: i64 = conn
            .get_result(pending().count())
            .await
            .map_err(query_error("notifications"))?;
        let oldest_notification: Option<OffsetDateTime> = conn
            .load(
                pending()
                    .select(n::created_on)
                    .order(n::created_on.asc())
                    .limit(1),
            )
            .await
            .map_err(query_error("notifications"))?
            .into_iter()
            .next();
        let emails: i64 = conn
            .get_result(
                m::table
                    .filter(m::sent_on.is_null())
                    .filter(m::failed_on.is_null())
                    .count(),
            )
            .await
            .map_err(query_error("emails"))?;
        Ok(Backlogs {
            notifications: count(notifications),
            oldest_notification,
            emails: count(emails),
        })
    }
}
