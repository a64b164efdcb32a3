//! Writing an event into the outbox, with its fan-out: one notification per active subscription
//! of the same platform and mode that names the event type, in the caller's SQL transaction.

use diesel::prelude::*;
use holdfast_domain::ids::NotificationId;
use holdfast_domain::ports::{Event, EventLog, StoreError, StoredEvent};
use holdfast_domain::scope::Scope;

use super::SqlStore;
use crate::conn::Conn;
use crate::error::query_error;
use crate::query::{scoped, scoped_to};
use crate::schema::{events as e, notifications as n, webhooks as w};
use crate::webhook_rows::EventRow;
use crate::webhook_rows::{NewEventRow, NewNotificationRow};

/// Writes `event` (its data serialised as `data`) and its notifications; the caller's
/// transaction commits them with the change they report. Where this process delivers webhooks
/// and has room, the notifications are leased at insert and handed to its deliverers once the
/// transaction commits (`hand_off`); otherwise they wait for a claim.
pub async fn write_event(conn: &mut Conn, event: &Event, data: &str) -> QueryResult<()> {
    conn.execute(diesel::insert_into(e::table).values(NewEventRow::of(event, data)))
        .await?;
    let event_type = event.data.event_type().as_str();
    // Subscriptions per platform are few: match the type here rather than in SQL.
    let active: Vec<(String, String)> = conn
        .load(
            scoped_to(w::table, &event.platform_id, event.mode)
                .filter(w::active.eq(true))
                .select((w::id, w::events)),
        )
        .await?;
    let subscribed: Vec<&str> = active
        .iter()
        .filter(|(_, events)| events.split(',').any(|t| t == event_type))
        .map(|(webhook, _)| webhook.as_str())
        .collect();
    let reservation = conn.reserve_hand_off(&event.platform_id, subscribed.len());
    let lease_until = reservation.as_ref().map(|r| event.created_on + r.lease());
    let written = subscribed.len();
    let mut handed = Vec::new();
    for webhook in subscribed {
        // One statement per row: diesel has no multi-row insert for SQLite.
        let row = NewNotificationRow::of(event, webhook).leased_until(lease_until);
        if reservation.is_some() {
            handed.push(NotificationId::from_trusted(row.id.clone()));
        }
        conn.execute(diesel::insert_into(n::table).values(row))
            .await?;
    }
    match reservation {
        Some(reservation) => conn.hand_off_at_commit(reservation, handed),
        None if written > 0 => conn.poke_deliverers(),
        None => {}
    }
    Ok(())
}

/// `write_event`, with the event's `data` serialised here: for writes inside a transaction.
pub async fn write_event_data(conn: &mut Conn, event: &Event) -> QueryResult<()> {
    let data = serde_json::to_string(&event.data)
        .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
    write_event(conn, event, &data).await
}

#[async_trait::async_trait]
impl EventLog for SqlStore {
    async fn list_events(&self, scope: &Scope) -> Result<Vec<StoredEvent>, StoreError> {
        let mut conn = self.conn().await?;
        let rows = conn
            .load::<EventRow, _>(scoped(e::table, scope).order(e::id.asc()))
            .await
            .map_err(query_error("events"))?;
        Ok(rows.into_iter().map(StoredEvent::from).collect())
    }
}
