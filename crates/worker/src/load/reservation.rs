//! Places reserved in a process's waiting lines while the notifications they are for are
//! being written.

use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ids::WebhookId;
use holdfast_domain::ports::{Claimed, HandOff};

use super::{DeliveryLoad, HandedOff, add_to, remove_from};

/// Places held in the waiting lines for notifications being written: handed off once
/// committed, or given back when dropped (a rollback, or a row the insert left for the claim).
#[derive(Debug)]
pub struct HeldPlaces {
    pub(super) load: Arc<DeliveryLoad>,
    /// One place per subscription admitted, not yet handed.
    pub(super) admitted: Vec<WebhookId>,
}

impl HeldPlaces {
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

impl HandOff for HeldPlaces {
    fn lease(&self) -> Duration {
        HeldPlaces::lease(self)
    }

    fn admits(&self, webhook: &str) -> bool {
        HeldPlaces::admits(self, webhook)
    }

    fn hand(self: Box<Self>, rows: Vec<Claimed>) {
        HeldPlaces::hand(*self, rows);
    }
}

impl Drop for HeldPlaces {
    fn drop(&mut self) {
        self.load.gave_back(self.admitted.len());
    }
}
