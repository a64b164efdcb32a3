//! Background work: webhook delivery, the email outbox, and delivery-history retention. Run by
//! `holdfast worker`, and inside `holdfast serve` unless `HOLDFAST_WORKERS=0`. Workers share
//! nothing but the database: claims are leased, so any number of processes may run them.

mod delivery;
mod mail;
mod retention;

use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::{
    Clock, EmailOutbox, IdempotencyStore, Mailer, NotificationQueue, WebhookSender,
};
use tokio::task::JoinSet;

pub use delivery::{Deliverer, DeliverySettings};
pub use retention::RETENTION;

/// What the background loops need.
#[derive(Clone)]
pub struct Workers {
    pub queue: Arc<dyn NotificationQueue>,
    pub idempotency: Arc<dyn IdempotencyStore>,
    pub outbox: Arc<dyn EmailOutbox>,
    pub sender: Arc<dyn WebhookSender>,
    pub mailer: Arc<dyn Mailer>,
    pub clock: Arc<dyn Clock>,
    pub settings: DeliverySettings,
}

impl Workers {
    /// Starts `deliverers` delivery loops, one mail loop and one retention loop. Dropping (or
    /// aborting) the set stops them; a notification cut off mid-attempt is delivered again once
    /// its lease ends, with the same id.
    pub fn spawn(self, deliverers: u32) -> JoinSet<()> {
        let mut set = JoinSet::new();
        for _ in 0..deliverers {
            let deliverer = Arc::new(Deliverer::new(
                self.queue.clone(),
                self.sender.clone(),
                self.clock.clone(),
                self.settings.clone(),
            ));
            set.spawn(deliverer.run());
        }
        set.spawn(mail::run(
            self.outbox.clone(),
            self.mailer.clone(),
            self.clock.clone(),
            Duration::from_secs(1),
        ));
        set.spawn(retention::run(self.queue, self.idempotency, self.clock));
        tracing::info!(deliverers, "workers started");
        set
    }
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}
