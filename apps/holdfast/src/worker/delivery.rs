//! The delivery loop: attempts the notifications this process handed itself when it wrote them
//! (`holdfast_persistence::hand_off`), in order as their caps allow (`lines`), and claims the
//! rest (due ones, leased, fairly), each attempt up to four requests (spec 6.2) without holding
//! a database connection; outcomes are recorded by one task, many in one transaction.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::{
    ClaimLimits, Claimed, Clock, Finished, NotificationQueue, PostResult, WebhookPost,
    WebhookSender,
};
use holdfast_domain::webhook::{Outcome, RetryDecision, backoff, decide, notification_body};
use holdfast_persistence::hand_off::{
    DeliveryLoad, HandOffs, HandedOff, LoadLimits, Owner, SubscriptionChange,
};
use tokio::sync::broadcast::{self, error::TryRecvError};
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::lines::Lines;
use super::recorder::{OutcomeRecorder, Outcomes};
use super::{Stop, pause};

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
    fn line_wait(&self) -> Duration {
        self.timeout
    }
}

pub struct Deliverer {
    queue: Arc<dyn NotificationQueue>,
    sender: Arc<dyn WebhookSender>,
    clock: Arc<dyn Clock>,
    settings: DeliverySettings,
    load: Arc<DeliveryLoad>,
    jitter: RandomState,
}

impl std::fmt::Debug for Deliverer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Deliverer")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// When the loop claims next.
#[derive(Debug, Clone, Copy)]
enum NextClaim {
    Now,
    /// At this instant, or earlier once `ends` more attempts have ended (a cap may be what held
    /// the last claim back).
    At {
        when: Instant,
        ends: Option<usize>,
    },
}

impl NextClaim {
    fn after_ends(self, ended: usize) -> Self {
        match self {
            Self::At {
                ends: Some(ends), ..
            } if ends <= ended => Self::Now,
            Self::At {
                when,
                ends: Some(ends),
            } => Self::At {
                when,
                ends: Some(ends.saturating_sub(ended)),
            },
            other => other,
        }
    }
}

/// An attempt's place in the load, given back when the attempt ends however it ends: a
/// panicking attempt must not shrink the process's room for good.
struct Place<'a> {
    load: &'a DeliveryLoad,
    owner: Owner,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.load.ended(&self.owner, 1);
    }
}

impl Deliverer {
    pub fn new(
        queue: Arc<dyn NotificationQueue>,
        sender: Arc<dyn WebhookSender>,
        clock: Arc<dyn Clock>,
        settings: DeliverySettings,
        load: Arc<DeliveryLoad>,
    ) -> Self {
        Self {
            queue,
            sender,
            clock,
            settings,
            load,
            jitter: RandomState::new(),
        }
    }

