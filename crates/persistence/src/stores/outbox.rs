//! Writing an event into the outbox, with its fan-out: one notification per active subscription
//! of the same platform and mode that names the event type, in the caller's SQL transaction.

/// Expands inside an open transaction (`$conn`); evaluates to `QueryResult<()>`.
macro_rules! write_event {
    ($schema:ident, $conn:expr, $event:expr, $data:expr) => {
        async {
            use crate::schema::$schema::{events as e, notifications as n, webhooks as w};
            let event: &Event = $event;
            let event_type = event.data.event_type().as_str();
            diesel::insert_into(e::table)
                .values((
                    e::id.eq(event.id.as_str()),
                    e::platform_id.eq(event.platform_id.as_str()),
                    e::mode.eq(event.mode.as_str()),
                    e::event_type.eq(event_type),
                    e::data.eq($data),
                    e::created_on.eq(event.created_on),
                ))
                .execute($conn)
                .await?;
            // Subscriptions per platform are few: match the type here rather than in SQL.
            let active: Vec<(String, String)> = w::table
                .filter(w::platform_id.eq(event.platform_id.as_str()))
                .filter(w::mode.eq(event.mode.as_str()))
                .filter(w::active.eq(true))
                .select((w::id, w::events))
                .load($conn)
                .await?;
            let rows: Vec<_> = active
                .iter()
                .filter(|(_, events)| events.split(',').any(|t| t == event_type))
                .map(|(webhook, _)| {
                    (
                        n::id
                            .eq(crate::webhook_rows::notification_id(&event.id, webhook)
                                .to_string()),
                        n::webhook_id.eq(webhook.as_str()),
                        n::platform_id.eq(event.platform_id.as_str()),
                        n::mode.eq(event.mode.as_str()),
                        n::event_id.eq(event.id.as_str()),
                        n::event_type.eq(event_type),
                        n::state.eq("pending"),
                        n::due_on.eq(event.created_on),
                        n::created_on.eq(event.created_on),
                    )
                })
                .collect();
            // One statement per row: SQLite has no multi-row insert of tuples in diesel.
            for row in rows {
                diesel::insert_into(n::table)
                    .values(row)
                    .execute($conn)
                    .await?;
            }
            diesel::QueryResult::Ok(())
        }
        .await
    };
}
