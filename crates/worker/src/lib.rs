#![doc = include_str!("../README.md")]
// No input may stop a worker (issue 37): what could panic is refused outside tests, and each
// proven-safe case says why in its `#[expect]`.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

mod delivery;
mod instants;
mod lines;
pub mod load;
mod mail;
mod payouts;
mod reconcile;
mod recorder;
mod retention;
mod settlement;
mod supervise;

use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::{
    Clock, EmailOutbox, Mailer, NotificationQueue, WakeUpSource, WebhookSender,
};
use holdfast_domain::services::{
    IdempotencyService, PaymentService, SettlementService, TokenService, WebhookService,
};
use tokio::sync::watch;
use tokio::task::JoinSet;

pub use delivery::{Deliverer, DeliverySettings, HandOffSlot};
pub use load::{DeliveryLoad, HandOffs};
pub use reconcile::reconcile_every;

/// What the background loops need.
#[derive(Clone)]
pub struct Workers {
    pub queue: Arc<dyn NotificationQueue>,
    pub idempotency: IdempotencyService,
    /// Compliance forms' yearly upkeep (overdue, renewal), with retention.
    pub compliance: holdfast_domain::services::ComplianceService,
    pub outbox: Arc<dyn EmailOutbox>,
    pub tokens: TokenService,
    pub webhooks: WebhookService,
    pub sender: Arc<dyn WebhookSender>,
    pub mailer: Arc<dyn Mailer>,
    pub clock: Arc<dyn Clock>,
    pub settings: DeliverySettings,
    /// Reconciles transactions left pending longer than `reconcile_after`.
    pub payments: PaymentService,
    pub reconcile_after: Duration,
    /// Settlement runs, every `settle_every` (none: runs only when an operator asks).
    pub settlement: SettlementService,
    pub settle_every: Option<Duration>,
    /// The payout rails, every `payout_every` (none: only when an operator asks).
    pub payouts: holdfast_domain::services::PayoutService,
    /// Loans: offers expire, accepted ones are paid out, standings move (with each payout run).
    pub loans: holdfast_domain::services::LoanService,
    pub payout_every: Option<Duration>,
    /// Where the delivery loops hear of notifications other processes write for the claim, so
    /// they claim them at once and poll seldom while idle (PostgreSQL).
    pub wake_ups: Option<Arc<dyn WakeUpSource>>,
}

