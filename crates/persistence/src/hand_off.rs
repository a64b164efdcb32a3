//! A process's delivery load, and the notifications it hands from its own writes straight to its
//! own deliverers.
//!
//! A `serve` that delivers webhooks itself leases the notifications it writes at insert, and
//! once they are committed passes them, with the event and the subscription it wrote them from,
//! to its delivery loop: no claim round trip, no poll delay, nothing read back. Should the
//! process die first, the lease runs out and any worker claims them as it claims a dead
//! worker's, so nothing is lost (only late). The loop keeps each handed row in its
//! subscription's waiting line until the process, the platform and the subscription are all
//! under their caps (`try_start`, counting the attempts of both paths), so one platform's slow
//! endpoints still leave another platform its slots, one endpoint never gets more from this
//! process than its cap, and a burst beyond the cap waits in order instead of being overtaken
//! (docs/design/webhook-fairness.md). The caps of hand-offs are this process's: with N
//! replicas writing for one subscription, it may get N times its cap (docs/decisions.md,
//! "Hand-offs and the caps").

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, broadcast, mpsc};

use holdfast_domain::ids::{NotificationId, PlatformId, WebhookId};
use holdfast_domain::ports::Claimed;
use holdfast_domain::webhook::Subscription;

/// Attempts in flight in this process, per platform and per subscription, with the caps they
/// keep to.
#[derive(Debug)]
pub struct DeliveryLoad {
    load: Mutex<Load>,
    limits: LoadLimits,
    /// Poked when this process wrote notifications it did not hand off, so they are claimed
    /// now rather than at the next poll.
    due: Notify,
    /// Whether this process hears, at once, of notifications other processes write for the
    /// claim (`wake_ups`): its loops then need not poll often for them.
    listening: AtomicBool,
    /// Poked when an attempt ends while rows wait in the lines: the loop holding the lines
    /// is not the only one whose attempts give room back.
    room: Notify,
    /// Where committed hand-offs go; `None` where nothing is handed (a `holdfast worker`).
    hand_offs: Option<mpsc::UnboundedSender<HandedOff>>,
    /// Changes to subscriptions this process made or learned of, for every delivery loop.
    changes: broadcast::Sender<SubscriptionChange>,
}

/// Changes a loop may miss between two looks at its lines before it loses track of them.
const CHANGES_KEPT: usize = 1024;

/// A change to a subscription that this process made or learned of. A handed-off row carries
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

/// The caps a process's deliveries keep to.
#[derive(Debug, Clone, Copy)]
pub struct LoadLimits {
    /// Attempts in flight in this process.
    pub concurrency: u32,
    /// Attempts in flight per platform.
    pub per_platform: u32,
    /// Attempts in flight per subscription.
    pub per_subscription: u32,
    /// How long a hand-off is leased for: a claim's lease plus the longest a handed row may
    /// wait in its line.
    pub lease: Duration,
}

/// Whose an attempt is: what the caps count by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub platform: PlatformId,
    pub webhook: WebhookId,
}

/// Rows a process's waiting lines may hold, per slot of its concurrency: 8,192 with the
/// defaults, about a kilobyte each (a row with its event and subscription). Past that, rows are
/// written for the claim.
const WAITING_PER_SLOT: usize = 64;

#[derive(Debug, Default)]
struct Load {
    /// Handed off (or about to be) and not started yet: in the delivery loops' lines, in all
    /// and per subscription.
    waiting: usize,
    waiting_for: HashMap<WebhookId, usize>,
    total: usize,
    platforms: HashMap<PlatformId, usize>,
    webhooks: HashMap<WebhookId, usize>,
    /// Notifications whose attempt has ended and whose outcome is not recorded yet: their rows
    /// are still leased, but they hold no connection, so this process's claims do not count
    /// them as in flight.
    unrecorded: HashSet<NotificationId>,
}

fn add_to<K: Hash + Eq + Clone>(counts: &mut HashMap<K, usize>, key: &K, count: usize) {
    let n = counts.entry(key.clone()).or_default();
    *n = n.saturating_add(count);
}

fn remove_from<K: Hash + Eq>(counts: &mut HashMap<K, usize>, key: &K, count: usize) {
    if let Some(n) = counts.get_mut(key) {
        *n = n.saturating_sub(count);
        if *n == 0 {
            counts.remove(key);
        }
    }
}

