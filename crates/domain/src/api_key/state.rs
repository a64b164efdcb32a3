//! The key lifecycle of spec 3.1. Mode is not part of the state: nothing can change it.

/// A key that exists is active or inactive; a deleted key no longer exists at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStatus {
    /// The key authenticates requests.
    Active,
    /// The key is kept but refused until it is activated again.
    Inactive,
}

/// What an operator can do to an existing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEvent {
    /// Turn the key on so it authenticates requests again.
    Activate,
    /// Turn the key off without losing it; it can be activated later.
    Deactivate,
    /// Remove the key for good.
    Delete,
}

/// The state a key moves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyTransition {
    /// The key still exists, now with this status.
    To(KeyStatus),
    /// Permanent and unrecoverable: the key row is removed.
    Deleted,
}

/// Every spec 3.1 transition applies "any time", so no event on an existing key is refused; the
/// type exists so that a refused transition would have to be stated here, and a deleted key (which
/// has no status) cannot be handed to `apply` at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("transition refused")]
pub struct TransitionRefused;

impl KeyStatus {
    /// Toggling to the state a key already has is accepted and changes nothing, so operators and
    /// scripts can repeat a toggle safely.
    pub fn apply(self, event: KeyEvent) -> Result<KeyTransition, TransitionRefused> {
        Ok(match event {
            KeyEvent::Activate => KeyTransition::To(KeyStatus::Active),
            KeyEvent::Deactivate => KeyTransition::To(KeyStatus::Inactive),
            KeyEvent::Delete => KeyTransition::Deleted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_of_spec_3_1() {
        use KeyEvent::{Activate, Deactivate, Delete};
        use KeyStatus::{Active, Inactive};
        let rows = [
            (Active, Deactivate, KeyTransition::To(Inactive)),
            (Inactive, Activate, KeyTransition::To(Active)),
            (Active, Delete, KeyTransition::Deleted),
            (Inactive, Delete, KeyTransition::Deleted),
            // Repeated toggles are idempotent.
            (Active, Activate, KeyTransition::To(Active)),
            (Inactive, Deactivate, KeyTransition::To(Inactive)),
        ];
        for (from, event, to) in rows {
            assert_eq!(from.apply(event), Ok(to), "{from:?} --{event:?}-->");
        }
    }
}
