//! Rows of the webhook tables and their conversion to domain types.

use diesel::Queryable;
use holdfast_domain::ids::{EventId, NotificationId, PlatformId, UserId, WebhookId};
use holdfast_domain::ports::{Delivery, DeliveryState, StoreError, decode_events};
use holdfast_domain::webhook::{
    CustomHeader, Description, EndpointUrl, Outcome, PreviousSecret, Subscription,
};
use time::OffsetDateTime;

#[derive(Debug, Queryable)]
pub struct WebhookRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub endpoint_url: String,
    pub events: String,
    pub description: Option<String>,
    pub header_name: Option<String>,
    pub header_value: Option<String>,
    pub active: bool,
    pub secret: String,
    pub creator_id: String,
    pub consecutive_failures: i32,
    pub created_on: OffsetDateTime,
    pub updated_on: OffsetDateTime,
    pub previous_secret: Option<String>,
    pub previous_secret_until: Option<OffsetDateTime>,
}

impl TryFrom<WebhookRow> for Subscription {
    type Error = StoreError;
    fn try_from(row: WebhookRow) -> Result<Self, StoreError> {
        let corrupt =
            |what: &str| StoreError::Unexpected(format!("webhook {}: bad {what}", row.id));
        Ok(Self {
            platform_id: PlatformId::from_trusted(row.platform_id.clone()),
            mode: row.mode.parse().map_err(|_| corrupt("mode"))?,
            endpoint_url: EndpointUrl::from_trusted(row.endpoint_url.clone()),
            events: decode_events(&row.events).map_err(|e| corrupt(&e))?,
            description: row.description.clone().map(Description::from_trusted),
            custom_header: match (row.header_name.clone(), row.header_value.clone()) {
                (Some(name), Some(value)) => Some(CustomHeader::from_trusted(name, value)),
                _ => None,
            },
            active: row.active,
            secret: row.secret.clone(),
            previous_secret: match (row.previous_secret.clone(), row.previous_secret_until) {
                (Some(secret), Some(until)) => Some(PreviousSecret { secret, until }),
                _ => None,
            },
            creator: UserId::from_trusted(row.creator_id.clone()),
            consecutive_failures: u32::try_from(row.consecutive_failures)
                .map_err(|_| corrupt("counter"))?,
            created_on: row.created_on,
            updated_on: row.updated_on,
            id: WebhookId::from_trusted(row.id),
        })
    }
}

#[derive(Debug, Queryable)]
pub struct NotificationRow {
    pub id: String,
    pub webhook_id: String,
    pub platform_id: String,
    pub mode: String,
    pub event_id: String,
    pub event_type: String,
    pub state: String,
    pub due_on: OffsetDateTime,
    pub lease_until: Option<OffsetDateTime>,
    pub endpoint_url: Option<String>,
    pub request_body: Option<String>,
    pub response: Option<String>,
    pub requests: i32,
    pub attempted_on: Option<OffsetDateTime>,
    pub archived: bool,
    pub resent_from: Option<String>,
    pub created_on: OffsetDateTime,
}

fn parse_state(raw: &str) -> Result<DeliveryState, StoreError> {
    Ok(match raw {
        "pending" => DeliveryState::Pending,
        "succeeded" => DeliveryState::Done(Outcome::Succeeded),
        "failed" => DeliveryState::Done(Outcome::Failed),
        "skipped" => DeliveryState::Done(Outcome::Skipped),
        other => {
            return Err(StoreError::Unexpected(format!(
                "bad notification state {other}"
            )));
        }
    })
}

impl TryFrom<NotificationRow> for Delivery {
    type Error = StoreError;
    fn try_from(row: NotificationRow) -> Result<Self, StoreError> {
        Ok(Self {
            state: parse_state(&row.state)?,
            id: NotificationId::from_trusted(row.id),
            webhook_id: WebhookId::from_trusted(row.webhook_id),
            event_id: EventId::from_trusted(row.event_id),
            event_type: row.event_type,
            endpoint_url: row.endpoint_url,
            request_body: row.request_body,
            response: row.response,
            requests: u32::try_from(row.requests).unwrap_or(0),
            attempted_on: row.attempted_on,
            created_on: row.created_on,
            archived: row.archived,
            resent_from: row.resent_from.map(NotificationId::from_trusted),
        })
    }
}

/// The id of the notification of `event` for `webhook`: derived, so the same fan-out can never
/// make two, and time-ordered like the event id it starts with.
pub fn notification_id(event: &EventId, webhook: &str) -> NotificationId {
    let event_part = event.as_str().trim_start_matches(EventId::PREFIX);
    let webhook_part = webhook.trim_start_matches(WebhookId::PREFIX);
    NotificationId::from_suffix(&format!("{event_part}{webhook_part}"))
}