    /// Delivers until `stop` turns true, then lets the attempts in flight finish and their
    /// outcomes be recorded (each attempt is bounded by its lease), so a deploy neither cuts an
    /// attempt short nor sends a notification more than four times.
    ///
    /// The hand-offs are taken from `slot` and given back to it however the run ends, and rows
    /// waiting in its lines are left to their lease, so a run started again after a panic still
    /// hears the hand-offs and the process's room is whole.
    pub async fn run(self: Arc<Self>, mut stop: Stop, slot: HandOffSlot) {
        let (outcomes, recorder) = OutcomeRecorder::start(
            self.queue.clone(),
            self.settings.service_name.clone(),
            self.load.clone(),
        );
        let mut in_flight = JoinSet::new();
        let mut lines = HeldLines {
            lines: Lines::default(),
            load: self.load.clone(),
        };
        let mut intake = Intake {
            hand_offs: slot.take(),
            slot,
            changes: self.load.changes(),
        };
        let mut next = NextClaim::Now;
        while !*stop.borrow() {
            let mut reaped = 0_usize;
            while in_flight.try_join_next().is_some() {
                reaped = reaped.saturating_add(1);
            }
            next = next.after_ends(reaped);
            self.start_waiting(&mut lines, &mut intake, &outcomes, &mut in_flight);
            let claim_at = match next {
                NextClaim::Now => Instant::now(),
                NextClaim::At { when, .. } => when,
            };
            tokio::select! {
                _ = stop.changed() => {}
                Some(handed) = next_hand_off(&mut intake.hand_offs) => lines.push_all(handed.rows),
                () = self.load.wait_due() => next = NextClaim::Now,
                // Room given back by another loop's attempt, for what waits in the lines.
                () = self.load.wait_room(), if !lines.is_empty() => {}
                // Armed with or without room: room given back elsewhere (another loop's
                // attempts, a rolled-back write) wakes nobody, so a loop without room looks again
                // after a poll rather than sleeping until the next write.
                () = tokio::time::sleep_until(claim_at) => {
                    next = self.claim(&outcomes, &mut in_flight, &mut stop).await;
                }
                Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {
                    next = next.after_ends(1);
                }
            }
        }
        // What was handed off before the stop is started too, as room comes back, rather than
        // left to its lease (`serve` stops its HTTP side first, so nothing more comes).
        if let Some(receiver) = &mut intake.hand_offs {
            receiver.close();
            while let Ok(handed) = receiver.try_recv() {
                lines.push_all(handed.rows);
            }
        }
        let left = in_flight.len().saturating_add(lines.len());
        if left > 0 {
            tracing::info!(
                in_flight = left,
                "finishing delivery attempts before stopping"
            );
        }
        loop {
            self.start_waiting(&mut lines, &mut intake, &outcomes, &mut in_flight);
            if in_flight.join_next().await.is_some() {
                continue;
            }
            // Nothing of this loop's in flight: what still waits is held back by another loop's
            // attempts. Wait for their room, as long as a row may wait.
            if lines.is_empty()
                || tokio::time::timeout(self.settings.line_wait(), self.load.wait_room())
                    .await
                    .is_err()
            {
                break;
            }
        }
        // What still waits is left to its lease.
        let unstarted = lines.leave_to_lease(&self.load);
        if unstarted > 0 {
            tracing::warn!(
                notifications = unstarted,
                "stopping with handed-off notifications not started; they are claimed when their lease ends"
            );
        }
        drop(outcomes);
        recorder.finish().await;
    }

    /// Claims what this process has room for, starts it, and says when to claim next.
    async fn claim(
        self: &Arc<Self>,
        outcomes: &Outcomes,
        in_flight: &mut JoinSet<()>,
        stop: &mut Stop,
    ) -> NextClaim {
        let poll = Instant::now()
            .checked_add(self.settings.poll)
            .unwrap_or_else(Instant::now);
        if self.load.free() == 0 {
            return NextClaim::At {
                when: poll,
                ends: (!in_flight.is_empty()).then_some(1),
            };
        }
        let now = self.clock.now();
        let claimed = self
            .queue
            .claim_notifications(
                now,
                crate::system::later(now, self.settings.lease()),
                ClaimLimits {
                    batch: u32::try_from(self.load.free()).unwrap_or(u32::MAX),
                    per_subscription: self.settings.per_subscription,
                    per_platform: self.settings.per_platform,
                },
                &self.load.unrecorded(),
                &self.load.waiting_counts(),
            )
            .await;
        match claimed {
            Ok(batch) if !batch.is_empty() => {
                // Under load a serve delivers what it writes itself (hand-offs): what a claim
                // finds there is a retry, a row another process left, or one a hand-off missed.
                // (The fields are computed only when debug logging is on; a resend's event may be
                // days old.)
                tracing::debug!(
                    claimed = batch.len(),
                    oldest_event_ms = batch.iter().map(|n| age_ms(now, n.created_on)).max(),
                    "claimed notifications"
                );
                for notification in batch {
                    self.load.claimed(&Owner::of(&notification));
                    self.start(notification, outcomes, in_flight);
                }
                NextClaim::Now
            }
            // Nothing claimable. With as many attempts in flight as a cap allows, the caps may
            // be what holds the rest back: attempts that end free places, so look again once a
            // quarter of them has ended (one claim per few attempts, not per attempt), or after
            // a poll. Below that, nothing is due: poll as usual.
            Ok(_) if in_flight.len() >= self.capped_at() => NextClaim::At {
                when: poll,
                ends: Some(in_flight.len().div_ceil(4)),
            },
            Ok(_) => NextClaim::At {
                when: {
                    let wait = self.idle_wait().await;
                    Instant::now()
                        .checked_add(wait)
                        .unwrap_or_else(Instant::now)
                },
                ends: None,
            },
            Err(err) => {
                tracing::error!(error = %err, "claiming notifications failed");
                pause(stop, self.settings.poll.saturating_mul(20)).await;
                NextClaim::Now
            }
        }
    }

