//! A process's delivery load, and the notifications it hands from its own writes straight to its
//! own deliverers.
//!
//! A `serve` that delivers webhooks itself leases the notifications it writes at insert, and
//! once they are committed passes them, with the event and the subscription it wrote them from,
//! to its delivery loop: no claim round trip, no poll delay, nothing read back. Should the process die first, the lease runs out and any worker claims them as it
//! claims a dead worker's, so nothing is lost (only late). A hand-off keeps to the claim's caps:
//! it is taken only while this process has room under its concurrency, under the platform's cap
//! and under the subscription's, counting attempts of both paths, so one platform's slow
//! endpoints still leave another platform its slots and one endpoint never gets more from this
//! process than its cap (docs/design/webhook-fairness.md). The caps of hand-offs are this
//! process's: with N replicas writing for one subscription, it may get N times its cap, and a
//! row left for the claim may wait while hand-offs keep its subscription at the cap
//! (docs/decisions.md, "Hand-offs and the caps").

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

use holdfast_domain::ids::{PlatformId, WebhookId};
use holdfast_domain::ports::Claimed;

/// Attempts in flight in this process, per platform and per subscription, with the caps they
/// keep to.
#[derive(Debug)]
pub struct DeliveryLoad {
    load: Mutex<Load>,
    limits: LoadLimits,
    /// Poked when this process wrote notifications it did not hand off, so they are claimed
    /// now rather than at the next poll.
    due: Notify,
    /// Where committed hand-offs go; `None` where nothing is handed (a `holdfast worker`).
    hand_offs: Option<mpsc::UnboundedSender<HandedOff>>,
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
    /// How long a hand-off is leased for: as long as a claim's lease.
    pub lease: Duration,
}

/// Whose an attempt is: what the caps count by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub platform: PlatformId,
    pub webhook: WebhookId,
}

#[derive(Debug, Default)]
struct Load {
    total: usize,
    platforms: HashMap<PlatformId, usize>,
    webhooks: HashMap<WebhookId, usize>,
}

