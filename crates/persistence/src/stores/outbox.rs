//! Writing an event into the outbox, with its fan-out: one notification per active subscription
//! of the same platform and mode that names the event type, in the caller's SQL transaction.

use diesel::prelude::*;
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
/// transaction commits them with the change they report.
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
    for (webhook, _) in active
        .iter()
        .filter(|(_, events)| events.split(',').any(|t| t == event_type))
    {
        // One statement per row: diesel has no multi-row insert for SQLite.
        conn.execute(diesel::insert_into(n::table).values(NewNotificationRow::of(event, webhook)))
            .await?;
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
