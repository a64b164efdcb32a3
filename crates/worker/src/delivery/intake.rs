//! What reaches a delivery loop from the rest of its process (hand-offs, subscription
//! changes), and what the loop holds that must be given back however a run ends.

use std::sync::Arc;

use holdfast_domain::ports::SubscriptionChange;
use tokio::sync::broadcast::{self, error::TryRecvError};

use crate::lines::Lines;
use crate::load::{DeliveryLoad, HandOffs, HandedOff};

/// Where a delivery loop keeps its hand-offs between runs (`Deliverer::run`).
#[derive(Debug, Clone, Default)]
pub struct HandOffSlot(Arc<std::sync::Mutex<Option<HandOffs>>>);

impl HandOffSlot {
    pub fn new(hand_offs: Option<HandOffs>) -> Self {
        Self(Arc::new(std::sync::Mutex::new(hand_offs)))
    }

    pub(super) fn take(&self) -> Option<HandOffs> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    pub(super) fn put(&self, hand_offs: Option<HandOffs>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = hand_offs;
    }
}

/// A run's lines, left to their lease if the run ends without starting them (a panic): their
/// room in the process's load comes back.
pub(super) struct HeldLines {
    pub(super) lines: Lines,
    pub(super) load: Arc<DeliveryLoad>,
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
pub(super) struct Intake {
    pub(super) hand_offs: Option<HandOffs>,
    /// Where the hand-offs go back when the run ends, however it ends.
    pub(super) slot: HandOffSlot,
    pub(super) changes: broadcast::Receiver<SubscriptionChange>,
}

impl Intake {
    /// Brings what waits in the lines up to date with the subscription changes told since the
    /// last look. The changes are taken first, then every row handed off so far: a row handed
    /// before a change was told is then in its line when the change is applied. Should the
    /// loop have missed changes, it cannot tell which rows they were about: every waiting row
    /// is left to its lease, and claimed after it with its subscription as it is then.
    pub(super) fn bring_up_to_date(&mut self, lines: &mut Lines, load: &DeliveryLoad) {
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
pub(super) async fn next_hand_off(hand_offs: &mut Option<HandOffs>) -> Option<HandedOff> {
    match hand_offs {
        Some(receiver) => receiver.recv().await,
        None => std::future::pending().await,
    }
}