impl Workers {
    /// Starts `deliverers` delivery loops, one mail loop and one retention loop. With
    /// `hand_off` (a `serve` whose database hands it the notifications it writes), the loops
    /// share that load and the first takes the hand-offs; otherwise they only claim.
    pub fn spawn(
        self,
        deliverers: u32,
        hand_off: Option<(Arc<DeliveryLoad>, HandOffs)>,
    ) -> Running {
        let (stop_tx, stop) = watch::channel(false);
        let mut set = JoinSet::new();
        let (load, mut hand_offs) = match hand_off {
            Some((load, hand_offs)) => (load, Some(hand_offs)),
            None => (
                DeliveryLoad::claiming(self.settings.load_limits(deliverers)),
                None,
            ),
        };
        if let Some(wake_ups) = self.wake_ups.clone() {
            let (load, mut stop) = (load.clone(), stop.clone());
            set.spawn(named(
                "listening for notifications written elsewhere",
                async move {
                    tokio::select! {
                        () = wake_ups.listen(load.hints()) => {}
                        _ = stop.changed() => {}
                    }
                },
            ));
        }
        for n in 0..deliverers {
            let deliverer = Arc::new(Deliverer::new(
                self.queue.clone(),
                self.sender.clone(),
                self.clock.clone(),
                self.settings.clone(),
                load.clone(),
            ));
            let slot = HandOffSlot::new(hand_offs.take());
            set.spawn(on_own_thread(
                format!("holdfast-delivery-{n}"),
                stop.clone(),
                move |stop| deliverer.clone().run(stop, slot.clone()),
            ));
        }
        let (outbox, mailer, clock) = (self.outbox, self.mailer, self.clock);
        set.spawn(supervise::supervised("the email outbox", stop.clone(), {
            let clock = clock.clone();
            move |stop| {
                mail::run(
                    outbox.clone(),
                    mailer.clone(),
                    clock.clone(),
                    Duration::from_secs(1),
                    stop,
                )
            }
        }));
        let (payments, reconcile_after) = (self.payments, self.reconcile_after);
        set.spawn(supervise::supervised(
            "the reconciliation of pending transactions",
            stop.clone(),
            move |stop| reconcile::run(payments.clone(), clock.clone(), reconcile_after, stop),
        ));
        if let Some(every) = self.settle_every {
            let settlement = self.settlement;
            set.spawn(supervise::supervised(
                "settlement",
                stop.clone(),
                move |stop| settlement::run(settlement.clone(), every, stop),
            ));
        }
        if let Some(every) = self.payout_every {
            let (payouts, loans) = (self.payouts, self.loans);
            set.spawn(supervise::supervised(
                "the payout rails",
                stop.clone(),
                move |stop| payouts::run(payouts.clone(), loans.clone(), every, stop),
            ));
        }
        let tokens = self.tokens;
        set.spawn(supervise::supervised(
            "the erasure of expired tokens",
            stop.clone(),
            move |stop| retention::erase_expired_tokens(tokens.clone(), stop),
        ));
        let (webhooks, idempotency, compliance) =
            (self.webhooks, self.idempotency, self.compliance);
        set.spawn(supervise::supervised(
            "retention",
            stop.clone(),
            move |stop| {
                retention::run(
                    webhooks.clone(),
                    idempotency.clone(),
                    compliance.clone(),
                    stop,
                )
            },
        ));
        tracing::info!(deliverers, "workers started");
        Running { stop: stop_tx, set }
    }
}

/// Which loop ended, and how: loops run until asked to stop, so one that returns early or
/// panics leaves the process unable to do its work.
type Ended = Result<&'static str, String>;

/// `work`, named for the error when it ends.
async fn named(name: &'static str, work: impl Future<Output = ()>) -> Ended {
    work.await;
    Ok(name)
}

/// Runs `work(stop)` on a thread of its own, in a single-threaded runtime, until `stop` turns
/// true: what it spawns (a delivery loop's attempts, their connections to receivers, its
/// recorder, and the database connections of its own pool, where the store keeps one per thread)
/// stays on that thread, woken without crossing to another. A run that panics or ends early is
/// logged and started again on the same runtime after a backoff (`supervise`): the attempts it
/// left are aborted (each gives its room back), its recorder finishes what it was given, and
/// its lines are left to their lease.
async fn on_own_thread<W, F>(name: String, stop: Stop, mut work: W) -> Ended
where
    W: FnMut(Stop) -> F + Send + 'static,
    F: Future<Output = ()>,
{
    let (done, finished) = tokio::sync::oneshot::channel();
    let thread = name.clone();
    let spawned = std::thread::Builder::new()
        .name(name.clone())
        .spawn(move || {
            // Without its runtime the loop cannot run: `done` goes unsent, which is the fault
            // this thread's supervisor hears.
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            let mut backoff = supervise::Backoff::default();
            loop {
                let began = std::time::Instant::now();
                let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    runtime.block_on(work(stop.clone()));
                }));
                if *stop.borrow() {
                    break;
                }
                let wait = backoff.after_run_of(began.elapsed());
                let how = if ran.is_ok() {
                    "ended before it was asked to stop"
                } else {
                    "panicked"
                };
                tracing::error!(task = %thread, how, restart_in_ms = wait.as_millis(), "a delivery loop stopped; starting it again");
                let mut waiting = stop.clone();
                runtime.block_on(pause(&mut waiting, wait));
                if *stop.borrow() {
                    break;
                }
            }
            let _ = done.send(());
        });
    match spawned {
        // Its runtime could not be built.
        Ok(_) => match finished.await {
            Ok(()) => Ok("a delivery loop"),
            Err(_) => Err(format!("{name} could not run")),
        },
        Err(err) => Err(format!("{name} could not start: {err}")),
    }
}

