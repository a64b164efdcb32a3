//! A loan's states and the moves between them (docs/loans.md).

crate::words! {
    /// Where a loan is.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum LoanState {
        /// Offered to the merchant, which has not accepted it; it expires at its offer's end.
        Offered,
        /// Accepted: its advance is about to be paid out. It can still be canceled.
        Accepted,
        /// The advance was paid out; settlements withhold the rate until it is repaid.
        PaidOut,
        /// Paid out, and a 30-day minimum was not met; back to `paid_out` once it is.
        PastDue,
        /// Nothing is outstanding.
        Repaid,
        /// Not accepted before its offer ended.
        Expired,
        /// Canceled before it was paid out.
        Canceled,
        /// Given up on by the operator: what is outstanding is written off.
        ChargedOff,
    }
}

/// A move of a loan from one state to another, by the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The state it leaves.
    pub from: LoanState,
    /// The state it takes.
    pub to: LoanState,
}

impl LoanState {
    /// Whether nothing can follow it.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            Self::Repaid | Self::Expired | Self::Canceled | Self::ChargedOff
        )
    }

    /// Whether its advance was paid out and is being repaid.
    pub fn is_repaying(self) -> bool {
        matches!(self, Self::PaidOut | Self::PastDue)
    }

    /// The move to `to`, if the table allows it from here:
    ///
    /// | from | to |
    /// |---|---|
    /// | `offered` | `accepted`, `expired`, `canceled` |
    /// | `accepted` | `paid_out`, `canceled` |
    /// | `paid_out` | `past_due`, `repaid`, `charged_off` |
    /// | `past_due` | `paid_out`, `repaid`, `charged_off` |
    pub fn to(self, to: Self) -> Option<Transition> {
        use LoanState::{
            Accepted, Canceled, ChargedOff, Expired, Offered, PaidOut, PastDue, Repaid,
        };
        let allowed = matches!(
            (self, to),
            (Offered, Accepted | Expired | Canceled)
                | (Accepted, PaidOut | Canceled)
                | (PaidOut, PastDue | Repaid | ChargedOff)
                | (PastDue, PaidOut | Repaid | ChargedOff)
        );
        allowed.then_some(Transition { from: self, to })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table, every pair: only its rows are moves; a final state has none.
    #[test]
    fn only_the_tables_moves_are_allowed() {
        use LoanState::{
            Accepted, Canceled, ChargedOff, Expired, Offered, PaidOut, PastDue, Repaid,
        };
        let allowed = [
            (Offered, Accepted),
            (Offered, Expired),
            (Offered, Canceled),
            (Accepted, PaidOut),
            (Accepted, Canceled),
            (PaidOut, PastDue),
            (PaidOut, Repaid),
            (PaidOut, ChargedOff),
            (PastDue, PaidOut),
            (PastDue, Repaid),
            (PastDue, ChargedOff),
        ];
        for &from in LoanState::ALL {
            for &to in LoanState::ALL {
                assert_eq!(
                    from.to(to).is_some(),
                    allowed.contains(&(from, to)),
                    "{from} -> {to}"
                );
            }
            assert_eq!(
                from.is_final(),
                LoanState::ALL.iter().all(|&to| from.to(to).is_none()),
                "{from}: final exactly when nothing follows"
            );
        }
    }
}
