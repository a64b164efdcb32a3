//! Rows of the webhook tables and their conversion to domain types.

use diesel::{Insertable, Queryable};
use holdfast_domain::ids::{EventId, NotificationId, PlatformId, UserId, WebhookId};
use holdfast_domain::ports::{Delivery, DeliveryState, Event, StoreError, StoredEvent};
use holdfast_domain::webhook::{
    CustomHeader, Description, EndpointUrl, EventList, EventType, Outcome, PreviousSecret,
    Subscription,
};
use time::OffsetDateTime;

use crate::rows::{metadata_column, stored_metadata};
use crate::schema::{events, notifications, webhooks};
use crate::timestamp::Instant;

#[derive(Debug, Clone, Queryable)]
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
    pub metadata: String,
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
            metadata: stored_metadata(&row.metadata)?,
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
        let mode = crate::rows::parse("notification mode", &row.mode)?;
        Ok(Self {
            state: parse_state(&row.state)?,
            id: NotificationId::from_trusted(row.id),
            webhook_id: WebhookId::from_trusted(row.webhook_id),
            mode,
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

#[derive(Debug, Insertable)]
#[diesel(table_name = events, treat_none_as_default_value = false)]
pub struct NewEventRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub event_type: &'static str,
    pub data: &'a str,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    pub subject_id: Option<&'a str>,
}

impl<'a> NewEventRow<'a> {
    /// `event`, its data already serialised as `data`.
    pub fn of(event: &'a Event, data: &'a str) -> Self {
        Self {
            id: event.id.as_str(),
            platform_id: event.platform_id.as_str(),
            mode: event.mode.as_str(),
            event_type: event.data.event_type().as_str(),
            data,
            created_on: event.created_on,
            subject_id: Some(event.data.subject_id()),
        }
    }
}

/// A delivery waiting for its first attempt.
#[derive(Debug, Insertable)]
#[diesel(table_name = notifications, treat_none_as_default_value = false)]
pub struct NewNotificationRow<'a> {
    pub id: String,
    pub webhook_id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'a str,
    pub event_id: &'a str,
    pub event_type: &'a str,
    pub state: &'static str,
    #[diesel(serialize_as = Instant)]
    pub due_on: OffsetDateTime,
    pub resent_from: Option<&'a str>,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    /// Set by the claim, or at insert when the writing process hands the row to its own
    /// deliverers (`stores::outbox`).
    pub lease_until: Option<OffsetDateTime>,
}

impl<'a> NewNotificationRow<'a> {
    /// The fan-out of `event` to `webhook`, due at once.
    pub fn of(event: &'a Event, webhook: &'a str) -> Self {
        Self {
            id: notification_id(&event.id, webhook).to_string(),
            webhook_id: webhook,
            platform_id: event.platform_id.as_str(),
            mode: event.mode.as_str(),
            event_id: event.id.as_str(),
            event_type: event.data.event_type().as_str(),
            state: "pending",
            due_on: event.created_on,
            resent_from: None,
            created_on: event.created_on,
            lease_until: None,
        }
    }

    /// A new attempt (`id`) at `original`'s event, due `now`.
    pub fn resend(original: &'a NotificationRow, id: &NotificationId, now: OffsetDateTime) -> Self {
        Self {
            id: id.to_string(),
            webhook_id: &original.webhook_id,
            platform_id: &original.platform_id,
            mode: &original.mode,
            event_id: &original.event_id,
            event_type: &original.event_type,
            state: "pending",
            due_on: now,
            resent_from: Some(&original.id),
            created_on: now,
            lease_until: None,
        }
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = webhooks, treat_none_as_default_value = false)]
pub struct NewWebhookRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub endpoint_url: &'a str,
    pub events: String,
    pub description: Option<&'a str>,
    pub header_name: Option<&'a str>,
    pub header_value: Option<&'a str>,
    pub active: bool,
    pub secret: &'a str,
    pub creator_id: &'a str,
    pub consecutive_failures: i32,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    pub updated_on: OffsetDateTime,
    pub previous_secret: Option<&'a str>,
    pub previous_secret_until: Option<OffsetDateTime>,
    pub metadata: String,
}

impl<'a> From<&'a Subscription> for NewWebhookRow<'a> {
    fn from(s: &'a Subscription) -> Self {
        Self {
            id: s.id.as_str(),
            platform_id: s.platform_id.as_str(),
            mode: s.mode.as_str(),
            endpoint_url: s.endpoint_url.as_str(),
            events: encode_events(&s.events),
            description: s.description.as_ref().map(Description::as_str),
            header_name: s.custom_header.as_ref().map(CustomHeader::name),
            header_value: s.custom_header.as_ref().map(CustomHeader::value),
            active: s.active,
            secret: &s.secret,
            creator_id: s.creator.as_str(),
            consecutive_failures: i32::try_from(s.consecutive_failures).unwrap_or(i32::MAX),
            created_on: s.created_on,
            updated_on: s.updated_on,
            previous_secret: s.previous_secret.as_ref().map(|p| p.secret.as_str()),
            previous_secret_until: s.previous_secret.as_ref().map(|p| p.until),
            metadata: metadata_column(&s.metadata),
        }
    }
}

/// Event types of a subscription as stored: a comma-separated list.
pub fn encode_events(events: &EventList) -> String {
    events
        .types()
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads back event types stored by `encode_events`; `Err` names an unknown type.
fn decode_events(raw: &str) -> Result<EventList, String> {
    raw.split(',')
        .map(|t| {
            t.parse::<EventType>()
                .map_err(|_| format!("unknown event type {t:?}"))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(EventList::from_trusted)
}

#[derive(Debug, Queryable)]
pub struct EventRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub event_type: String,
    pub data: String,
    pub created_on: OffsetDateTime,
    /// What the event is about (read, not used: `data` says it too).
    pub subject_id: Option<String>,
}

impl From<EventRow> for StoredEvent {
    fn from(row: EventRow) -> Self {
        Self {
            id: EventId::from_trusted(row.id),
            event_type: row.event_type,
            data: row.data,
            created_on: row.created_on,
        }
    }
}