/// Turns true when the workers are asked to stop.
type Stop = watch::Receiver<bool>;

/// Sleeps `duration`, or less if asked to stop.
async fn pause(stop: &mut Stop, duration: Duration) {
    tokio::select! {
        () = tokio::time::sleep(duration) => {}
        _ = stop.changed() => {}
    }
}

/// Workers that are running.
#[derive(Debug)]
pub struct Running {
    stop: watch::Sender<bool>,
    set: JoinSet<Ended>,
}

impl Running {
    /// Waits until a loop that is not started again ends before being asked to stop (the
    /// wake-up listener, or a delivery thread that could not build its runtime), and says which
    /// and how; every other loop is started again in place (`supervise`, `on_own_thread`). The
    /// process should then stop (non-zero) so that its supervisor starts it again: serving on
    /// without it would leave notifications waiting for another process, unseen. Nothing it
    /// held is lost: its leases run out and are claimed again.
    pub async fn fault(&mut self) -> anyhow::Error {
        let ended = match self.set.join_next().await {
            Some(Ok(Ok(name))) => format!("{name} ended before it was asked to stop"),
            Some(Ok(Err(failure))) => failure,
            Some(Err(join)) => format!("a background loop stopped abnormally: {join}"),
            None => return std::future::pending().await,
        };
        anyhow::anyhow!("a background worker failed: {ended}")
    }

    /// Stops claiming new work and waits for the work in hand: attempts in flight (each bounded
    /// by its lease) and the email being sent.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        while let Some(ended) = self.set.join_next().await {
            match ended {
                Ok(Ok(_)) => {}
                Ok(Err(failure)) => tracing::error!(failure, "a background loop failed"),
                Err(join) => tracing::error!(error = %join, "a background loop stopped abnormally"),
            }
        }
        tracing::info!("workers stopped");
    }
}

impl std::fmt::Debug for Workers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Workers")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(set: JoinSet<Ended>) -> Running {
        Running {
            stop: watch::channel(false).0,
            set,
        }
    }

    /// The test-only hook: a loop on its own thread that panics on its first two runs, then
    /// runs until stopped. It is started again there, and is no fault.
    #[tokio::test]
    async fn a_loop_on_its_own_thread_that_panics_is_started_again() {
        let (stop_tx, stop) = watch::channel(false);
        let runs = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let counted = runs.clone();
        let mut set = JoinSet::new();
        set.spawn(on_own_thread(
            "holdfast-delivery-7".into(),
            stop,
            move |mut stop| {
                let run = counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    assert!(run >= 2, "a loop's bug, run {run}");
                    let _ = stop.changed().await;
                }
            },
        ));
        let mut running = Running { stop: stop_tx, set };
        // Two restarts: after 100 ms, then 200 ms; no fault meanwhile.
        assert!(
            tokio::time::timeout(Duration::from_millis(800), running.fault())
                .await
                .is_err()
        );
        assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), 3);
        running.shutdown().await;
    }

    #[tokio::test]
    async fn a_loop_still_running_is_no_fault() {
        let mut set = JoinSet::new();
        set.spawn(named("retention", std::future::pending()));
        let mut running = running(set);
        assert!(
            tokio::time::timeout(Duration::from_millis(50), running.fault())
                .await
                .is_err()
        );
        let mut set = JoinSet::new();
        set.spawn(named("retention", std::future::ready(())));
        let fault = self::running(set).fault().await.to_string();
        assert!(fault.contains("retention ended"), "{fault}");
    }
}
