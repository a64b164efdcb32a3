//! Subscriptions, deliveries and event types, as typed views: what the webhook routes answer
//! and the operator CLI prints.

use holdfast_domain::ids::{EventId, NotificationId, UserId, WebhookId};
use holdfast_domain::metadata::Metadata;
use holdfast_domain::mode::Mode;
use holdfast_domain::ports::{Delivery, DeliveryState};
use holdfast_domain::schema::timestamp;
use holdfast_domain::webhook::{Description, EventType, Subscription};
use serde::Serialize;
use utoipa::ToSchema;

use super::{rfc3339, timestamp_or_null};

/// A subscription as the API shows it; the signing secret is readable by private keys.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Webhook)]
pub struct WebhookView<'a> {
    #[schema(value_type = WebhookId)]
    id: &'a WebhookId,
    endpoint_url: &'a str,
    /// The event types it is notified of.
    events: &'a [EventType],
    description: Option<&'a str>,
    /// A header sent with every notification, or `null`.
    custom_header: Option<HeaderView<'a>>,
    active: bool,
    /// Failed deliveries in a row; the subscription is disabled at 25.
    consecutive_failures: u32,
    /// The signing secret (`whsec_…`): notifications are signed with it (Standard Webhooks).
    /// Absent from the idempotent replay of a create or a rotation, which is stored without
    /// it: read it with `GET /v1/webhooks/{id}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<&'a str>,
    /// Until when the secret it replaced keeps signing beside it, after a rotation.
    #[schema(schema_with = timestamp_or_null)]
    previous_secret_expires_on: Option<String>,
    /// The user who created it, told by email if it is disabled.
    #[schema(value_type = UserId)]
    creator_id: &'a UserId,
    mode: Mode,
    /// Your own key/value pairs; `{}` when you gave none.
    #[schema(value_type = Metadata)]
    metadata: &'a Metadata,
    #[schema(schema_with = timestamp)]
    created_on: String,
    #[schema(schema_with = timestamp)]
    updated_on: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[schema(as = CustomHeader)]
pub struct HeaderView<'a> {
    name: &'a str,
    value: &'a str,
}

/// The subscription as a create's or rotation's stored answer keeps it: without its secret (no
/// secret is part of an answer kept for replay).
pub fn stored_view(s: &Subscription) -> WebhookView<'_> {
    WebhookView {
        secret: None,
        ..view(s)
    }
}

pub fn view(s: &Subscription) -> WebhookView<'_> {
    WebhookView {
        id: &s.id,
        endpoint_url: s.endpoint_url.as_str(),
        events: s.events.types(),
        description: s.description.as_ref().map(Description::as_str),
        custom_header: s.custom_header.as_ref().map(|h| HeaderView {
            name: h.name(),
            value: h.value(),
        }),
        active: s.active,
        consecutive_failures: s.consecutive_failures,
        secret: Some(&s.secret),
        previous_secret_expires_on: s.previous_secret.as_ref().map(|p| rfc3339(p.until)),
        creator_id: &s.creator,
        mode: s.mode,
        metadata: &s.metadata,
        created_on: rfc3339(s.created_on),
        updated_on: rfc3339(s.updated_on),
    }
}

/// One notification of an event to a subscription, with its latest attempt (spec 2.4).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Delivery)]
pub struct DeliveryView<'a> {
    #[schema(value_type = NotificationId)]
    id: &'a NotificationId,
    #[schema(value_type = WebhookId)]
    webhook_id: &'a WebhookId,
    #[schema(value_type = EventId)]
    event_id: &'a EventId,
    event_type: &'a str,
    endpoint_url: Option<&'a str>,
    /// `pending` until the delivery is decided, then how it ended.
    #[schema(value_type = String, example = "succeeded")]
    outcome: &'static str,
    /// The JSON sent, as sent.
    request_body: Option<&'a str>,
    /// The receiver's answer (status and the start of its body), or why nothing was sent.
    response: Option<&'a str>,
    /// How many requests were sent for it.
    requests: u32,
    #[schema(schema_with = timestamp_or_null)]
    attempted_on: Option<String>,
    #[schema(schema_with = timestamp)]
    created_on: String,
    /// Older than 15 days: kept for the record, no longer resendable.
    archived: bool,
    /// The delivery this one resends, if it is a resend.
    #[schema(value_type = Option<NotificationId>)]
    resent_from: Option<&'a NotificationId>,
}

pub fn delivery_view(d: &Delivery) -> DeliveryView<'_> {
    DeliveryView {
        id: &d.id,
        webhook_id: &d.webhook_id,
        event_id: &d.event_id,
        event_type: &d.event_type,
        endpoint_url: d.endpoint_url.as_deref(),
        outcome: match d.state {
            DeliveryState::Pending => "pending",
            DeliveryState::Done(outcome) => outcome.as_str(),
        },
        request_body: d.request_body.as_deref(),
        response: d.response.as_deref(),
        requests: d.requests,
        attempted_on: d.attempted_on.map(rfc3339),
        created_on: rfc3339(d.created_on),
        archived: d.archived,
        resent_from: d.resent_from.as_ref(),
    }
}

/// An event type a subscription may name.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventTypeView {
    #[serde(rename = "type")]
    kind: EventType,
    description: &'static str,
    /// Whether its notifications may be resent (spec 6.4: transaction events only).
    resendable: bool,
}

impl EventTypeView {
    pub fn of(kind: EventType) -> Self {
        Self {
            kind,
            description: kind.description(),
            resendable: kind.is_transaction(),
        }
    }
}
