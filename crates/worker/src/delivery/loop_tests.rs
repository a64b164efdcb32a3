//! The delivery loop against stand-in ports: a queue that shows the test every claim it is
//! asked for and holds each outcome until the test lets it be written, and a sender that holds
//! each request until the test answers it. What the loop starts, claims and records is seen
//! from outside it, with no database (the loop over a real one, as the binary wires it:
//! `apps/holdfast/tests/delivery_loop.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use holdfast_domain::ids::{NotificationId, PlatformId, UserId, WebhookId};
use holdfast_domain::mode::Mode;
use holdfast_domain::ports::{
    ClaimLimits, Claimed, Clock, Delivery, DeliveryHints, Finished, NotificationQueue, PostResult,
    Recorded, ResendError, StoreError, WebhookPost, WebhookSender,
};
use holdfast_domain::webhook::{EndpointUrl, EventList, Subscription};
use time::OffsetDateTime;
use tokio::sync::{Semaphore, mpsc, oneshot, watch};

use super::{Deliverer, DeliverySettings, HandOffSlot};
use crate::load::DeliveryLoad;

/// Long enough for anything the loop does at once, short enough to fail a test quickly.
const SOON: Duration = Duration::from_secs(5);

/// What a claim was asked with.
#[derive(Debug, Clone)]
struct ClaimAsked {
    limits: ClaimLimits,
    ended: Vec<NotificationId>,
    waiting: Vec<(WebhookId, u32)>,
}

/// A queue whose claims answer what the test put in `to_claim` (nothing otherwise), each seen
/// on `asked`; whose outcomes are written one per permit of `writes`, each seen on `recorded`.
struct StandInQueue {
    to_claim: Mutex<VecDeque<Vec<Claimed>>>,
    asked: mpsc::UnboundedSender<ClaimAsked>,
    writes: Arc<Semaphore>,
    recorded: mpsc::UnboundedSender<NotificationId>,
    pending: bool,
}

#[async_trait]
impl NotificationQueue for StandInQueue {
    async fn claim_notifications(
        &self,
        _now: OffsetDateTime,
        _lease_until: OffsetDateTime,
        limits: ClaimLimits,
        ended: &[NotificationId],
        waiting: &[(WebhookId, u32)],
    ) -> Result<Vec<Claimed>, StoreError> {
        let _ = self.asked.send(ClaimAsked {
            limits,
            ended: ended.to_vec(),
            waiting: waiting.to_vec(),
        });
        let batch = self
            .to_claim
            .lock()
            .unwrap()
            .pop_front()
            .unwrap_or_default();
        assert!(
            batch.len() <= usize::try_from(limits.batch).unwrap(),
            "the stand-in claims within the batch asked for"
        );
        Ok(batch)
    }

    async fn any_pending(&self) -> Result<bool, StoreError> {
        Ok(self.pending)
    }

    async fn complete_notifications(
        &self,
        outcomes: &[(NotificationId, Finished)],
        _service_name: &str,
    ) -> Result<Vec<Recorded>, StoreError> {
        let mut written = Vec::new();
        for (id, _) in outcomes {
            self.writes.acquire().await.unwrap().forget();
            let _ = self.recorded.send(id.clone());
            written.push(Recorded {
                recorded: true,
                disabled: false,
                email_queued: false,
            });
        }
        Ok(written)
    }

    async fn archive_deliveries(&self, _before: OffsetDateTime) -> Result<u64, StoreError> {
        unreachable!("not the delivery loop's")
    }

    async fn delete_orphaned_deliveries(&self) -> Result<u64, StoreError> {
        unreachable!("not the delivery loop's")
    }

    async fn resend(
        &self,
        _platform: &PlatformId,
        _id: &NotificationId,
        _new_id: &NotificationId,
        _now: OffsetDateTime,
    ) -> Result<Delivery, ResendError> {
        unreachable!("not the delivery loop's")
    }

