//! What a store tells the delivery engine of its own process as it writes, and where that
//! engine hears of what other processes write.
//!
//! A store that writes notifications could leave every one of them to the claim; telling the
//! delivery loops of the same process instead saves them a claim round trip and a poll delay
//! (docs/design/webhook-fairness.md). The store only *tells*: what is started
//! when, under which caps, is the engine's business, behind this port.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::ids::WebhookId;
use crate::ports::Claimed;
use crate::webhook::Subscription;

/// The delivery engine of the process a store runs in, as the store sees it.
pub trait DeliveryHints: Send + Sync {
    /// Places for the notifications to `webhooks` (one each) being written in an open
    /// transaction, to be leased at insert and handed over once committed. `None` when the
    /// engine takes nothing (it runs no loop here, or its lines are full): the rows are then
    /// written unleased, for the claim.
    fn reserve(&self, webhooks: &[&str]) -> Option<Box<dyn HandOff>>;

    /// Notifications were committed for the claim (none handed over): claim now rather than
    /// at the next poll.
    fn due(&self);

    /// A subscription changed, for the rows of it that wait in the engine's lines.
    fn changed(&self, change: SubscriptionChange);

    /// Whether this process now hears at once of the notifications other processes write for
    /// the claim (`WakeUpSource::listen`), so its loops may poll seldom while idle.
    fn listening(&self, listening: bool);
}

/// Places reserved for notifications being written: handed over once committed, or given back
/// when dropped (a rollback, or a row the insert left for the claim).
pub trait HandOff: Send + Sync {
    /// How long a row handed over is leased for at insert.
    fn lease(&self) -> Duration;

    /// Whether a row to `webhook` may be leased at insert under this reservation.
    fn admits(&self, webhook: &str) -> bool;

    /// Hands `rows` (committed, leased at insert) to the engine; every place not used is
    /// given back.
    fn hand(self: Box<Self>, rows: Vec<Claimed>);
}

/// Where a delivering process hears of the notifications other processes write for the claim
/// (PostgreSQL's `LISTEN`).
#[async_trait]
pub trait WakeUpSource: Send + Sync {
    /// Listens until the future is dropped, telling `hints` of each announcement heard
    /// (`due`) and of whether it is listening (`listening`); reconnects on its own.
    async fn listen(&self, hints: Arc<dyn DeliveryHints>);
}

/// A change to a subscription that this process made or learned of. A handed-over row carries
/// its subscription as the writing transaction read it, and may wait in its line for up to one
/// timeout: the change reaches the rows waiting, so none is sent to a subscription disabled,
/// edited or deleted meanwhile (docs/decisions.md, "What a hand-off carries").
#[derive(Debug, Clone)]
pub enum SubscriptionChange {
    /// Toggled or replaced: the subscription as it is now.
    Now(Arc<Subscription>),
    /// Disabled by its 25th consecutive failure (spec 6.3).
    Disabled(WebhookId),
    /// Deleted, with its history.
    Deleted(WebhookId),
}

impl SubscriptionChange {
    /// The subscription changed.
    pub fn webhook(&self) -> &WebhookId {
        match self {
            Self::Now(subscription) => &subscription.id,
            Self::Disabled(webhook) | Self::Deleted(webhook) => webhook,
        }
    }

    /// What a row written before the change is to be sent with: its subscription as the
    /// change left it (`None` once deleted).
    pub fn apply_to(&self, snapshot: &mut Option<Subscription>) {
        match self {
            Self::Now(subscription) => *snapshot = Some(Subscription::clone(subscription)),
            Self::Disabled(_) => {
                if let Some(subscription) = snapshot {
                    subscription.active = false;
                }
            }
            Self::Deleted(_) => *snapshot = None,
        }
    }
}
