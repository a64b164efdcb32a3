//! Storage ports of webhook delivery: subscriptions, the notification queue with its delivery
//! records, and the email outbox.

use crate::scope::Scope;
use async_trait::async_trait;
use time::OffsetDateTime;

use crate::idempotency::KeyedAnswer;
use crate::ids::{EventId, NotificationId, PlatformId, WebhookId};
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::webhook::{CustomHeader, Description, EndpointUrl, EventList, Outcome, Subscription};

use super::{Event, StoreError};

/// The fields PATCH replaces (spec 4.2): every optional one not sent returns to its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Where notifications go from now on.
    pub endpoint_url: EndpointUrl,
    /// The event types the subscription receives from now on.
    pub events: EventList,
    /// Text for the disable email; `None` clears it.
    pub description: Option<Description>,
    /// A header sent with every delivery; `None` removes it.
    pub custom_header: Option<CustomHeader>,
    /// `Some(true)` re-enables, keeping the counter; `Some(false)` disables; `None` leaves it.
    pub active: Option<bool>,
    /// The pairs that replace the subscription's; `None` leaves them (the dashboard edits none).
    pub metadata: Option<crate::metadata::Metadata>,
}

/// Where a notification stands: waiting to be sent, or final.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryState {
    /// Queued or being attempted: no outcome yet.
    Pending,
    /// Final, with its outcome.
    Done(Outcome),
}

/// One delivery record per notification (spec 2.4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The notification's id: the top-level `id` the receiver got (spec 6.1).
    pub id: NotificationId,
    /// The subscription the notification was for.
    pub webhook_id: WebhookId,
    /// The mode of the subscription and the event.
    pub mode: crate::mode::Mode,
    /// The event it carries; a resend carries the original's event.
    pub event_id: EventId,
    /// The event type, e.g. `form.completed`.
    pub event_type: String,
    /// Pending, or the final outcome.
    pub state: DeliveryState,
    /// Where it was sent (the subscription's URL at the attempt).
    pub endpoint_url: Option<String>,
    /// The full body sent; `None` before the attempt and once archived.
    pub request_body: Option<String>,
    /// The response body on success, or the error on failure.
    pub response: Option<String>,
    /// HTTP requests the attempt made: up to 4 with retries (spec 6.2).
    pub requests: u32,
    /// When the attempt was made; `None` while pending.
    pub attempted_on: Option<OffsetDateTime>,
    /// When the notification was queued.
    pub created_on: OffsetDateTime,
    /// Older than 15 days: the bodies are gone, the outcome stays.
    pub archived: bool,
    /// For a resend, the notification it repeats.
    pub resent_from: Option<NotificationId>,
}

/// A notification claimed by a worker, with what it needs to send it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// The notification's id, sent as the top-level `id`.
    pub id: NotificationId,
    /// Its event's id, sent as `eventId`: the same on a resend, which is a new notification.
    pub event_id: EventId,
    /// Whose it is: attempts in flight are counted per platform and per subscription.
    pub platform_id: PlatformId,
    /// Its subscription's id, kept when the subscription is deleted.
    pub webhook_id: WebhookId,
    /// The event type, sent as `eventType`.
    pub event_type: String,
    /// The event's data as JSON text, sent as `data`.
    pub event_data: String,
    /// When its event happened, sent as `createdOn` (a resend's too: it resends the event).
    pub created_on: OffsetDateTime,
    /// The subscription as it is now: `None` when deleted.
    pub subscription: Option<Subscription>,
}

/// The final outcome of one notification.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Succeeded, failed, or skipped because the subscription was inactive or gone.
    pub outcome: Outcome,
    /// Where it was sent; `None` when nothing was sent.
    pub endpoint_url: Option<String>,
    /// The full body sent; `None` when nothing was sent.
    pub request_body: Option<String>,
    /// The response body on success, or the error on failure.
    pub response: Option<String>,
    /// HTTP requests made: up to 4 with retries (spec 6.2).
    pub requests: u32,
    /// When the attempt was made.
    pub attempted_on: OffsetDateTime,
}

/// What recording an outcome did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recorded {
    /// False when the notification was already final (another worker finished it first).
    pub recorded: bool,
    /// The failure made the subscription reach the limit and become inactive now.
    pub disabled: bool,
    /// The disable email was queued (false when the creator no longer exists).
    pub email_queued: bool,
}