    async fn queue_test(
        &self,
        _scope: &holdfast_domain::scope::Scope,
        _webhook: &WebhookId,
        _event: &holdfast_domain::ports::Event,
    ) -> Result<Delivery, holdfast_domain::ports::TestEventError> {
        unreachable!("not the delivery loop's")
    }
}

/// A request the sender holds: its notification, and where its answer goes.
type Held = (String, oneshot::Sender<PostResult>);

struct HeldSender(mpsc::UnboundedSender<Held>);

#[async_trait]
impl WebhookSender for HeldSender {
    async fn post(&self, post: &WebhookPost) -> PostResult {
        let (answer, answered) = oneshot::channel();
        self.0
            .send((post.message_id.clone(), answer))
            .expect("the test listens");
        answered.await.expect("the test answers every request")
    }
}

struct FixedClock;

impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        time::macros::datetime!(2026-12-06 12:00 UTC)
    }
}

fn subscription(webhook: &str) -> Subscription {
    Subscription {
        id: WebhookId::from_trusted(webhook.to_owned()),
        platform_id: PlatformId::from_trusted("pfm_1".to_owned()),
        mode: Mode::Test,
        endpoint_url: EndpointUrl::parse("https://example.com/hooks").unwrap(),
        events: EventList::parse(&["merchant.created"]).unwrap(),
        description: None,
        custom_header: None,
        active: true,
        secret: "whsec_dGVzdA==".into(),
        previous_secret: None,
        creator: UserId::from_trusted("usr_1".to_owned()),
        consecutive_failures: 0,
        created_on: FixedClock.now(),
        updated_on: FixedClock.now(),
        metadata: holdfast_domain::metadata::Metadata::default(),
    }
}

/// Notification `id` to `webhook`.
fn row(id: &str, webhook: &str) -> Claimed {
    Claimed {
        id: NotificationId::from_trusted(id.to_owned()),
        event_id: holdfast_domain::ids::EventId::from_trusted("evt_1".to_owned()),
        platform_id: PlatformId::from_trusted("pfm_1".to_owned()),
        webhook_id: WebhookId::from_trusted(webhook.to_owned()),
        event_type: "merchant.created".into(),
        event_data: "{}".into(),
        created_on: FixedClock.now(),
        subscription: Some(subscription(webhook)),
    }
}

fn settings(concurrency: u32, per_subscription: u32, poll: Duration) -> DeliverySettings {
    DeliverySettings {
        timeout: Duration::from_secs(5),
        backoff_base: Duration::from_millis(10),
        concurrency,
        per_subscription,
        per_platform: concurrency.max(2),
        poll,
        idle_poll: poll,
        service_name: "Holdfast".into(),
    }
}

/// One running delivery loop and what the test sees of it.
struct Running {
    load: Arc<DeliveryLoad>,
    stop: watch::Sender<bool>,
    run: tokio::task::JoinHandle<()>,
    asked: mpsc::UnboundedReceiver<ClaimAsked>,
    arrived: mpsc::UnboundedReceiver<Held>,
    writes: Arc<Semaphore>,
    recorded: mpsc::UnboundedReceiver<NotificationId>,
}

/// A loop of `settings` over a stand-in queue that answers `claims` in turn, taking hand-offs;
/// its outcomes are written freely unless `hold_writes`.
fn start(settings: DeliverySettings, claims: Vec<Vec<Claimed>>, hold_writes: bool) -> Running {
    start_with(settings, claims, hold_writes, true)
}

