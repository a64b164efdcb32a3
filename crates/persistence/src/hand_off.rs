//! A process's delivery load, and the notifications it hands from its own writes straight to its
//! own deliverers.
//!
//! A `serve` that delivers webhooks itself leases the notifications it writes at insert, and
//! once they are committed passes their ids to its delivery loop: no claim round trip, no poll
//! delay. Should the process die first, the lease runs out and any worker claims them as it
//! claims a dead worker's, so nothing is lost (only late). A hand-off keeps to the claim's caps:
//! it is taken only while this process has room under its concurrency and under the
//! platform's cap, counting attempts of both paths, so one platform's slow endpoints still
//! leave another platform its slots (docs/design/webhook-fairness.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, mpsc};

use holdfast_domain::ids::{NotificationId, PlatformId};

/// Attempts in flight in this process, per platform, with the caps they keep to.
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
    /// How long a hand-off is leased for: as long as a claim's lease.
    pub lease: Duration,
}

#[derive(Debug, Default)]
struct Load {
    total: usize,
    platforms: HashMap<PlatformId, usize>,
}

impl Load {
    fn add(&mut self, platform: &PlatformId, count: usize) {
        self.total += count;
        *self.platforms.entry(platform.clone()).or_default() += count;
    }

    fn remove(&mut self, platform: &PlatformId, count: usize) {
        self.total = self.total.saturating_sub(count);
        if let Some(n) = self.platforms.get_mut(platform) {
            *n = n.saturating_sub(count);
            if *n == 0 {
                self.platforms.remove(platform);
            }
        }
    }
}

/// Notifications of one platform, committed and leased by this process, for its deliverers.
#[derive(Debug)]
pub struct HandedOff {
    pub platform: PlatformId,
    pub ids: Vec<NotificationId>,
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

    /// Counts a claimed attempt of `platform` (the claim already kept to the caps).
    pub fn claimed(&self, platform: &PlatformId) {
        self.with(|load| load.add(platform, 1));
    }

    /// An attempt of `platform` has ended and its outcome is recorded (or given up on).
    pub fn ended(&self, platform: &PlatformId, count: usize) {
        self.with(|load| load.remove(platform, count));
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

    /// Room for up to `rows` notifications of `platform` written now, to be leased at insert
    /// and handed off once committed; `None` when this process hands nothing off or is at a
    /// cap (the rows are then written unleased, for the claim).
    pub fn reserve(self: &Arc<Self>, platform: &PlatformId, rows: usize) -> Option<Reservation> {
        self.hand_offs.as_ref()?;
        if rows == 0 {
            return None;
        }
        let admitted = self.with(|load| {
            let of_platform = load.platforms.get(platform).copied().unwrap_or(0);
            let fits = load.total + rows <= Self::cap(self.limits.concurrency)
                && of_platform + rows <= Self::cap(self.limits.per_platform);
            if fits {
                load.add(platform, rows);
            }
            fits
        });
        admitted.then(|| Reservation {
            load: self.clone(),
            platform: platform.clone(),
            rows,
        })
    }
}

/// Room held for notifications being written: handed off with their ids once committed, or
/// given back when dropped (a rollback, or fewer rows than reserved).
#[derive(Debug)]
pub struct Reservation {
    load: Arc<DeliveryLoad>,
    platform: PlatformId,
    rows: usize,
}

impl Reservation {
    pub fn lease(&self) -> Duration {
        self.load.limits.lease
    }

    /// Hands `ids` (committed, leased at insert) to this process's deliverers, and gives back
    /// the room of any row reserved but not written.
    pub fn hand(mut self, ids: Vec<NotificationId>) {
        let ids: Vec<_> = ids.into_iter().take(self.rows).collect();
        if ids.is_empty() {
            return;
        }
        let handed = ids.len();
        let sent = self.load.hand_offs.as_ref().is_some_and(|tx| {
            tx.send(HandedOff {
                platform: self.platform.clone(),
                ids,
            })
            .is_ok()
        });
        if sent {
            self.rows -= handed;
        }
        // Dropped here: what was not handed is given back. (A hand-off that could not be sent
        // went to a stopped loop: its rows wait for a claim when their lease ends.)
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.rows > 0 {
            self.load.ended(&self.platform, self.rows);
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
            lease: Duration::from_secs(30),
        }
    }

    fn platform(n: u8) -> PlatformId {
        PlatformId::from_trusted(format!("pfm_{n}"))
    }

    fn ids(n: usize) -> Vec<NotificationId> {
        (0..n)
            .map(|i| NotificationId::from_trusted(format!("ntf_{i}")))
            .collect()
    }

    #[test]
    fn a_hand_off_keeps_to_the_platform_cap_and_the_concurrency() {
        let (load, _rx) = DeliveryLoad::handing_off(limits());
        let a = load.reserve(&platform(1), 6).expect("within both caps");
        assert!(
            load.reserve(&platform(1), 1).is_none(),
            "platform at its cap"
        );
        let b = load
            .reserve(&platform(2), 4)
            .expect("another platform has room");
        assert!(
            load.reserve(&platform(3), 1).is_none(),
            "process at its cap"
        );
        assert_eq!(load.free(), 0);
        drop((a, b));
        assert_eq!(load.free(), 10, "a dropped reservation gives its room back");
    }

    #[test]
    fn handing_fewer_rows_than_reserved_gives_back_the_rest_until_they_end() {
        let (load, mut rx) = DeliveryLoad::handing_off(limits());
        load.reserve(&platform(1), 5).expect("room").hand(ids(2));
        assert_eq!(load.in_flight(), 2, "two handed, three given back");
        let handed = rx.try_recv().expect("handed off");
        assert_eq!(handed.ids.len(), 2);
        load.ended(&handed.platform, 2);
        assert_eq!(load.in_flight(), 0);
    }

    #[test]
    fn claims_count_against_hand_offs() {
        let (load, _rx) = DeliveryLoad::handing_off(limits());
        for _ in 0..6 {
            load.claimed(&platform(1));
        }
        assert!(load.reserve(&platform(1), 1).is_none());
        assert_eq!(load.free(), 4);
    }

    #[test]
    fn a_claiming_process_hands_nothing_off() {
        let load = DeliveryLoad::claiming(limits());
        assert!(load.reserve(&platform(1), 1).is_none());
    }

    #[test]
    fn a_hand_off_to_a_stopped_loop_gives_its_room_back() {
        let (load, rx) = DeliveryLoad::handing_off(limits());
        drop(rx);
        load.reserve(&platform(1), 3).expect("room").hand(ids(3));
        assert_eq!(load.in_flight(), 0);
    }
}
