//! A payout's states and the moves between them.

crate::words! {
    /// Where a payout is.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum PayoutState {
        /// Made: its money is in transit, not yet handed to the bank. It can still be canceled.
        Pending,
        /// Handed to the bank, which has not said how it ended.
        InTransit,
        /// The bank paid it into the merchant's account. An ACH credit can still come back
        /// (a return, days later): then it fails.
        Paid,
        /// The bank refused or returned it; its money is available again.
        Failed,
        /// Canceled while pending; its money is available again.
        Canceled,
    }
}

/// A move of a payout from one state to another, by the module's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The state it leaves.
    pub from: PayoutState,
    /// The state it takes.
    pub to: PayoutState,
}

impl PayoutState {
    /// Whether nothing can follow it.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Failed | Self::Canceled)
    }

    /// The move to `to`, if the table allows it from here.
    pub fn to(self, to: Self) -> Option<Transition> {
        use PayoutState::{Canceled, Failed, InTransit, Paid, Pending};
        let allowed = matches!(
            (self, to),
            (Pending, InTransit | Failed | Canceled) | (InTransit, Paid | Failed) | (Paid, Failed)
        );
        allowed.then_some(Transition { from: self, to })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module's table, every pair: only its rows are moves.
    #[test]
    fn only_the_tables_moves_are_allowed() {
        use PayoutState::{Canceled, Failed, InTransit, Paid, Pending};
        let allowed = [
            (Pending, InTransit),
            (Pending, Failed),
            (Pending, Canceled),
            (InTransit, Paid),
            (InTransit, Failed),
            (Paid, Failed),
        ];
        for &from in PayoutState::ALL {
            for &to in PayoutState::ALL {
                assert_eq!(
                    from.to(to).is_some(),
                    allowed.contains(&(from, to)),
                    "{from} -> {to}"
                );
            }
            assert_eq!(
                from.is_final(),
                PayoutState::ALL.iter().all(|&to| from.to(to).is_none()),
                "{from}: final exactly when nothing follows"
            );
        }
    }
}