impl Load {
    fn add(&mut self, owner: &Owner, count: usize) {
        self.total = self.total.saturating_add(count);
        add_to(&mut self.platforms, &owner.platform, count);
        add_to(&mut self.webhooks, &owner.webhook, count);
    }

    fn remove(&mut self, owner: &Owner, count: usize) {
        self.total = self.total.saturating_sub(count);
        remove_from(&mut self.platforms, &owner.platform, count);
        remove_from(&mut self.webhooks, &owner.webhook, count);
    }

    fn of<K: Hash + Eq>(counts: &HashMap<K, usize>, key: &K) -> usize {
        counts.get(key).copied().unwrap_or(0)
    }
}

/// Notifications of one platform, committed and leased by this process, for its deliverers:
/// each with what its delivery needs, as the writing transaction saw it.
#[derive(Debug)]
pub struct HandedOff {
    pub rows: Vec<Claimed>,
}

impl Owner {
    /// Whose `notification` is.
    pub fn of(notification: &Claimed) -> Self {
        Self {
            platform: notification.platform_id.clone(),
            webhook: notification.webhook_id.clone(),
        }
    }
}

/// The receiving end of a process's hand-offs, read by its delivery loop.
pub type HandOffs = mpsc::UnboundedReceiver<HandedOff>;

impl DeliveryLoad {
    /// The load of a process that only claims.
    pub fn claiming(limits: LoadLimits) -> Arc<Self> {
        Arc::new(Self {
            load: Mutex::default(),
            limits,
            due: Notify::new(),
            listening: AtomicBool::new(false),
            room: Notify::new(),
            hand_offs: None,
            changes: broadcast::Sender::new(CHANGES_KEPT),
        })
    }

    /// The load of a process that also hands its own writes to its deliverers, with the
    /// receiver those deliverers read.
    pub fn handing_off(limits: LoadLimits) -> (Arc<Self>, HandOffs) {
        let (tx, rx) = mpsc::unbounded_channel();
        let load = Arc::new(Self {
            load: Mutex::default(),
            limits,
            due: Notify::new(),
            listening: AtomicBool::new(false),
            room: Notify::new(),
            hand_offs: Some(tx),
            changes: broadcast::Sender::new(CHANGES_KEPT),
        });
        (load, rx)
    }

    fn with<R>(&self, f: impl FnOnce(&mut Load) -> R) -> R {
        // The counts stay consistent whatever panicked while holding the lock: each change is
        // one step.
        f(&mut self.load.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn cap(limit: u32) -> usize {
        usize::try_from(limit.max(1)).unwrap_or(usize::MAX)
    }

    /// Room for more attempts in this process.
    pub fn free(&self) -> usize {
        let total = self.with(|load| load.total);
        Self::cap(self.limits.concurrency).saturating_sub(total)
    }

    /// Attempts in flight in this process.
    pub fn in_flight(&self) -> usize {
        self.with(|load| load.total)
    }

    /// Counts a claimed attempt (the claim already kept to the caps).
    pub fn claimed(&self, owner: &Owner) {
        self.with(|load| load.add(owner, 1));
    }

    /// Counts an attempt of `owner` as started when the process, its platform and its
    /// subscription are all under their caps; whether it did.
    pub fn try_start(&self, owner: &Owner) -> bool {
        let concurrency = Self::cap(self.limits.concurrency);
        let per_platform = Self::cap(self.limits.per_platform);
        let per_subscription = Self::cap(self.limits.per_subscription);
        self.with(|load| {
            let fits = load.total < concurrency
                && Load::of(&load.platforms, &owner.platform) < per_platform
                && Load::of(&load.webhooks, &owner.webhook) < per_subscription;
            if fits {
                load.add(owner, 1);
            }
            fits
        })
    }

    /// Rows to `webhooks` (one each), handed off, left the delivery loops' lines: started, or
    /// left to their lease.
    pub fn left_lines<'a>(&self, webhooks: impl IntoIterator<Item = &'a WebhookId>) {
        self.with(|load| {
            for webhook in webhooks {
                load.waiting = load.waiting.saturating_sub(1);
                remove_from(&mut load.waiting_for, webhook, 1);
            }
        });
    }

    /// Places reserved in the lines and not used: their rows were never handed off.
    fn gave_back(&self, count: usize) {
        self.with(|load| load.waiting = load.waiting.saturating_sub(count));
    }

    /// Rows handed off and not started, per subscription: committed and leased, but holding no
    /// connection, so the claims of every loop of this process leave them out of the attempts
    /// in flight. (Rows reserved but not yet committed are not counted: the claim cannot see
    /// their leases, and would take them off the leases of others.)
    pub fn waiting_counts(&self) -> Vec<(WebhookId, u32)> {
        self.with(|load| {
            load.waiting_for
                .iter()
                .map(|(webhook, n)| (webhook.clone(), u32::try_from(*n).unwrap_or(u32::MAX)))
                .collect()
        })
    }

    /// Rows handed off and not started yet.
    pub fn waiting(&self) -> usize {
        self.with(|load| load.waiting)
    }

    /// `count` attempts of `owner` have ended (or were never started).
    pub fn ended(&self, owner: &Owner, count: usize) {
        let waiting = self.with(|load| {
            load.remove(owner, count);
            load.waiting
        });
        if waiting > 0 {
            self.room.notify_one();
        }
    }

    /// Waits until an attempt ends while rows wait in the lines.
    pub async fn wait_room(&self) {
        self.room.notified().await;
    }

    /// The attempt of `notification` has ended; its outcome is on its way to being recorded.
    pub fn awaits_recording(&self, notification: NotificationId) {
        self.with(|load| load.unrecorded.insert(notification));
    }

    /// The outcomes of `notifications` were written (or failed to be: their leases then run
    /// out like a dead worker's, and count as in flight until then).
    pub fn recorded<'a>(&self, notifications: impl IntoIterator<Item = &'a NotificationId>) {
        self.with(|load| {
            for notification in notifications {
                load.unrecorded.remove(notification);
            }
        });
    }

