//! A process's delivery load, and the notifications it hands from its own writes straight to its
//! own deliverers.
//!
//! A `serve` that delivers webhooks itself leases the notifications it writes at insert, and
//! once they are committed its store passes them (`DeliveryHints`, the domain's port), with
//! the event and the subscription it wrote them from, to its delivery loop: no claim round
//! trip, no poll delay, nothing read back. Should the process die first, the lease runs out and
//! any worker claims them as it claims a dead worker's, so nothing is lost (only late). The loop
//! keeps each handed row in its subscription's waiting line until the process, the platform and
//! the subscription are all under their caps (`try_start`, counting the attempts of both
//! paths), so one platform's slow endpoints still leave another platform its slots, one
//! endpoint never gets more from this process than its cap, and a burst beyond the cap waits in
//! order instead of being overtaken (docs/design/webhook-fairness.md). The caps of hand-offs are
//! this process's: with N replicas writing for one subscription, it may get N times its cap
//! (docs/decisions.md, "Hand-offs and the caps").

use std::collections::{HashMap, HashSet};
use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{Notify, broadcast, mpsc};

pub use reservation::HeldPlaces;

mod reservation;

use holdfast_domain::ids::{NotificationId, PlatformId, WebhookId};
use holdfast_domain::ports::{Claimed, DeliveryHints, HandOff, SubscriptionChange};

/// Attempts in flight in this process, per platform and per subscription, with the caps they
/// keep to.
#[derive(Debug)]
pub struct DeliveryLoad {
    /// Itself, for the reservations it hands out (each holds the load it gives its room back to).
    me: Weak<DeliveryLoad>,
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
pub struct AttemptOwner {
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
    fn add(&mut self, owner: &AttemptOwner, count: usize) {
        self.total = self.total.saturating_add(count);
        add_to(&mut self.platforms, &owner.platform, count);
        add_to(&mut self.webhooks, &owner.webhook, count);
    }

    fn remove(&mut self, owner: &AttemptOwner, count: usize) {
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

impl AttemptOwner {
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
        Self::new(limits, None)
    }

    /// The load of a process that also hands its own writes to its deliverers, with the
    /// receiver those deliverers read.
    pub fn handing_off(limits: LoadLimits) -> (Arc<Self>, HandOffs) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self::new(limits, Some(tx)), rx)
    }

    fn new(limits: LoadLimits, hand_offs: Option<mpsc::UnboundedSender<HandedOff>>) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            me: me.clone(),
            load: Mutex::default(),
            limits,
            due: Notify::new(),
            listening: AtomicBool::new(false),
            room: Notify::new(),
            hand_offs,
            changes: broadcast::Sender::new(CHANGES_KEPT),
        })
    }

    /// What this process's stores tell its delivery loops as they write.
    pub fn hints(self: &Arc<Self>) -> Arc<dyn DeliveryHints> {
        self.clone()
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
    pub fn claimed(&self, owner: &AttemptOwner) {
        self.with(|load| load.add(owner, 1));
    }

    /// Counts an attempt of `owner` as started when the process, its platform and its
    /// subscription are all under their caps; whether it did.
    pub fn try_start(&self, owner: &AttemptOwner) -> bool {
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
    pub fn ended(&self, owner: &AttemptOwner, count: usize) {
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
    pub fn reserve(&self, webhooks: &[&str]) -> Option<HeldPlaces> {
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
        let load = self.me.upgrade()?;
        (!admitted.is_empty()).then(|| HeldPlaces { load, admitted })
    }
}

impl DeliveryHints for DeliveryLoad {
    fn reserve(&self, webhooks: &[&str]) -> Option<Box<dyn HandOff>> {
        DeliveryLoad::reserve(self, webhooks).map(|r| Box::new(r) as Box<dyn HandOff>)
    }

    fn due(&self) {
        self.poke();
    }

    fn changed(&self, change: SubscriptionChange) {
        DeliveryLoad::changed(self, change);
    }

    fn listening(&self, listening: bool) {
        self.listening.store(listening, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests;
