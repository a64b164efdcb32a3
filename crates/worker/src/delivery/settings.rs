//! How a process delivers: timeouts, backoff, caps and polls, and the leases they imply.

use std::time::Duration;

use crate::load::LoadLimits;

#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub timeout: Duration,
    pub backoff_base: Duration,
    pub concurrency: u32,
    /// Attempts in flight per subscription, across all workers.
    pub per_subscription: u32,
    /// Attempts in flight per platform, across all workers.
    pub per_platform: u32,
    pub poll: Duration,
    /// The poll of a process with nothing in flight, on a database with nothing pending, that
    /// hears of new notifications as they are written (`holdfast_persistence::WakeUps`).
    pub idle_poll: Duration,
    pub service_name: String,
}

impl DeliverySettings {
    /// A claim's lease: longer than the longest attempt (four timeouts and three backoffs of at
    /// most 1, 2 and 4 times the base) by one more timeout, so only a dead worker's notification
    /// is claimed again. 32 s with the defaults: a dead worker's notification is picked up
    /// within a minute.
    pub fn lease(&self) -> Duration {
        self.timeout
            .saturating_mul(5)
            .saturating_add(self.backoff_base.saturating_mul(7))
    }

    /// The caps of a process running `deliverers` loops of these settings. A hand-off is
    /// leased for a claim's lease plus the longest it may wait in its line, so a row started at
    /// the end of its wait keeps the claim's margin (a timeout beyond its longest attempt).
    pub fn load_limits(&self, deliverers: u32) -> LoadLimits {
        LoadLimits {
            concurrency: self.concurrency.max(1).saturating_mul(deliverers.max(1)),
            per_platform: self.per_platform,
            per_subscription: self.per_subscription,
            lease: self.lease().saturating_add(self.line_wait()),
        }
    }

    /// The longest a handed-off row waits in its line for room: one timeout. Past that it is
    /// left to its lease (`load_limits`), and claimed when the lease ends.
    pub(crate) fn line_wait(&self) -> Duration {
        self.timeout
    }
}