    /// The notifications whose attempt ended and whose outcome is not recorded yet: leased, but
    /// not in flight, for the claim (`NotificationQueue::claim_notifications`).
    pub fn unrecorded(&self) -> Vec<NotificationId> {
        self.with(|load| load.unrecorded.iter().cloned().collect())
    }

    /// Notifications were written and left for the claim: claim now. (One poke is kept for a
    /// loop busy elsewhere, so it is never missed.)
    pub fn poke(&self) {
        self.due.notify_one();
    }

    /// Waits for a poke.
    pub async fn wait_due(&self) {
        self.due.notified().await;
    }

    /// Whether this process now hears of the notifications other processes write for the
    /// claim as they commit them (`wake_ups::WakeUps::listen`).
    pub fn listening(&self) -> bool {
        self.listening.load(Ordering::Relaxed)
    }

    pub(crate) fn set_listening(&self, listening: bool) {
        self.listening.store(listening, Ordering::Relaxed);
    }

    /// Tells every delivery loop of `change`, for the rows waiting in its lines.
    pub fn changed(&self, change: SubscriptionChange) {
        // No loop listening (none runs in this process): no line to tell.
        let _ = self.changes.send(change);
    }

    /// The changes told from now on, for one delivery loop.
    pub fn changes(&self) -> broadcast::Receiver<SubscriptionChange> {
        self.changes.subscribe()
    }

    /// Places in this process's waiting lines for the notifications to `webhooks` written now, one each, to be leased at insert and handed off once committed.
    /// The caps are kept when a row starts, not here: a row beyond them waits in its
    /// subscription's line, in order. `None` when this process hands nothing off or its lines
    /// are full (the rows are then written unleased, for the claim).
    pub fn reserve(self: &Arc<Self>, webhooks: &[&str]) -> Option<Reservation> {
        // A delivery loop that is gone takes nothing: its rows are written for the claim rather
        // than leased to no one.
        if self.hand_offs.as_ref()?.is_closed() {
            return None;
        }
        let room = Self::cap(self.limits.concurrency).saturating_mul(WAITING_PER_SLOT);
        let admitted: Vec<WebhookId> = self.with(|load| {
            let admitted: Vec<WebhookId> = webhooks
                .iter()
                .take(room.saturating_sub(load.waiting))
                .map(|webhook| WebhookId::from_trusted((*webhook).to_owned()))
                .collect();
            load.waiting = load.waiting.saturating_add(admitted.len());
            admitted
        });
        (!admitted.is_empty()).then(|| Reservation {
            load: self.clone(),
            admitted,
        })
    }
}