fn start_with(
    settings: DeliverySettings,
    claims: Vec<Vec<Claimed>>,
    hold_writes: bool,
    pending: bool,
) -> Running {
    let (asked_tx, asked) = mpsc::unbounded_channel();
    let (recorded_tx, recorded) = mpsc::unbounded_channel();
    let writes = Arc::new(Semaphore::new(if hold_writes {
        0
    } else {
        Semaphore::MAX_PERMITS
    }));
    let queue = StandInQueue {
        to_claim: Mutex::new(claims.into()),
        asked: asked_tx,
        writes: writes.clone(),
        recorded: recorded_tx,
        pending,
    };
    let (to_test, arrived) = mpsc::unbounded_channel();
    let (load, hand_offs) = DeliveryLoad::handing_off(settings.load_limits(1));
    let deliverer = Arc::new(Deliverer::new(
        Arc::new(queue),
        Arc::new(HeldSender(to_test)),
        Arc::new(FixedClock),
        settings,
        load.clone(),
    ));
    let (stop, stopped) = watch::channel(false);
    let run = tokio::spawn(deliverer.run(stopped, HandOffSlot::new(Some(hand_offs))));
    Running {
        load,
        stop,
        run,
        asked,
        arrived,
        writes,
        recorded,
    }
}

impl Running {
    /// Hands `rows` to the loop as a store does at commit.
    fn hand_off(&self, rows: Vec<Claimed>) {
        let webhooks: Vec<&str> = rows.iter().map(|r| r.webhook_id.as_str()).collect();
        let reservation = self.load.reserve(&webhooks).expect("room in the lines");
        reservation.hand(rows);
    }

    /// The next request to arrive.
    async fn next_request(&mut self) -> Held {
        tokio::time::timeout(SOON, self.arrived.recv())
            .await
            .expect("a request within 5 s")
            .expect("the sender is alive")
    }

    /// Whether a request arrives within `wait`.
    async fn request_within(&mut self, wait: Duration) -> Option<Held> {
        tokio::time::timeout(wait, self.arrived.recv())
            .await
            .ok()
            .flatten()
    }

    /// The next claim asked for that satisfies `wanted`.
    async fn claim_where(&mut self, wanted: impl Fn(&ClaimAsked) -> bool) -> ClaimAsked {
        tokio::time::timeout(SOON, async {
            loop {
                let asked = self.asked.recv().await.expect("the queue is alive");
                if wanted(&asked) {
                    return asked;
                }
            }
        })
        .await
        .expect("such a claim within 5 s")
    }

    async fn next_recorded(&mut self) -> NotificationId {
        tokio::time::timeout(SOON, self.recorded.recv())
            .await
            .expect("an outcome written within 5 s")
            .expect("the queue is alive")
    }
}

fn ok() -> PostResult {
    PostResult::Answered {
        status: 204,
        body: String::new(),
    }
}

fn ids(rows: &[Claimed]) -> Vec<String> {
    rows.iter().map(|r| r.id.to_string()).collect()
}

#[tokio::test]
async fn rows_handed_to_one_subscription_start_oldest_first_never_beyond_its_cap() {
    let mut running = start(settings(8, 1, Duration::from_mins(1)), vec![], false);
    let rows = vec![
        row("ntf_1", "wh_a"),
        row("ntf_2", "wh_a"),
        row("ntf_3", "wh_a"),
    ];
    let expected = ids(&rows);
    running.hand_off(rows);
    let mut order = Vec::new();
    for _ in 0..3 {
        let (id, answer) = running.next_request().await;
        assert!(
            running
                .request_within(Duration::from_millis(50))
                .await
                .is_none(),
            "a second request to the subscription while {id} is in flight"
        );
        order.push(id);
        answer.send(ok()).unwrap();
    }
    assert_eq!(order, expected, "in the order they were written");
}

#[tokio::test]
async fn a_claim_asks_only_for_the_room_left_and_none_while_the_process_is_full() {
    let claimed = vec![row("ntf_1", "wh_a"), row("ntf_2", "wh_b")];
    let mut running = start(
        settings(2, 2, Duration::from_millis(20)),
        vec![claimed, vec![row("ntf_3", "wh_c")]],
        false,
    );
    let first = running.claim_where(|_| true).await;
    assert_eq!(first.limits.batch, 2, "the whole room of an idle process");
    let (a, answer_a) = running.next_request().await;
    let (b, _answer_b) = running.next_request().await;
    assert_eq!([a.as_str(), b.as_str()], ["ntf_1", "ntf_2"]);
    // Full: polls pass and no claim is asked for.
    tokio::time::sleep(Duration::from_millis(100)).await;
    if let Ok(asked) = running.asked.try_recv() {
        panic!("a claim while full: {asked:?}");
    }
    answer_a.send(ok()).unwrap();
    let next = running.claim_where(|_| true).await;
    assert_eq!(next.limits.batch, 1, "the one place given back");
    assert_eq!(running.next_request().await.0, "ntf_3");
}

