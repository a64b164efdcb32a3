//! A test event: written with its one notification, for the subscription it was asked for only.

use diesel::prelude::*;
use holdfast_domain::ids::WebhookId;
use holdfast_domain::ports::{Delivery, Event, StoreError, TestEventError};
use holdfast_domain::scope::Scope;

use crate::conn::Conn;
use crate::error::query_error;
use crate::query::scoped;
use crate::schema::{notifications as n, webhooks as w};
use crate::stores::outbox::write_event_to;
use crate::webhook_rows::{NotificationRow, WebhookRow};

/// Why the transaction wrote nothing: the subscription is not there, or not active.
enum Refused {
    NotFound,
    Inactive,
    Query(diesel::result::Error),
}

impl From<diesel::result::Error> for Refused {
    fn from(e: diesel::result::Error) -> Self {
        Self::Query(e)
    }
}

pub async fn queue_test(
    conn: &mut Conn,
    scope: &Scope,
    webhook: &WebhookId,
    event: &Event,
) -> Result<Delivery, TestEventError> {
    let data = serde_json::to_string(&event.data)
        .map_err(|e| StoreError::Unexpected(format!("a test event's data: {e}")))?;
    let written = conn
        .transaction(async |conn| {
            let subscription: WebhookRow = conn
                .first(scoped(w::table, scope).filter(w::id.eq(webhook.as_str())))
                .await
                .optional()?
                .ok_or(Refused::NotFound)?;
            if !subscription.active {
                return Err(Refused::Inactive);
            }
            let ids = write_event_to(conn, event, &data, vec![subscription]).await?;
            let id = ids.into_iter().next().ok_or(Refused::NotFound)?;
            // Read in the transaction that wrote it: still pending, whatever the deliverers do
            // once it commits.
            Ok(conn
                .first::<NotificationRow, _>(n::table.filter(n::id.eq(id.as_str())))
                .await?)
        })
        .await;
    match written {
        Ok(row) => Ok(Delivery::try_from(row)?),
        Err(Refused::NotFound) => Err(TestEventError::NotFound),
        Err(Refused::Inactive) => Err(TestEventError::Inactive),
        Err(Refused::Query(e)) => Err(query_error("notifications")(e).into()),
    }
}
