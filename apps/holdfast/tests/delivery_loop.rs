//! The delivery loop as the binary wires it: a real SQLite database written through the
//! services, and a sender that holds each request until the test answers it, so what is in
//! flight is seen from outside the loop. (The loop against mock ports: `holdfast-worker`'s own
//! tests.)

#![expect(
    clippy::unwrap_used,
    reason = "the helpers of a test fail it by panicking"
)]

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::audit::Actor;
use holdfast_domain::auth::Principal;
use holdfast_domain::merchant::{Currency, MerchantDetails, MerchantName};
use holdfast_domain::mode::{KeyType, Mode};
use holdfast_domain::page::PageRequest;
use holdfast_domain::platform::PlatformName;
use holdfast_domain::ports::{
    Delivery, DeliveryState, PostResult, Replacement, SubscriptionChange, WakeUpSource,
    WebhookPost, WebhookSender,
};
use holdfast_domain::scope::Scope;
use holdfast_domain::services::NewWebhook;
use holdfast_domain::user::Email;
use holdfast_domain::webhook::{EndpointUrl, EventList, Outcome, Subscription};
use holdfast_persistence::testing::TestDatabase;
use tokio::sync::{mpsc, oneshot, watch};

use holdfast::state::{AppState, Background};
use holdfast::system::SystemClock;
use holdfast_worker::{Deliverer, DeliveryLoad, DeliverySettings, HandOffSlot, HandOffs};

/// A request the sender holds: its notification, where it goes, and where its answer goes.
type Held = (String, String, oneshot::Sender<PostResult>);

/// Hands each request to the test and answers what the test answers.
struct HeldSender {
    arrived: mpsc::UnboundedSender<Held>,
}

#[async_trait::async_trait]
impl WebhookSender for HeldSender {
    async fn post(&self, post: &WebhookPost) -> PostResult {
        let (answer, answered) = oneshot::channel();
        self.arrived
            .send((post.message_id.clone(), post.url.clone(), answer))
            .expect("the test listens");
        answered.await.expect("the test answers every request")
    }
}

fn ok() -> PostResult {
    PostResult::Answered {
        status: 204,
        body: String::new(),
    }
}

const PER_SUBSCRIPTION: u32 = 2;

fn settings() -> DeliverySettings {
    let timeout = Duration::from_secs(5);
    let backoff_base = Duration::from_millis(10);
    DeliverySettings {
        timeout,
        backoff_base,
        concurrency: 8,
        per_subscription: PER_SUBSCRIPTION,
        per_platform: 6,
        poll: Duration::from_millis(20),
        idle_poll: Duration::from_millis(20),
        service_name: "Holdfast".into(),
    }
}

/// A platform with one subscription to `merchant.created`, and `merchants` merchants written:
/// as many notifications pending, for the claim.
async fn pending_notifications(state: &AppState, merchants: usize) -> (Principal, Subscription) {
    let created = state
        .platforms
        .create(
            &Actor::operator(),
            PlatformName::parse("Loop").unwrap(),
            Email::parse("owner@example.com").unwrap(),
        )
        .await
        .unwrap();
    let who = Principal {
        scope: Scope::new(created.platform.id.clone(), Mode::Test),
        key_type: KeyType::Private,
        key_id: Some(created.keys[0].key.id.clone()),
        user_id: created.owner.id.clone(),
    };
    let hook = NewWebhook {
        endpoint_url: EndpointUrl::parse("https://example.com/hooks").unwrap(),
        events: EventList::parse(&["merchant.created"]).unwrap(),
        description: None,
        custom_header: None,
        active: true,
        metadata: holdfast_domain::metadata::Metadata::default(),
    };
    let subscription = state
        .webhooks
        .create(&who, &Actor::operator(), hook, None)
        .await
        .unwrap();
    for i in 0..merchants {
        let details = MerchantDetails {
            name: MerchantName::parse(&format!("Shop {i}")).unwrap(),
            currency: Currency::parse("EUR").unwrap(),
            email: None,
            metadata: holdfast_domain::metadata::Metadata::default(),
        };
        state.merchants.create(&who, details, None).await.unwrap();
    }
    (who, subscription)
}

/// The next request to arrive, within `wait`.
async fn next(arrived: &mut mpsc::UnboundedReceiver<Held>, wait: Duration) -> Option<Held> {
    tokio::time::timeout(wait, arrived.recv())
        .await
        .ok()
        .flatten()
}

