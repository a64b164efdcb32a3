//! The delivery loop: claim due notifications with a lease, attempt each (up to four requests,
//! spec 6.2) without holding a database connection, then record the outcome once.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::{
    ClaimLimits, Claimed, Clock, Finished, NotificationQueue, PostResult, WebhookPost,
    WebhookSender,
};
use holdfast_domain::webhook::{Outcome, RetryDecision, backoff, decide, notification_body};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::{Stop, pause};

#[derive(Debug, Clone)]
pub struct DeliverySettings {
    pub timeout: Duration,
    pub backoff_base: Duration,
    pub lease: Duration,
    pub concurrency: u32,
    /// Attempts in flight per subscription, across all workers.
    pub per_subscription: u32,
    /// Attempts in flight per platform, across all workers.
    pub per_platform: u32,
    pub poll: Duration,
    pub service_name: String,
}

pub struct Deliverer {
    queue: Arc<dyn NotificationQueue>,
    sender: Arc<dyn WebhookSender>,
    clock: Arc<dyn Clock>,
    settings: DeliverySettings,
    jitter: RandomState,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Deliverer {
    pub fn new(
        queue: Arc<dyn NotificationQueue>,
        sender: Arc<dyn WebhookSender>,
        clock: Arc<dyn Clock>,
        settings: DeliverySettings,
    ) -> Self {
        Self {
            queue,
            sender,
            clock,
            settings,
            jitter: RandomState::new(),
        }
    }

    /// Claims and delivers until `stop` turns true, then lets the attempts in flight finish
    /// (each is bounded by its lease), so a deploy neither cuts an attempt short nor sends a
    /// notification more than four times.
    pub async fn run(self: Arc<Self>, mut stop: Stop) {
        let slots = Arc::new(Semaphore::new(self.settings.concurrency.max(1) as usize));
        let mut in_flight = JoinSet::new();
        while !*stop.borrow() {
            while in_flight.try_join_next().is_some() {}
            let free = slots.available_permits();
            if free == 0 {
                // Every slot is busy: wait for one to free up before claiming more.
                tokio::select! {
                    _ = in_flight.join_next() => {}
                    _ = stop.changed() => {}
                }
                continue;
            }
            let now = self.clock.now();
            let claimed = self
                .queue
                .claim_notifications(
                    now,
                    now + self.settings.lease,
                    ClaimLimits {
                        batch: u32::try_from(free).unwrap_or(u32::MAX),
                        per_subscription: self.settings.per_subscription,
                        per_platform: self.settings.per_platform,
                    },
                )
                .await;
            match claimed {
                Ok(batch) if !batch.is_empty() => {
                    for notification in batch {
                        let Ok(permit) = slots.clone().acquire_owned().await else {
                            return;
                        };
                        let me = self.clone();
                        in_flight.spawn(async move {
                            me.deliver(notification).await;
                            drop(permit);
                        });
                    }
                }
                // Nothing claimable. With as many attempts in flight as a cap allows, the caps
                // may be what holds the rest back: attempts that end free places, so look again
                // once a quarter of them has ended (one claim per few attempts, not per
                // attempt), or after a poll. Below that, nothing is due: poll as usual.
                Ok(_) if in_flight.len() >= self.capped_at() => {
                    let enough = in_flight.len().div_ceil(4);
                    let ended = async {
                        for _ in 0..enough {
                            in_flight.join_next().await;
                        }
                    };
                    tokio::select! {
                        () = ended => {}
                        () = pause(&mut stop, self.settings.poll) => {}
                    }
                }
                Ok(_) => pause(&mut stop, self.settings.poll).await,
                Err(err) => {
                    tracing::error!(error = %err, "claiming notifications failed");
                    pause(&mut stop, self.settings.poll * 20).await;
                }
            }
        }
        let left = in_flight.len();
        if left > 0 {
            tracing::info!(
                in_flight = left,
                "finishing delivery attempts before stopping"
            );
        }
        while in_flight.join_next().await.is_some() {}
    }

    /// The fewest attempts in flight at which a cap can bind.
    fn capped_at(&self) -> usize {
        let cap = self
            .settings
            .per_subscription
            .min(self.settings.per_platform)
            .max(1);
        usize::try_from(cap).unwrap_or(usize::MAX)
    }

    #[tracing::instrument(skip_all, fields(notification = %claimed.id))]
    async fn deliver(&self, claimed: Claimed) {
        let finished = match claimed.subscription.as_ref().filter(|s| s.active) {
            None => Finished {
                outcome: Outcome::Skipped,
                endpoint_url: claimed
                    .subscription
                    .as_ref()
                    .map(|s| s.endpoint_url.as_str().to_owned()),
                request_body: None,
                response: Some("not sent: the subscription was inactive when its turn came".into()),
                requests: 0,
                attempted_on: self.clock.now(),
            },
            Some(subscription) => {
                let body = notification_body(
                    claimed.id.as_str(),
                    &claimed.event_type,
                    claimed.created_on,
                    &claimed.event_data,
                );
                let mut post = WebhookPost {
                    url: subscription.endpoint_url.as_str().to_owned(),
                    message_id: claimed.id.to_string(),
                    timestamp: 0,
                    body,
                    secrets: subscription.signing_secrets(self.clock.now()),
                    custom_header: subscription
                        .custom_header
                        .as_ref()
                        .map(|h| (h.name().to_owned(), h.value().to_owned())),
                    timeout: self.settings.timeout,
                };
                let attempted_on = self.clock.now();
                let (outcome, requests, last) = self.attempt(&mut post).await;
                Finished {
                    outcome,
                    endpoint_url: Some(post.url),
                    request_body: Some(post.body),
                    response: Some(describe(&last)),
                    requests,
                    attempted_on,
                }
            }
        };
        match self
            .queue
            .complete_notification(&claimed.id, &finished, &self.settings.service_name)
            .await
        {
            Ok(recorded) => tracing::info!(
                outcome = finished.outcome.as_str(),
                requests = finished.requests,
                recorded = recorded.recorded,
                disabled = recorded.disabled,
                "notification finished"
            ),
            // The lease runs out and another worker tries again: nothing is lost.
            Err(err) => tracing::error!(error = %err, "recording the outcome failed"),
        }
    }

    /// Up to four requests; returns the outcome, how many were made, and the last result.
    async fn attempt(&self, post: &mut WebhookPost) -> (Outcome, u32, PostResult) {
        let mut requests = 0;
        loop {
            requests += 1;
            post.timestamp = self.clock.now().unix_timestamp();
            let result = self.sender.post(post).await;
            match decide(&result, requests) {
                RetryDecision::Succeeded => return (Outcome::Succeeded, requests, result),
                RetryDecision::GiveUp => return (Outcome::Failed, requests, result),
                RetryDecision::Retry => {
                    let pause = backoff(
                        self.settings.backoff_base,
                        requests,
                        self.jitter(&post.message_id, requests),
                    );
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// A fraction in [0, 1) that differs per notification and retry (no need for a CSPRNG).
    fn jitter(&self, id: &str, retry: u32) -> f64 {
        let hash = self.jitter.hash_one((id, retry));
        #[expect(
            clippy::cast_precision_loss,
            reason = "a jitter fraction needs no precision"
        )]
        let fraction = (hash >> 11) as f64 / (1u64 << 53) as f64;
        fraction
    }
}

/// The history's "response": the body on success, or the error on failure.
fn describe(result: &PostResult) -> String {
    match result {
        PostResult::Answered { status, body } if (200..300).contains(status) => body.clone(),
        PostResult::Answered { status, body } => format!("HTTP {status}: {body}"),
        PostResult::Failed(failure) => failure.to_string(),
    }
}