    /// Starts what waits in the lines and has room now. A row that waited longer than
    /// `line_wait` is left to its lease, and claimed after it: late, never sent by two
    /// processes at once.
    fn start_waiting(
        self: &Arc<Self>,
        lines: &mut Lines,
        intake: &mut Intake,
        outcomes: &Outcomes,
        in_flight: &mut JoinSet<()>,
    ) {
        intake.bring_up_to_date(lines, &self.load);
        if lines.is_empty() {
            return;
        }
        let oldest = crate::system::earlier(self.clock.now(), self.settings.line_wait());
        let taken = lines.take(&self.load, oldest);
        if !taken.expired.is_empty() {
            tracing::warn!(
                notifications = taken.expired.len(),
                "handed-off notifications waited too long for room to be attempted within their lease; they are claimed when it ends"
            );
        }
        for notification in taken.start {
            self.start(notification, outcomes, in_flight);
        }
    }

    fn start(
        self: &Arc<Self>,
        notification: Claimed,
        outcomes: &Outcomes,
        in_flight: &mut JoinSet<()>,
    ) {
        let me = self.clone();
        let outcomes = outcomes.clone();
        in_flight.spawn(async move {
            let place = Place {
                load: &me.load,
                owner: Owner::of(&notification),
            };
            let finished = me.deliver(&notification).await;
            // The attempt no longer holds a connection to the endpoint: its place is free, and
            // this process's claims no longer count its row (leased until the outcome is
            // recorded) against the caps.
            me.load.awaits_recording(notification.id.clone());
            drop(place);
            outcomes.record(notification.id, notification.webhook_id, finished);
        });
    }

