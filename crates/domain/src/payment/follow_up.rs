//! What a follow-up does to its original: the claim it takes before the processor is called,
//! the transaction it records, and what becomes of the original once it is known.

use super::lifecycle::{FollowUp, TxnState, TxnType};

/// A claim on an original transaction, taken before the processor is called so that two
/// follow-ups can never both proceed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// An authorized auth is being captured or voided: only one claim can succeed.
    CloseAuth,
    /// A refund of `amount`: succeeds only while the refunds stay within the settled amount.
    Refund {
        /// The minor units to refund, counted against the settled amount while the claim holds.
        amount: i64,
    },
}

/// What becomes of the original when a follow-up completes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginalOutcome {
    /// The capture or void went through: the auth moves to this state.
    Closed(TxnState),
    /// The capture or void failed: the auth is authorized again.
    Reopened,
    /// The refund went through: the reserved amount stays counted.
    RefundKept,
    /// The refund failed: the reserved amount is given back.
    RefundReleased {
        /// The minor units the failed refund had reserved, now refundable again.
        amount: i64,
    },
    /// The processor decides later: the reservation holds until it has (the auth stays
    /// `closing`, the refund's amount stays counted).
    Held,
}

impl FollowUp {
    /// The type of the transaction that records it.
    pub fn kind(self) -> TxnType {
        match self {
            Self::Capture(_) => TxnType::Capture,
            Self::Void => TxnType::Void,
            Self::Refund(_) => TxnType::Refund,
        }
    }

    /// The claim taken on the original for a follow-up moving `amount`.
    pub fn reservation(self, amount: i64) -> Reservation {
        match self {
            Self::Capture(_) | Self::Void => Reservation::CloseAuth,
            Self::Refund(_) => Reservation::Refund { amount },
        }
    }

    /// What the original becomes once the processor approved (or did not approve) the
    /// follow-up that moved `amount`.
    pub fn outcome(self, approved: bool, amount: i64) -> OriginalOutcome {
        match (self, approved) {
            (Self::Capture(_), true) => OriginalOutcome::Closed(TxnState::Captured),
            (Self::Void, true) => OriginalOutcome::Closed(TxnState::Voided),
            (Self::Capture(_) | Self::Void, false) => OriginalOutcome::Reopened,
            (Self::Refund(_), true) => OriginalOutcome::RefundKept,
            (Self::Refund(_), false) => OriginalOutcome::RefundReleased { amount },
        }
    }
}

impl OriginalOutcome {
    /// A follow-up of type `kind` that moved `amount` never completed: its claim is released.
    pub fn abandoned(kind: TxnType, amount: i64) -> Self {
        match kind {
            TxnType::Refund => Self::RefundReleased { amount },
            _ => Self::Reopened,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_follow_up_claims_records_and_settles_its_original() {
        use OriginalOutcome::{Closed, RefundKept, RefundReleased, Reopened};
        let cases = [
            (
                FollowUp::Capture(None),
                TxnType::Capture,
                Reservation::CloseAuth,
                Closed(TxnState::Captured),
                Reopened,
            ),
            (
                FollowUp::Void,
                TxnType::Void,
                Reservation::CloseAuth,
                Closed(TxnState::Voided),
                Reopened,
            ),
            (
                FollowUp::Refund(None),
                TxnType::Refund,
                Reservation::Refund { amount: 7 },
                RefundKept,
                RefundReleased { amount: 7 },
            ),
        ];
        for (follow_up, kind, reservation, approved, refused) in cases {
            assert_eq!(follow_up.kind(), kind);
            assert_eq!(follow_up.reservation(7), reservation);
            assert_eq!(follow_up.outcome(true, 7), approved);
            assert_eq!(follow_up.outcome(false, 7), refused);
            assert_eq!(OriginalOutcome::abandoned(kind, 7), refused);
        }
    }
}