impl Recorded {
    /// Nothing recorded: the notification was already final.
    pub const NOT: Self = Self {
        recorded: false,
        disabled: false,
        email_queued: false,
    };
}

/// Why a resend (spec 6.4) is refused.
#[derive(Debug, thiserror::Error)]
pub enum ResendError {
    /// No delivery with this id on the platform.
    #[error("delivery not found")]
    NotFound,
    /// Merchant, loan and boarding form deliveries have no resend.
    #[error("only transaction notifications can be resent")]
    NotTransaction,
    /// The subscription is inactive: it must be re-enabled first.
    #[error("the subscription is inactive; re-enable it first, then resend")]
    Inactive,
    /// Older than 15 days: the bodies to send again are gone.
    #[error("the delivery is archived (older than 15 days) and can no longer be resent")]
    Archived,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a test event was not sent.
#[derive(Debug, thiserror::Error)]
pub enum TestEventError {
    /// No subscription with this id in the caller's platform and mode.
    #[error("webhook not found")]
    NotFound,
    /// The subscription is inactive: it delivers nothing until re-enabled.
    #[error("the subscription is inactive; re-enable it first, then send a test event")]
    Inactive,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Storage of webhook subscriptions, each bound to one platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Inserts the subscription unless its platform already has `max` of them in its mode
    /// (active or not), atomically: concurrent creates never exceed `max`, with the request's
    /// idempotent `reply`, if any, in the same SQL transaction. `Ok(false)` when refused;
    /// nothing is then written.
    async fn insert_webhook(
        &self,
        subscription: &Subscription,
        max: u32,
        reply: Option<KeyedAnswer>,
    ) -> Result<bool, StoreError>;
    /// Writes `rotated`'s secrets if the subscription's secret is still `expected` (the one
    /// `rotated` was made from), with the request's idempotent `reply`, in one SQL transaction.
    /// `Ok(false)` when another rotation came first; nothing is then written. An unknown
    /// subscription is `NotFound`.
    async fn rotate_secret(
        &self,
        rotated: &Subscription,
        expected: &str,
        reply: Option<KeyedAnswer>,
    ) -> Result<bool, StoreError>;
    /// The subscription with this id in the platform and mode; `None` when absent there.
    async fn get_webhook(
        &self,
        scope: &Scope,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError>;
    /// The platform's subscriptions in `mode`, newest first (spec 4.3).
    async fn list_webhooks(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<Subscription>, StoreError>;
    /// PATCH: replaces the fields in one statement; the counter, id, secret and creator stay.
    /// `NotFound` when absent in this scope.
    async fn replace_webhook(
        &self,
        scope: &Scope,
        id: &WebhookId,
        replacement: &Replacement,
        at: OffsetDateTime,
    ) -> Result<Subscription, StoreError>;
    /// Deletes the subscription and its delivery history. `NotFound` when absent.
    async fn delete_webhook(&self, scope: &Scope, id: &WebhookId) -> Result<(), StoreError>;
    /// The dashboard toggle (operator CLI): sets `active`; enabling resets the counter to 0.
    /// Scoped by platform only: operators see both modes. `NotFound` when absent.
    async fn toggle_webhook(
        &self,
        platform: &PlatformId,
        id: &WebhookId,
        active: bool,
        at: OffsetDateTime,
    ) -> Result<Subscription, StoreError>;
    /// Newest first. An unknown subscription is `NotFound`.
    async fn list_deliveries(
        &self,
        platform: &PlatformId,
        mode: Option<Mode>,
        webhook: &WebhookId,
        page: &PageRequest,
    ) -> Result<Page<Delivery>, StoreError>;
    /// The delivery records of the notifications of every event about `subject` (a
    /// transaction's or a merchant's id) in `scope`, whatever their subscription: newest first,
    /// at most `limit`.
    async fn deliveries_about(
        &self,
        scope: &crate::scope::Scope,
        subject: &str,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError>;
}

/// How much one claim may take. "In flight" means leased with the lease not yet over, counted
/// across every worker process, so the caps hold for the whole deployment, less the claiming
/// process's attempts that have ended (see `NotificationQueue::claim_notifications`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimLimits {
    /// At most this many rows in this claim (the worker's free slots).
    pub batch: u32,
    /// At most this many attempts in flight per subscription.
    pub per_subscription: u32,
    /// At most this many attempts in flight per platform, both modes together.
    pub per_platform: u32,
}

/// The queue of notifications awaiting delivery, and their delivery records (spec 6.2, 2.4).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait NotificationQueue: Send + Sync {
    /// Leases due notifications until `lease_until` within `limits`, fairly: each
    /// subscription's oldest rows first, and platforms interleaved, the least loaded first, so
    /// one platform's backlog or slow endpoints never hold the slots another platform needs.
    /// A notification whose worker died is due again once its lease ends. The claiming
    /// process's leased rows that hold no connection to their endpoint do not count against the
    /// caps, and are never claimed again before their lease ends: `ended`, notifications whose
    /// attempt has ended but whose outcome is not recorded yet, and `waiting`, how many rows
    /// per subscription wait in its lines to start.
    async fn claim_notifications(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limits: ClaimLimits,
        ended: &[NotificationId],
        waiting: &[(WebhookId, u32)],
    ) -> Result<Vec<Claimed>, StoreError>;

    /// Whether any notification is pending at all, due or not, leased or not: when none is,
    /// nothing can become due except by a new write (which its writer hands off or
    /// announces), so an idle worker that hears of new writes may poll seldom.
    async fn any_pending(&self) -> Result<bool, StoreError>;

    /// Records final outcomes in one transaction, in order, each atomically with its
    /// subscription's counter: once (a notification already final is left as it is, and its
    /// `Recorded::recorded` is false); a success resets the counter, a failure adds one and, on
    /// reaching the limit, disables the subscription and queues the email rendered by
    /// `webhook::disable_email` to the creator when that user still exists. One `Recorded`
    /// per outcome, in the same order.
    async fn complete_notifications(
        &self,
        outcomes: &[(NotificationId, Finished)],
        service_name: &str,
    ) -> Result<Vec<Recorded>, StoreError>;

    /// Removes the bodies of records attempted before `before`; returns how many.
    async fn archive_deliveries(&self, before: OffsetDateTime) -> Result<u64, StoreError>;

    /// Deletes the records of subscriptions that no longer exist; returns how many. A fan-out
    /// (or a resend) that read a subscription just before its deletion can commit its record
    /// after the delete took the history: the database keeps no reference that would stop it.
    async fn delete_orphaned_deliveries(&self) -> Result<u64, StoreError>;

    /// Writes the test `event` (of the subscription `webhook` in `scope`) and queues its one
    /// notification, to that subscription only, whatever event types it names.
    async fn queue_test(
        &self,
        scope: &Scope,
        webhook: &WebhookId,
        event: &Event,
    ) -> Result<Delivery, TestEventError>;

    /// Queues a new notification repeating `id` (spec 6.4) under `new_id`.
    async fn resend(
        &self,
        platform: &PlatformId,
        id: &NotificationId,
        new_id: &NotificationId,
        now: OffsetDateTime,
    ) -> Result<Delivery, ResendError>;
}

/// An email waiting in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedEmail {
    /// The outbox row's id, passed back to `email_sent`, `email_retry` or `email_failed`.
    pub id: String,
    /// The message to send.
    pub email: super::OutgoingEmail,
    /// Send attempts made so far.
    pub attempts: u32,
}

/// Emails waiting to be sent, such as the disable email of spec 6.3, leased to a sender like
/// notifications are.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait EmailOutbox: Send + Sync {
    /// Leases up to `limit` emails due at `now` until `lease_until`, the earliest due first; an
    /// email whose sender died is due again once its lease ends.
    async fn claim_emails(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<QueuedEmail>, StoreError>;
    /// The email went out at `at`: it is never sent again.
    async fn email_sent(&self, id: &str, at: OffsetDateTime) -> Result<(), StoreError>;
    /// A temporary failure: try again at `next_try`.
    async fn email_retry(
        &self,
        id: &str,
        error: &str,
        next_try: OffsetDateTime,
    ) -> Result<(), StoreError>;
    /// A permanent failure: kept, never tried again.
    async fn email_failed(
        &self,
        id: &str,
        error: &str,
        at: OffsetDateTime,
    ) -> Result<(), StoreError>;
}
