//! The delivery loop: attempts the notifications this process handed itself when it wrote them
//! (`crate::load`), in order as their caps allow (`lines`), and claims the
//! rest (due ones, leased, fairly), each attempt up to four requests (spec 6.2) without holding
//! a database connection; outcomes are recorded by one task, many in one transaction.

use std::hash::RandomState;
use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::{ClaimLimits, Claimed, Clock, NotificationQueue, WebhookSender};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::instants::{earlier, later};
use crate::lines::Lines;
use crate::load::{AttemptOwner, DeliveryLoad};
use crate::recorder::{OutcomeRecorder, Outcomes};
use crate::{Stop, pause};
use intake::{HeldLines, Intake, next_hand_off};

pub use intake::HandOffSlot;
pub use settings::DeliverySettings;

mod attempt;
mod intake;
mod settings;

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
    owner: AttemptOwner,
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
                later(now, self.settings.lease()),
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
                    self.load.claimed(&AttemptOwner::of(&notification));
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
        let oldest = earlier(self.clock.now(), self.settings.line_wait());
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
                owner: AttemptOwner::of(&notification),
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
}

/// How long before `now` an event was made, in milliseconds, for the log.
#[expect(
    clippy::arithmetic_side_effects,
    reason = "two instants in the stored range, whose difference a `Duration` always holds"
)]
fn age_ms(now: time::OffsetDateTime, made: time::OffsetDateTime) -> i128 {
    (now - made).whole_milliseconds()
}

#[cfg(test)]
mod loop_tests;
#[cfg(test)]
mod tests;