/// Places held in the waiting lines for notifications being written: handed off once
/// committed, or given back when dropped (a rollback, or a row the insert left for the claim).
#[derive(Debug)]
pub struct Reservation {
    load: Arc<DeliveryLoad>,
    /// One place per subscription admitted, not yet handed.
    admitted: Vec<WebhookId>,
}

impl Reservation {
    pub fn lease(&self) -> Duration {
        self.load.limits.lease
    }

    /// Whether a row to `webhook` may be leased at insert under this reservation.
    pub fn admits(&self, webhook: &str) -> bool {
        self.admitted.iter().any(|w| w.as_str() == webhook)
    }

    /// Hands `rows` (committed, leased at insert, each admitted) to this process's deliverers,
    /// and gives back every place not handed.
    pub fn hand(mut self, rows: Vec<Claimed>) {
        let rows: Vec<Claimed> = rows
            .into_iter()
            .filter(
                |row| match self.admitted.iter().position(|w| *w == row.webhook_id) {
                    Some(at) => {
                        self.admitted.swap_remove(at);
                        true
                    }
                    None => false,
                },
            )
            .collect();
        if rows.is_empty() {
            return;
        }
        let handed = HandedOff { rows };
        // Counted before they are sent: the loop may start one before `send` returns.
        self.load.with(|load| {
            for row in &handed.rows {
                add_to(&mut load.waiting_for, &row.webhook_id, 1);
            }
        });
        let unsent = match &self.load.hand_offs {
            Some(tx) => tx.send(handed).err().map(|unsent| unsent.0),
            None => Some(handed),
        };
        // A hand-off that could not be sent went to a stopped loop: its rows wait for a claim
        // when their lease ends, and their room comes back here.
        if let Some(unsent) = unsent {
            self.load.with(|load| {
                for row in &unsent.rows {
                    remove_from(&mut load.waiting_for, &row.webhook_id, 1);
                }
            });
            self.admitted
                .extend(unsent.rows.into_iter().map(|row| row.webhook_id));
        }
        // Dropped here: what was not handed is given back.
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.load.gave_back(self.admitted.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(concurrency: u32) -> LoadLimits {
        LoadLimits {
            concurrency,
            per_platform: 6,
            per_subscription: 4,
            lease: Duration::from_secs(30),
        }
    }

    fn platform(n: u8) -> PlatformId {
        PlatformId::from_trusted(format!("pfm_{n}"))
    }

    fn owner(p: u8, w: &str) -> Owner {
        Owner {
            platform: platform(p),
            webhook: WebhookId::from_trusted(w.to_owned()),
        }
    }

    fn rows(webhooks: &[&str]) -> Vec<Claimed> {
        webhooks
            .iter()
            .enumerate()
            .map(|(i, w)| Claimed {
                id: NotificationId::from_trusted(format!("ntf_{i}")),
                platform_id: platform(1),
                webhook_id: WebhookId::from_trusted((*w).to_owned()),
                event_type: "merchant.created".into(),
                event_data: "{}".into(),
                created_on: time::OffsetDateTime::UNIX_EPOCH,
                subscription: None,
            })
            .collect()
    }

    fn starts(load: &DeliveryLoad, p: u8, webhooks: &[&str]) -> usize {
        webhooks
            .iter()
            .filter(|w| load.try_start(&owner(p, w)))
            .count()
    }

    #[test]
    fn an_attempt_starts_only_under_the_subscription_platform_and_process_caps() {
        let load = DeliveryLoad::claiming(limits(10));
        assert_eq!(starts(&load, 1, &["wh_a"; 5]), 4, "the subscription's cap");
        assert_eq!(starts(&load, 1, &["wh_b"; 3]), 2, "the platform's cap");
        assert_eq!(
            starts(&load, 2, &["wh_c", "wh_c", "wh_d", "wh_d", "wh_d"]),
            4,
            "another platform has room until the process is full"
        );
        assert_eq!(load.free(), 0);
        assert!(!load.try_start(&owner(3, "wh_e")), "the process is full");
        load.ended(&owner(2, "wh_c"), 1);
        assert!(
            load.try_start(&owner(3, "wh_e")),
            "an ended attempt's place"
        );
    }

    #[test]
    fn claims_count_against_started_attempts() {
        let load = DeliveryLoad::claiming(limits(10));
        for w in ["wh_a", "wh_a", "wh_b", "wh_b", "wh_c", "wh_c"] {
            load.claimed(&owner(1, w));
        }
        assert!(!load.try_start(&owner(1, "wh_d")), "the platform's cap");
        assert_eq!(load.free(), 4);
    }

    #[test]
    fn a_hand_off_waits_beyond_the_caps_and_holds_its_place_until_it_leaves_the_lines() {
        let (load, mut rx) = DeliveryLoad::handing_off(limits(10));
        let reservation = load
            .reserve(&["wh_a", "wh_b", "wh_c"])
            .expect("room in the lines");
        assert!(reservation.admits("wh_a") && reservation.admits("wh_c"));
        assert_eq!(load.waiting(), 3);
        assert!(
            load.waiting_counts().is_empty(),
            "not committed yet: the claim cannot see their leases"
        );
        assert_eq!(load.in_flight(), 0, "nothing started yet");
        reservation.hand(rows(&["wh_b", "wh_x"]));
        assert_eq!(
            load.waiting(),
            1,
            "one handed; one not admitted; two given back"
        );
        let handed = rx.try_recv().expect("handed off");
        let ids: Vec<_> = handed
            .rows
            .iter()
            .map(|row| row.webhook_id.as_str())
            .collect();
        assert_eq!(ids, ["wh_b"]);
        assert_eq!(
            load.waiting_counts(),
            [(handed.rows[0].webhook_id.clone(), 1)]
        );
        load.left_lines([&handed.rows[0].webhook_id]);
        assert_eq!(load.waiting(), 0);
        assert!(load.waiting_counts().is_empty());
    }

    #[tokio::test]
    async fn an_attempt_that_ends_while_rows_wait_wakes_the_lines() {
        let (load, _rx) = DeliveryLoad::handing_off(limits(10));
        assert!(load.try_start(&owner(1, "wh_a")));
        load.ended(&owner(1, "wh_a"), 1);
        let idle = tokio::time::timeout(Duration::from_millis(20), load.wait_room()).await;
        assert!(idle.is_err(), "nothing waits: nobody is woken");
        let _held = load.reserve(&["wh_a"]).expect("room in the lines");
        assert!(load.try_start(&owner(1, "wh_b")));
        load.ended(&owner(1, "wh_b"), 1);
        tokio::time::timeout(Duration::from_secs(5), load.wait_room())
            .await
            .expect("woken for the row that waits");
    }

    #[test]
    fn full_lines_leave_the_rows_for_the_claim() {
        let (load, _rx) = DeliveryLoad::handing_off(limits(1));
        let held = load.reserve(&["wh_a"; WAITING_PER_SLOT]).expect("room");
        assert!(load.reserve(&["wh_b"]).is_none(), "the lines are full");
        drop(held);
        assert!(
            load.reserve(&["wh_b"]).is_some(),
            "a dropped reservation's room"
        );
    }

    #[test]
    fn an_ended_attempt_is_unrecorded_until_its_outcome_is_written() {
        let load = DeliveryLoad::claiming(limits(10));
        let ids: Vec<_> = rows(&["wh_a", "wh_a", "wh_b"])
            .into_iter()
            .map(|row| row.id)
            .collect();
        for id in &ids {
            load.awaits_recording(id.clone());
        }
        load.recorded(&ids[..2]);
        assert_eq!(load.unrecorded(), [ids[2].clone()]);
        load.recorded(&ids);
        assert!(load.unrecorded().is_empty());
    }

    #[test]
    fn a_claiming_process_hands_nothing_off() {
        let load = DeliveryLoad::claiming(limits(10));
        assert!(load.reserve(&["wh_a"]).is_none());
    }

    #[test]
    fn a_hand_off_to_a_loop_stopped_since_its_reservation_gives_its_place_back() {
        let (load, rx) = DeliveryLoad::handing_off(limits(10));
        let reservation = load.reserve(&["wh_a", "wh_b"]).expect("room");
        drop(rx);
        reservation.hand(rows(&["wh_a", "wh_b"]));
        assert_eq!(load.waiting(), 0);
    }

    #[test]
    fn a_stopped_loop_is_reserved_nothing() {
        let (load, rx) = DeliveryLoad::handing_off(limits(10));
        drop(rx);
        assert!(load.reserve(&["wh_a"]).is_none(), "rows go to the claim");
        assert_eq!(load.waiting(), 0);
    }
}
