//! Writing an event into the outbox, with its fan-out: one notification per active subscription
//! of the same platform and mode that names the event type, in the caller's SQL transaction.

use diesel::QueryableByName;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Nullable, Text};
use holdfast_domain::ids::NotificationId;
use holdfast_domain::ports::{Claimed, Event, EventLog, StoreError, StoredEvent};
use holdfast_domain::scope::Scope;
use holdfast_domain::webhook::Subscription;
use time::OffsetDateTime;

use super::SqlStore;
use crate::conn::{Conn, Db};
use crate::error::query_error;
use crate::pg_statement::{Bind, Statement, Unprepared};
use crate::query::{scoped, scoped_to};
use crate::schema::{events as e, notifications as n, webhooks as w};
use crate::timestamp::Ts;
use crate::webhook_rows::{EventRow, NewEventRow, NewNotificationRow, WebhookRow};

/// Writes `event` (its data serialised as `data`) and its notifications; the caller's
/// transaction commits them with the change they report. Where this process delivers webhooks
/// and has room, a notification is leased at insert and handed to its deliverers once the
/// transaction commits (`hand_off`), unless its subscription already has rows waiting for a
/// claim or is at its cap across processes; otherwise it waits for a claim.
pub async fn write_event(conn: &mut Conn, event: &Event, data: &str) -> QueryResult<()> {
    conn.execute(diesel::insert_into(e::table).values(NewEventRow::of(event, data)))
        .await?;
    let event_type = event.data.event_type();
    // Subscriptions per platform are few: match the type here rather than in SQL.
    let active: Vec<WebhookRow> = conn
        .load(scoped_to(w::table, &event.platform_id, event.mode).filter(w::active.eq(true)))
        .await?;
    let subscribed: Vec<Subscription> = active
        .into_iter()
        .map(Subscription::try_from)
        .filter(|s| s.as_ref().map_or(true, |s| s.events.contains(event_type)))
        .collect::<Result<_, _>>()
        .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))?;
    let webhooks: Vec<&str> = subscribed.iter().map(|s| s.id.as_str()).collect();
    let reservation = conn.reserve_hand_off(&event.platform_id, &webhooks);
    let mut handed = Vec::new();
    for subscription in &subscribed {
        // One statement per row: diesel has no multi-row insert for SQLite.
        let row = NewNotificationRow::of(event, subscription.id.as_str());
        let id = NotificationId::from_trusted(row.id.clone());
        let offer = reservation
            .as_ref()
            .filter(|r| r.admits(subscription.id.as_str()))
            .map(|r| (event.created_on + r.lease(), r.per_subscription()));
        let leased = if let Some((lease_until, cap)) = offer {
            insert_leased(conn, &row, lease_until, cap).await?
        } else {
            conn.execute(diesel::insert_into(n::table).values(row))
                .await?;
            false
        };
        if leased {
            // What the delivery needs, as this transaction saw it: nothing is read back.
            handed.push(Claimed {
                id,
                platform_id: event.platform_id.clone(),
                webhook_id: subscription.id.clone(),
                event_type: event_type.as_str().to_owned(),
                event_data: data.to_owned(),
                created_on: event.created_on,
                subscription: Some(subscription.clone()),
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
    Ok(())
}

/// Inserts `row` leased until `lease_until` when its subscription has no row waiting for a
/// claim (none unleased, none whose lease ran out) and fewer than `cap` leased; unleased
/// otherwise, for the claim. Whether it was leased.
///
/// Waiting rows come first, or a subscription kept busy by hand-offs would starve its older rows
/// (the claim finds it at its cap every time); and the leased rows are those of every process,
/// so the cap holds across replicas too. At most `cap` rows are read: when there are that many
/// the subscription is at its cap or has rows waiting, and otherwise every pending row was seen.
const INSERT_LEASED: &str = "\
INSERT INTO notifications (id, webhook_id, platform_id, mode, event_id, event_type, state, due_on,
                           created_on, lease_until)
VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?,
        CASE WHEN (SELECT count(*) < ?
                          AND count(CASE WHEN p.lease_until IS NULL OR p.lease_until <= ?
                                         THEN 1 END) = 0
                     FROM (SELECT lease_until FROM notifications
                            WHERE webhook_id = ? AND state = 'pending' LIMIT ?) p)
             THEN ? END)
RETURNING lease_until IS NOT NULL AS leased";

async fn insert_leased(
    conn: &mut Conn,
    row: &NewNotificationRow<'_>,
    lease_until: OffsetDateTime,
    cap: usize,
) -> QueryResult<bool> {
    let cap = i64::try_from(cap).unwrap_or(i64::MAX);
    // SQLite compares instants as text: every one in UTC, as the stored ones are.
    let utc = |at: OffsetDateTime| at.to_offset(time::UtcOffset::UTC);
    let (due_on, now, lease_until) = (utc(row.due_on), utc(row.created_on), utc(lease_until));
    match conn.db {
        Db::Pg(ref mut pg) => {
            // Unprepared: a cached generic plan made while `notifications` was empty reads the
            // whole table for every row (`pg_statement::Unprepared`).
            let insert = Statement::<Bool>::new(
                INSERT_LEASED,
                vec![
                    Bind::Text(&row.id),
                    Bind::Text(row.webhook_id),
                    Bind::Text(row.platform_id),
                    Bind::Text(row.mode),
                    Bind::Text(row.event_id),
                    Bind::Text(row.event_type),
                    Bind::Time(due_on),
                    Bind::Time(now),
                    Bind::BigInt(cap),
                    Bind::Time(now),
                    Bind::Text(row.webhook_id),
                    Bind::BigInt(cap),
                    Bind::Time(lease_until),
                ],
            );
            diesel_async::RunQueryDsl::get_result(Unprepared(insert), &mut **pg).await
        }
        Db::Sqlite(_) => {
            let leased: Leased = conn
                .get_result(
                    diesel::sql_query(INSERT_LEASED)
                        .bind::<Text, _>(&row.id)
                        .bind::<Text, _>(row.webhook_id)
                        .bind::<Text, _>(row.platform_id)
                        .bind::<Text, _>(row.mode)
                        .bind::<Text, _>(row.event_id)
                        .bind::<Text, _>(row.event_type)
                        .bind::<Ts, _>(due_on)
                        .bind::<Ts, _>(now)
                        .bind::<BigInt, _>(cap)
                        .bind::<Ts, _>(now)
                        .bind::<Text, _>(row.webhook_id)
                        .bind::<BigInt, _>(cap)
                        .bind::<Nullable<Ts>, _>(Some(lease_until)),
                )
                .await?;
            Ok(leased.leased)
        }
    }
}

#[derive(QueryableByName)]
struct Leased {
    #[diesel(sql_type = Bool)]
    leased: bool,
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