/// One delivery loop of `settings` over `db`, its requests held for the test: its stop, its task,
/// and the requests as they arrive.
fn start_loop(
    settings: DeliverySettings,
    db: &holdfast_persistence::Database,
    state: &AppState,
    load: Arc<DeliveryLoad>,
    hand_offs: Option<HandOffs>,
) -> (
    watch::Sender<bool>,
    tokio::task::JoinHandle<()>,
    mpsc::UnboundedReceiver<Held>,
) {
    let (to_test, arrived) = mpsc::unbounded_channel();
    let deliverer = Arc::new(Deliverer::new(
        Background::new(db, state).notifications,
        Arc::new(HeldSender { arrived: to_test }),
        Arc::new(SystemClock),
        settings,
        load,
    ));
    let (stop, stopped) = watch::channel(false);
    (
        stop,
        tokio::spawn(deliverer.run(stopped, HandOffSlot::new(hand_offs))),
        arrived,
    )
}

/// The subscription's delivery records, oldest first.
async fn deliveries(
    db: &holdfast_persistence::Database,
    who: &Principal,
    subscription: &Subscription,
) -> Vec<Delivery> {
    let page = PageRequest::new(Some(100), None).unwrap();
    let mut deliveries = db
        .stores()
        .webhooks
        .list_deliveries(&who.scope.platform, None, &subscription.id, &page)
        .await
        .unwrap()
        .data;
    deliveries.sort_by_key(|d| d.created_on);
    deliveries
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claimed_rows_are_attempted_within_the_cap_recorded_and_finished_before_a_stop() {
    let test_db = TestDatabase::sqlite().await;
    let db = test_db.open();
    let state = AppState::new(db.clone());
    let (who, subscription) = pending_notifications(&state, 5).await;
    let load = DeliveryLoad::claiming(settings().load_limits(1));
    let (stop, running, mut arrived) = start_loop(settings(), &db, &state, load, None);

    // The subscription's cap: two attempts at once, and no third while both are held.
    let mut held = Vec::new();
    for _ in 0..PER_SUBSCRIPTION {
        held.push(
            next(&mut arrived, Duration::from_secs(5))
                .await
                .expect("an attempt starts"),
        );
    }
    assert!(
        next(&mut arrived, Duration::from_millis(300))
            .await
            .is_none(),
        "a third attempt started while the cap's two were in flight"
    );

    // Each answer frees one place, which the next row takes.
    let mut sent = Vec::new();
    let mut started = held.len();
    while sent.len() < 4 {
        let (id, _, answer) = held.remove(0);
        answer.send(ok()).unwrap();
        sent.push(id);
        if started < 5 {
            let more = next(&mut arrived, Duration::from_secs(5)).await;
            held.push(more.expect("the next row starts in the place freed"));
            started += 1;
        }
    }
    assert_eq!(held.len(), 1, "the fifth row is in flight");

    // Stopping waits for the attempt in flight, and records its outcome.
    stop.send(true).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!running.is_finished(), "stopped with an attempt in flight");
    let (id, _, answer) = held.remove(0);
    answer.send(ok()).unwrap();
    sent.push(id);
    tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the loop stops once its attempt ends")
        .unwrap();
    assert!(next(&mut arrived, Duration::ZERO).await.is_none());

    let deliveries = deliveries(&db, &who, &subscription).await;
    let mut recorded: Vec<&str> = deliveries
        .iter()
        .filter(|d| d.state == DeliveryState::Done(Outcome::Succeeded))
        .map(|d| d.id.as_str())
        .collect();
    recorded.sort_unstable();
    sent.sort_unstable();
    assert_eq!(deliveries.len(), 5);
    assert_eq!(
        recorded, sent,
        "each row sent once, and recorded as it was answered"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handed_off_rows_start_oldest_first_within_the_cap_and_are_sent_once() {
    let test_db = TestDatabase::sqlite().await;
    let (load, hand_offs) = DeliveryLoad::handing_off(settings().load_limits(1));
    let db = test_db.open().delivering(load.hints());
    let state = AppState::new(db.clone());
    // Written before the loop runs: every row waits in its line, handed off, none claimable.
    let (who, subscription) = pending_notifications(&state, 5).await;
    let (stop, running, mut arrived) = start_loop(settings(), &db, &state, load, Some(hand_offs));

    let mut order = Vec::new();
    let mut held = Vec::new();
    while order.len() < 5 {
        let (id, _, answer) = next(&mut arrived, Duration::from_secs(5))
            .await
            .expect("every handed-off row starts");
        order.push(id);
        held.push(answer);
        assert!(
            held.len() <= PER_SUBSCRIPTION as usize,
            "more attempts in flight than the subscription's cap"
        );
        if held.len() == PER_SUBSCRIPTION as usize || order.len() == 5 {
            held.remove(0).send(ok()).unwrap();
        }
    }
    for answer in held {
        answer.send(ok()).unwrap();
    }
    assert!(
        next(&mut arrived, Duration::from_millis(300))
            .await
            .is_none(),
        "a row was sent twice"
    );
    stop.send(true).unwrap();
    running.await.unwrap();

    let deliveries = deliveries(&db, &who, &subscription).await;
    let oldest_first: Vec<&str> = deliveries.iter().map(|d| d.id.as_str()).collect();
    // The first two start together, in either order; then each freed place takes the oldest
    // row not yet started.
    let (mut together, mut written) = (order[..2].to_vec(), oldest_first[..2].to_vec());
    together.sort_unstable();
    written.sort_unstable();
    assert_eq!(together, written, "the line started a newer row first");
    assert_eq!(
        order[2..],
        oldest_first[2..],
        "a line starts its rows in the order written"
    );
    assert!(
        deliveries
            .iter()
            .all(|d| d.state == DeliveryState::Done(Outcome::Succeeded))
    );
}

/// A loop taking hand-offs of notifications all written before it ran, so every one waits in
/// its line, with the first requests (the subscription's cap) held.
struct Handing {
    _test_db: TestDatabase,
    db: holdfast_persistence::Database,
    state: AppState,
    load: Arc<DeliveryLoad>,
    who: Principal,
    subscription: Subscription,
    stop: watch::Sender<bool>,
    running: tokio::task::JoinHandle<()>,
    arrived: mpsc::UnboundedReceiver<Held>,
}

impl Handing {
    async fn start(written: usize) -> (Self, VecDeque<Held>) {
        let test_db = TestDatabase::sqlite().await;
        let (load, hand_offs) = DeliveryLoad::handing_off(settings().load_limits(1));
        let db = test_db.open().delivering(load.hints());
        let state = AppState::new(db.clone());
        let (who, subscription) = pending_notifications(&state, written).await;
        let (stop, running, mut arrived) =
            start_loop(settings(), &db, &state, load.clone(), Some(hand_offs));
        let mut held = VecDeque::new();
        for _ in 0..PER_SUBSCRIPTION {
            held.push_back(next(&mut arrived, Duration::from_secs(5)).await.unwrap());
        }
        let handing = Self {
            _test_db: test_db,
            db,
            state,
            load,
            who,
            subscription,
            stop,
            running,
            arrived,
        };
        (handing, held)
    }

    /// Waits until nothing waits in the lines, is in flight or is being recorded.
    async fn until_idle(&self) {
        let started = std::time::Instant::now();
        while self.load.waiting() + self.load.in_flight() + self.load.unrecorded().len() > 0 {
            assert!(started.elapsed() < Duration::from_secs(5), "never idle");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The states of the subscription's `written` notifications once every one is final.
    async fn until_all_final(&self, written: usize) -> Vec<DeliveryState> {
        let started = std::time::Instant::now();
        loop {
            let states: Vec<DeliveryState> = self.states().await;
            if states.len() == written && !states.contains(&DeliveryState::Pending) {
                return states;
            }
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "never all final: {states:?}"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    async fn states(&self) -> Vec<DeliveryState> {
        let deliveries = deliveries(&self.db, &self.who, &self.subscription).await;
        deliveries.iter().map(|d| d.state).collect()
    }

    /// Stops the loop, once no request it made is left unanswered.
    async fn stop(mut self) {
        assert!(
            self.arrived.try_recv().is_err(),
            "a row was sent it should not have been"
        );
        self.stop.send(true).unwrap();
        self.running.await.unwrap();
    }
}

fn count(states: &[DeliveryState], outcome: Outcome) -> usize {
    let done = DeliveryState::Done(outcome);
    states.iter().filter(|s| **s == done).count()
}

/// What a subscription change does to the rows waiting in its line (`SubscriptionChange`).
#[derive(Debug, Clone, Copy)]
enum Change {
    Disable,
    NewUrl,
    Delete,
}

/// Rows handed off wait in their line while the subscription is at its cap; a change made
/// meanwhile reaches them before their turn: none goes to a subscription disabled, edited or
/// deleted since it was written, as a claimed row would not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_waiting_in_a_line_go_as_their_subscription_now_is() {
    let new_url = EndpointUrl::parse("https://example.org/new").unwrap();
    for change in [Change::Disable, Change::NewUrl, Change::Delete] {
        let (mut l, held) = Handing::start(5).await;
        let (hooks, who, id) = (&l.state.webhooks, &l.who, &l.subscription.id);
        let actor = Actor::operator();
        match change {
            Change::Disable => drop(hooks.set_active(who, &actor, id, false).await.unwrap()),
            Change::NewUrl => {
                let replacement = Replacement {
                    endpoint_url: new_url.clone(),
                    events: l.subscription.events.clone(),
                    description: None,
                    custom_header: None,
                    active: None,
                    metadata: None,
                };
                drop(hooks.replace(who, &actor, id, replacement).await.unwrap());
            }
            Change::Delete => hooks.delete(who, &actor, id).await.unwrap(),
        }
        for (_, _, answer) in held {
            answer.send(ok()).unwrap();
        }
        // The three rows that waited: sent to the new address, or not sent at all.
        match change {
            Change::Disable => {
                let states = l.until_all_final(5).await;
                assert_eq!(count(&states, Outcome::Succeeded), 2, "{change:?}");
                assert_eq!(count(&states, Outcome::Skipped), 3, "{change:?}");
            }
            Change::NewUrl => {
                for _ in 0..3 {
                    let (_, url, answer) =
                        next(&mut l.arrived, Duration::from_secs(5)).await.unwrap();
                    assert_eq!(url, new_url.as_str());
                    answer.send(ok()).unwrap();
                }
                let states = l.until_all_final(5).await;
                assert_eq!(count(&states, Outcome::Succeeded), 5, "{change:?}");
            }
            // The history goes with the subscription: nothing left to read but the lines.
            Change::Delete => l.until_idle().await,
        }
        l.stop().await;
    }
}

/// Spec 6.3: the 25th consecutive failure disables the subscription; the rows waiting in its
/// line then are skipped, not sent. Those that started before the failure was recorded (one
/// per place freed meanwhile) finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_waiting_when_the_25th_failure_disables_their_subscription_are_skipped() {
    const WRITTEN: usize = 30;
    let (mut l, mut held) = Handing::start(WRITTEN).await;
    let mut told = l.load.changes();
    let gone = || PostResult::Answered {
        status: 410,
        body: String::new(),
    };
    // A 4xx is not retried: one request, one failure each. Each answer frees a place, which
    // the next row takes at once, before the failure is recorded.
    for _ in 0..25 {
        let (_, _, answer) = held.pop_front().unwrap();
        answer.send(gone()).unwrap();
        held.push_back(next(&mut l.arrived, Duration::from_secs(5)).await.unwrap());
    }
    // The recorder tells the loops once the 25th failure's disable is committed.
    let change = tokio::time::timeout(Duration::from_secs(5), told.recv())
        .await
        .expect("the disable is told")
        .unwrap();
    assert!(
        matches!(&change, SubscriptionChange::Disabled(id) if *id == l.subscription.id),
        "{change:?}"
    );
    let now = l.state.webhooks.get(&l.who, &l.subscription.id).await;
    assert!(!now.unwrap().active, "disabled by its 25th failure");
    let in_flight = held.len();
    for (_, _, answer) in held {
        answer.send(gone()).unwrap();
    }
    let states = l.until_all_final(WRITTEN).await;
    assert_eq!(count(&states, Outcome::Failed), 25 + in_flight);
    assert_eq!(count(&states, Outcome::Skipped), WRITTEN - 25 - in_flight);
    l.stop().await;
}

/// A loop that missed subscription changes cannot tell which rows they were about: it leaves
/// every waiting row to its lease (claimed after it, with its subscription as it is then)
/// rather than send one as its subscription no longer is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_that_missed_changes_leaves_its_lines_to_their_lease() {
    use holdfast_domain::ids::WebhookId;
    let (l, held) = Handing::start(5).await;
    // More than a loop keeps, even if it looks once in the middle.
    for n in 0..5_000 {
        let other = WebhookId::from_trusted(format!("wh_{n}"));
        l.load.changed(SubscriptionChange::Disabled(other));
    }
    for (_, _, answer) in held {
        answer.send(ok()).unwrap();
    }
    l.until_idle().await;
    let states = l.states().await;
    let pending = states
        .iter()
        .filter(|s| **s == DeliveryState::Pending)
        .count();
    assert_eq!(pending, 3, "left to their lease: {states:?}");
    l.stop().await;
}

/// A claiming load whose process listens for announcements (PostgreSQL), once it does, and
/// the listening task.
async fn listening(
    db: &holdfast_persistence::Database,
) -> (Arc<DeliveryLoad>, tokio::task::JoinHandle<()>) {
    let load = DeliveryLoad::claiming(settings().load_limits(1));
    let (wake_ups, hints) = (db.wake_ups().unwrap(), load.hints());
    let listener = tokio::spawn(async move { wake_ups.listen(hints).await });
    for _ in 0..500 {
        if load.listening() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(load.listening(), "listening within 5 s");
    (load, listener)
}

/// Settings whose idle poll is a minute away.
fn idle_a_minute() -> DeliverySettings {
    DeliverySettings {
        idle_poll: Duration::from_mins(1),
        ..settings()
    }
}

/// On PostgreSQL, an idle loop whose process listens (`holdfast_persistence::WakeUps`) claims
/// what another process announces as soon as it is committed, though its idle poll is a minute
/// away; what another process writes without announcing waits for that poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_listening_loop_claims_an_announced_write_at_once() {
    let Some(test_db) = TestDatabase::postgres().await else {
        return;
    };
    let db = test_db.open();
    let state = AppState::new(db.clone());
    let (load, listener) = listening(&db).await;
    let (stop, running, mut arrived) = start_loop(idle_a_minute(), &db, &state, load, None);
    // Its first claims find nothing: it is idle, its next claim a minute away.
    tokio::time::sleep(Duration::from_millis(300)).await;

    let quiet = AppState::new(test_db.open());
    pending_notifications(&quiet, 1).await;
    assert!(
        next(&mut arrived, Duration::from_secs(1)).await.is_none(),
        "a write nobody announced was claimed before the idle poll"
    );
    let announcing = AppState::new(test_db.open().announcing(Duration::from_millis(50)));
    pending_notifications(&announcing, 1).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(
            next(&mut arrived, Duration::from_secs(5))
                .await
                .expect("the announced write (and the one before it) claimed at once"),
        );
    }
    for (_, _, answer) in held {
        answer.send(ok()).unwrap();
    }
    stop.send(true).unwrap();
    running.await.unwrap();
    listener.abort();
}

/// On PostgreSQL, an idle listening loop keeps the poll while a notification is pending
/// anywhere: here one leased by another process that died, which the loop claims as soon as
/// its lease ends rather than at its idle poll (nothing announces a lease's end, nor the room
/// another process's attempts give back under a cap).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_listening_loop_keeps_the_poll_while_rows_are_pending() {
    let Some(test_db) = TestDatabase::postgres().await else {
        return;
    };
    let db = test_db.open();
    let state = AppState::new(db.clone());
    pending_notifications(&state, 1).await;
    let now = time::OffsetDateTime::now_utc();
    let lease = time::Duration::milliseconds(1500);
    let taken = db
        .stores()
        .notifications
        .claim_notifications(
            now,
            now + lease,
            holdfast_domain::ports::ClaimLimits {
                batch: 10,
                per_subscription: 10,
                per_platform: 10,
            },
            &[],
            &[],
        )
        .await
        .unwrap();
    assert_eq!(taken.len(), 1, "another process holds the row, then dies");
    let (load, listener) = listening(&db).await;
    let (stop, running, mut arrived) = start_loop(idle_a_minute(), &db, &state, load, None);
    assert!(
        next(&mut arrived, Duration::from_millis(500))
            .await
            .is_none(),
        "claimed before its lease ended"
    );
    let (_, _, answer) = next(&mut arrived, Duration::from_secs(5))
        .await
        .expect("claimed within a poll of its lease's end, not at the idle poll");
    answer.send(ok()).unwrap();
    stop.send(true).unwrap();
    running.await.unwrap();
    listener.abort();
}