    /// How long a claim that found nothing waits before the next: the longer idle poll where
    /// the process hears of new notifications as other processes write them, has nothing of
    /// its own in flight or waiting, and the database holds no pending notification at all;
    /// otherwise a poll. A row that is pending but was not claimed may be due and held back by
    /// a cap that another process's attempts fill (under load, or a killed process's rows
    /// whose lease ends), and nothing announces the room they give back.
    async fn idle_wait(&self) -> Duration {
        let idle = self.load.listening() && self.load.in_flight() == 0 && self.load.waiting() == 0;
        if idle && matches!(self.queue.any_pending().await, Ok(false)) {
            self.settings.idle_poll
        } else {
            self.settings.poll
        }
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
    async fn deliver(&self, claimed: &Claimed) -> Finished {
        match claimed.subscription.as_ref().filter(|s| s.active) {
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
        }
    }

    /// Up to four requests; returns the outcome, how many were made, and the last result.
    async fn attempt(&self, post: &mut WebhookPost) -> (Outcome, u32, PostResult) {
        let mut requests = 0_u32;
        loop {
            requests = requests.saturating_add(1);
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

/// Where a delivery loop keeps its hand-offs between runs (`Deliverer::run`).
#[derive(Debug, Clone, Default)]
pub struct HandOffSlot(Arc<std::sync::Mutex<Option<HandOffs>>>);

impl HandOffSlot {
    pub fn new(hand_offs: Option<HandOffs>) -> Self {
        Self(Arc::new(std::sync::Mutex::new(hand_offs)))
    }

    fn take(&self) -> Option<HandOffs> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn put(&self, hand_offs: Option<HandOffs>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = hand_offs;
    }
}

/// A run's lines, left to their lease if the run ends without starting them (a panic): their
/// room in the process's load comes back.
struct HeldLines {
    lines: Lines,
    load: Arc<DeliveryLoad>,
}

impl std::ops::Deref for HeldLines {
    type Target = Lines;
    fn deref(&self) -> &Lines {
        &self.lines
    }
}

impl std::ops::DerefMut for HeldLines {
    fn deref_mut(&mut self) -> &mut Lines {
        &mut self.lines
    }
}

impl Drop for HeldLines {
    fn drop(&mut self) {
        if !self.lines.is_empty() {
            let left = self.lines.leave_to_lease(&self.load);
            tracing::warn!(
                notifications = left,
                "a delivery run ended with rows in its lines; they are claimed when their lease ends"
            );
        }
    }
}

/// What reaches a delivery loop from the rest of its process: the rows handed off to it, and
/// the changes to their subscriptions.
struct Intake {
    hand_offs: Option<HandOffs>,
    /// Where the hand-offs go back when the run ends, however it ends.
    slot: HandOffSlot,
    changes: broadcast::Receiver<SubscriptionChange>,
}

impl Intake {
    /// Brings what waits in the lines up to date with the subscription changes told since the
    /// last look. The changes are taken first, then every row handed off so far: a row handed
    /// before a change was told is then in its line when the change is applied. Should the
    /// loop have missed changes, it cannot tell which rows they were about: every waiting row
    /// is left to its lease, and claimed after it with its subscription as it is then.
    fn bring_up_to_date(&mut self, lines: &mut Lines, load: &DeliveryLoad) {
        let (mut told, mut missed) = (Vec::new(), 0_u64);
        loop {
            match self.changes.try_recv() {
                Ok(change) => told.push(change),
                Err(TryRecvError::Lagged(n)) => missed = missed.saturating_add(n),
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        if let Some(receiver) = &mut self.hand_offs {
            while let Ok(handed) = receiver.try_recv() {
                lines.push_all(handed.rows);
            }
        }
        if missed > 0 {
            let left = lines.leave_to_lease(load);
            tracing::warn!(
                missed,
                notifications = left,
                "the delivery loop missed subscription changes; the handed-off notifications waiting are claimed when their lease ends"
            );
            return;
        }
        for change in &told {
            lines.apply(change);
        }
    }
}

impl Drop for Intake {
    fn drop(&mut self) {
        self.slot.put(self.hand_offs.take());
    }
}

/// The next hand-off, or never where this loop takes none.
async fn next_hand_off(hand_offs: &mut Option<HandOffs>) -> Option<HandedOff> {
    match hand_offs {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}

/// How long before `now` an event was made, in milliseconds, for the log.
#[expect(
    clippy::arithmetic_side_effects,
    reason = "two instants in the stored range, whose difference a `Duration` always holds"
)]
fn age_ms(now: time::OffsetDateTime, made: time::OffsetDateTime) -> i128 {
    (now - made).whole_milliseconds()
}

/// The history's "response": the body on success, or the error on failure.
fn describe(result: &PostResult) -> String {
    match result {
        PostResult::Answered { status, body } if (200..300).contains(status) => body.clone(),
        PostResult::Answered { status, body } => format!("HTTP {status}: {body}"),
        PostResult::Failed(failure) => failure.to_string(),
    }
}

#[cfg(test)]
mod loop_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// A run that ends however it ends, a panic included, gives its hand-offs back, so the run
    /// started after it still hears them.
    #[test]
    fn a_run_gives_its_hand_offs_back_even_when_it_panics() {
        let (load, hand_offs) = DeliveryLoad::handing_off(settings(100, 10).load_limits(1));
        let slot = HandOffSlot::new(Some(hand_offs));
        let run = |panics: bool| {
            let intake = Intake {
                hand_offs: slot.take(),
                slot: slot.clone(),
                changes: load.changes(),
            };
            assert!(intake.hand_offs.is_some(), "the run holds the hand-offs");
            assert!(slot.take().is_none(), "while it runs, nobody else does");
            assert!(!panics, "a delivery loop's bug");
        };
        run(false);
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(true)));
        assert!(panicked.is_err());
        assert!(slot.take().is_some(), "given back after the panic");
    }

    fn settings(timeout_ms: u64, backoff_ms: u64) -> DeliverySettings {
        let timeout = Duration::from_millis(timeout_ms);
        let backoff_base = Duration::from_millis(backoff_ms);
        DeliverySettings {
            timeout,
            backoff_base,
            concurrency: 128,
            per_subscription: 16,
            per_platform: 64,
            poll: Duration::from_millis(50),
            idle_poll: Duration::from_secs(1),
            service_name: "Holdfast".into(),
        }
    }

    #[test]
    fn a_row_started_at_the_end_of_its_wait_keeps_the_claims_margin() {
        for (timeout, backoff) in [(5_000, 1_000), (300, 20), (1, 0)] {
            let s = settings(timeout, backoff);
            let handed_lease = s.load_limits(1).lease;
            let left_at_start = handed_lease.checked_sub(s.line_wait()).unwrap();
            // Four timeouts and three backoffs of at most 1, 2 and 4 times the base.
            let longest_attempt = s.timeout * 4 + s.backoff_base * 7;
            assert!(
                left_at_start >= longest_attempt + s.timeout,
                "{timeout} ms, {backoff} ms: {left_at_start:?} left"
            );
            assert_eq!(
                left_at_start,
                s.lease(),
                "a claim's lease, from the moment it starts"
            );
        }
    }
}