#[tokio::test]
async fn the_claim_is_told_of_rows_waiting_in_lines_and_of_attempts_awaiting_their_record() {
    let mut running = start(settings(8, 1, Duration::from_millis(20)), vec![], true);
    running.hand_off(vec![row("ntf_1", "wh_a"), row("ntf_2", "wh_a")]);
    let (first, answer) = running.next_request().await;
    assert_eq!(first, "ntf_1");
    let waiting = running.claim_where(|a| !a.waiting.is_empty()).await;
    assert_eq!(
        waiting.waiting,
        [(WebhookId::from_trusted("wh_a".to_owned()), 1)],
        "ntf_2 waits behind the subscription's cap: leased, not in flight"
    );
    answer.send(ok()).unwrap();
    // ntf_1's outcome is held before its write: its row is leased but holds no connection.
    let ended = running.claim_where(|a| !a.ended.is_empty()).await;
    assert_eq!(
        ended.ended,
        [NotificationId::from_trusted("ntf_1".to_owned())]
    );
    running.writes.add_permits(1);
    assert_eq!(running.next_recorded().await.as_str(), "ntf_1");
    let after = running
        .claim_where(|a| a.ended.is_empty() && a.waiting.is_empty())
        .await;
    assert_eq!(
        after.limits.batch, 7,
        "ntf_2 started: one in flight of eight"
    );
}

#[tokio::test]
async fn an_idle_listening_loop_waits_its_idle_poll_and_claims_at_once_when_told() {
    let mut quiet = settings(8, 2, Duration::from_millis(20));
    quiet.idle_poll = Duration::from_mins(1);
    let mut running = start_with(quiet, vec![], false, false);
    DeliveryHints::listening(running.load.as_ref(), true);
    // The first claim finds nothing, sees nothing pending and waits its idle poll, not its
    // 20 ms poll.
    running.claim_where(|_| true).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let polled = std::iter::from_fn(|| running.asked.try_recv().ok()).count();
    assert_eq!(polled, 0, "claims while idle and listening");
    DeliveryHints::due(running.load.as_ref());
    running.claim_where(|_| true).await;
}

#[tokio::test]
async fn a_stop_lets_the_attempts_in_flight_finish_and_their_outcomes_be_written() {
    let mut running = start(
        settings(8, 2, Duration::from_millis(20)),
        vec![vec![row("ntf_1", "wh_a")]],
        false,
    );
    let (id, answer) = running.next_request().await;
    running.stop.send(true).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!running.run.is_finished(), "ended with {id} in flight");
    answer.send(ok()).unwrap();
    assert_eq!(running.next_recorded().await.as_str(), "ntf_1");
    tokio::time::timeout(SOON, running.run)
        .await
        .expect("the run ends once its attempt is recorded")
        .unwrap();
}

#[tokio::test]
async fn rows_handed_off_before_a_stop_are_still_started() {
    let mut running = start(settings(8, 1, Duration::from_mins(1)), vec![], false);
    running.hand_off(vec![row("ntf_1", "wh_a"), row("ntf_2", "wh_a")]);
    let (_, answer) = running.next_request().await;
    running.stop.send(true).unwrap();
    answer.send(ok()).unwrap();
    let (second, answer) = running.next_request().await;
    assert_eq!(
        second, "ntf_2",
        "started as room came back, not left to its lease"
    );
    answer.send(ok()).unwrap();
    tokio::time::timeout(SOON, running.run)
        .await
        .expect("the run ends")
        .unwrap();
}
