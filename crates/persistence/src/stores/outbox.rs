//! Writing an event into the outbox, with its fan-out: one notification per active subscription
//! of the same platform and mode that names the event type, in the caller's SQL transaction.

use diesel::prelude::*;
use holdfast_domain::ids::NotificationId;
use holdfast_domain::ports::{Claimed, Event, EventLog, StoreError, StoredEvent};
use holdfast_domain::scope::Scope;
use holdfast_domain::webhook::Subscription;

use super::SqlStore;
use crate::conn::Conn;
use crate::error::query_error;
use crate::query::{scoped, scoped_to};
use crate::schema::{events as e, notifications as n, webhooks as w};
use crate::webhook_rows::{EventRow, NewEventRow, NewNotificationRow, WebhookRow};

/// Writes `event` (its data serialised as `data`) and its notifications; the caller's
/// transaction commits them with the change they report. Where this process delivers webhooks
/// and its waiting lines have room, a notification is leased at insert and handed to its
/// deliverers once the transaction commits (`hand_off`); otherwise it waits for a claim.
pub async fn write_event(conn: &mut Conn, event: &Event, data: &str) -> QueryResult<()> {
    let event_type = event.data.event_type();
    // Subscriptions per platform are few: match the type here rather than in SQL.
    let active: Vec<WebhookRow> = conn
        .load(scoped_to(w::table, &event.platform_id, event.mode).filter(w::active.eq(true)))
        .await?;
    let subscribed: Vec<WebhookRow> = active
        .into_iter()
        .filter(|row| row.events.split(',').any(|t| t == event_type.as_str()))
        .collect();
    write_event_to(conn, event, data, subscribed).await?;
    Ok(())
}

/// Writes `event` and one notification of it for each of `subscribed`, as `write_event` does;
/// returns the notifications' ids.
pub async fn write_event_to(
    conn: &mut Conn,
    event: &Event,
    data: &str,
    subscribed: Vec<WebhookRow>,
) -> QueryResult<Vec<NotificationId>> {
    conn.execute(diesel::insert_into(e::table).values(NewEventRow::of(event, data)))
        .await?;
    let event_type = event.data.event_type();
    let webhooks: Vec<&str> = subscribed.iter().map(|row| row.id.as_str()).collect();
    let reservation = conn.reserve_hand_off(&webhooks);
    let mut handed = Vec::new();
    let mut written = Vec::with_capacity(subscribed.len());
    for webhook in &subscribed {
        // One statement per row: diesel has no multi-row insert for SQLite.
        let row = NewNotificationRow::of(event, &webhook.id);
        let id = NotificationId::from_trusted(row.id.clone());
        let lease_until = reservation
            .as_ref()
            .filter(|r| r.admits(&webhook.id))
            .map(|r| {
                // A lease past what is stored is no lease: the claim takes the row.
                time::Duration::try_from(r.lease())
                    .ok()
                    .and_then(|lease| event.created_on.checked_add(lease))
                    .and_then(holdfast_domain::instant::within_range)
                    .unwrap_or(event.created_on)
            });
        conn.execute(
            diesel::insert_into(n::table).values(NewNotificationRow { lease_until, ..row }),
        )
        .await?;
        written.push(id.clone());
        if lease_until.is_some() {
            // What the delivery needs, as this transaction saw it: nothing is read back.
            let subscription = Subscription::try_from(webhook.clone())
                .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))?;
            handed.push(Claimed {
                id,
                event_id: event.id.clone(),
                platform_id: event.platform_id.clone(),
                webhook_id: subscription.id.clone(),
                event_type: event_type.as_str().to_owned(),
                event_data: data.to_owned(),
                created_on: event.created_on,
                subscription: Some(subscription),
            });
        }
    }
    let left_for_claim = handed.len() < subscribed.len();
    if let Some(reservation) = reservation {
        conn.hand_off_at_commit(reservation, handed);
    }
    if left_for_claim {
        conn.poke_deliverers();
    }
    Ok(written)
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