fn add_to<K: Hash + Eq + Clone>(counts: &mut HashMap<K, usize>, key: &K, count: usize) {
    *counts.entry(key.clone()).or_default() += count;
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
        self.total += count;
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
            hand_offs: None,
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
            hand_offs: Some(tx),
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

    /// `count` attempts of `owner` have ended (or were never started).
    pub fn ended(&self, owner: &Owner, count: usize) {
        self.with(|load| load.remove(owner, count));
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

    /// Room for the notifications of `platform` to `webhooks` written now, one each, to be
    /// leased at insert and handed off once committed: each subscription is admitted, in order,
    /// while it, its platform and the process are under their caps. `None` when this process
    /// hands nothing off or admits none of them (the rows are then written unleased, for the
    /// claim).
    pub fn reserve(
        self: &Arc<Self>,
        platform: &PlatformId,
        webhooks: &[&str],
    ) -> Option<Reservation> {
        self.hand_offs.as_ref()?;
        let concurrency = Self::cap(self.limits.concurrency);
        let per_platform = Self::cap(self.limits.per_platform);
        let per_subscription = Self::cap(self.limits.per_subscription);
        let admitted: Vec<WebhookId> = self.with(|load| {
            let mut admitted = Vec::new();
            for webhook in webhooks {
                let owner = Owner {
                    platform: platform.clone(),
                    webhook: WebhookId::from_trusted((*webhook).to_owned()),
                };
                let fits = load.total < concurrency
                    && Load::of(&load.platforms, platform) < per_platform
                    && Load::of(&load.webhooks, &owner.webhook) < per_subscription;
                if !fits {
                    continue;
                }
                load.add(&owner, 1);
                admitted.push(owner.webhook);
            }
            admitted
        });
        (!admitted.is_empty()).then(|| Reservation {
            load: self.clone(),
            platform: platform.clone(),
            admitted,
        })
    }
}

/// Room held for notifications being written: handed off with their ids once committed, or
/// given back when dropped (a rollback, or a row the insert left for the claim).
#[derive(Debug)]
pub struct Reservation {
    load: Arc<DeliveryLoad>,
    platform: PlatformId,
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
    /// and gives back the room of every place not handed.
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
        let unsent = match &self.load.hand_offs {
            Some(tx) => tx.send(handed).err().map(|unsent| unsent.0),
            None => Some(handed),
        };
        // A hand-off that could not be sent went to a stopped loop: its rows wait for a claim
        // when their lease ends, and their room comes back here.
        if let Some(unsent) = unsent {
            self.admitted
                .extend(unsent.rows.into_iter().map(|row| row.webhook_id));
        }
        // Dropped here: what was not handed is given back.
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        for webhook in self.admitted.drain(..) {
            self.load.ended(
                &Owner {
                    platform: self.platform.clone(),
                    webhook,
                },
                1,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> LoadLimits {
        LoadLimits {
            concurrency: 10,
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
                id: holdfast_domain::ids::NotificationId::from_trusted(format!("ntf_{i}")),
                platform_id: platform(1),
                webhook_id: WebhookId::from_trusted((*w).to_owned()),
                event_type: "merchant.created".into(),
                event_data: "{}".into(),
                created_on: time::OffsetDateTime::UNIX_EPOCH,
                subscription: None,
            })
            .collect()
    }

    fn reserve_each(load: &Arc<DeliveryLoad>, p: u8, webhooks: &[&str]) -> Vec<Reservation> {
        webhooks
            .iter()
            .filter_map(|w| load.reserve(&platform(p), &[w]))
            .collect()
    }

    #[test]
    fn a_hand_off_keeps_to_the_subscription_platform_and_process_caps() {
        let (load, _rx) = DeliveryLoad::handing_off(limits());
        let a = reserve_each(&load, 1, &["wh_a"; 5]);
        assert_eq!(a.len(), 4, "one subscription stops at its cap");
        let b = reserve_each(&load, 1, &["wh_b"; 3]);
        assert_eq!(b.len(), 2, "the platform stops at its cap");
        let c = reserve_each(&load, 2, &["wh_c", "wh_c", "wh_d", "wh_d", "wh_d"]);
        assert_eq!(
            c.len(),
            4,
            "another platform has room until the process is full"
        );
        assert_eq!(load.free(), 0);
        assert!(
            load.reserve(&platform(3), &["wh_e"]).is_none(),
            "process at its cap"
        );
        drop((a, b, c));
        assert_eq!(load.free(), 10, "dropped reservations give their room back");
    }

    #[test]
    fn one_reservation_admits_each_subscription_that_fits() {
        let (load, _rx) = DeliveryLoad::handing_off(limits());
        for _ in 0..4 {
            load.claimed(&owner(1, "wh_a"));
        }
        let reservation = load
            .reserve(&platform(1), &["wh_a", "wh_b"])
            .expect("wh_b fits");
        assert!(!reservation.admits("wh_a"), "wh_a is at its cap");
        assert!(reservation.admits("wh_b"));
        assert_eq!(load.in_flight(), 5, "wh_b's place is held");
        drop(reservation);
        assert_eq!(
            load.in_flight(),
            4,
            "a dropped reservation gives its room back"
        );
    }

    #[test]
    fn handing_fewer_rows_than_admitted_gives_back_the_rest_until_they_end() {
        let (load, mut rx) = DeliveryLoad::handing_off(limits());
        load.reserve(&platform(1), &["wh_a", "wh_b", "wh_c"])
            .expect("room")
            .hand(rows(&["wh_b", "wh_x"]));
        assert_eq!(
            load.in_flight(),
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
        load.ended(&Owner::of(&handed.rows[0]), 1);
        assert_eq!(load.in_flight(), 0);
    }

    #[test]
    fn claims_count_against_hand_offs() {
        let (load, _rx) = DeliveryLoad::handing_off(limits());
        for w in ["wh_a", "wh_a", "wh_b", "wh_b", "wh_c", "wh_c"] {
            load.claimed(&owner(1, w));
        }
        assert!(load.reserve(&platform(1), &["wh_d"]).is_none());
        assert_eq!(load.free(), 4);
    }

    #[test]
    fn a_claiming_process_hands_nothing_off() {
        let load = DeliveryLoad::claiming(limits());
        assert!(load.reserve(&platform(1), &["wh_a"]).is_none());
    }

    #[test]
    fn a_hand_off_to_a_stopped_loop_gives_its_room_back() {
        let (load, rx) = DeliveryLoad::handing_off(limits());
        drop(rx);
        load.reserve(&platform(1), &["wh_a", "wh_b"])
            .expect("room")
            .hand(rows(&["wh_a", "wh_b"]));
        assert_eq!(load.in_flight(), 0);
    }
}
