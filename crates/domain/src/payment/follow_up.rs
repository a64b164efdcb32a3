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

/// How a follow-up the processor decided later ended (its notification, in any processor's
/// words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaterOutcome {
    /// The processor carried it out.
    Confirmed,
    /// The processor refused it.
    Refused,
    /// It failed after the processor had confirmed it (a capture or refund the card scheme
    /// rejected).
    FailedAfterwards,
}

/// What a later outcome writes: the follow-up's final state and status, the state it must
/// still be in, and what becomes of its original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settling {
    /// The follow-up's state before: the write changes nothing if it is no longer so.
    pub from: TxnState,
    /// Its final state.
    pub to: TxnState,
    /// Whether it went through.
    pub approved: bool,
    /// What becomes of the original.
    pub original: OriginalMove,
}

/// A change of the original that must find it as expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginalMove {
    /// Nothing changes.
    None,
    /// Its state moves from one to another.
    State {
        /// The state it must be in.
        from: TxnState,
        /// The state it takes.
        to: TxnState,
    },
    /// A refund that did not happen gives its amount back.
    Release {
        /// Minor units refundable again.
        amount: i64,
    },
}

impl LaterOutcome {
    /// What this outcome does to a follow-up of type `kind` now in `state`, moving `amount`
    /// and whose own refunds add up to `refunded`; `None` when it no longer applies (already
    /// decided the same way, or a contradiction kept for inspection).
    pub fn settle(
        self,
        kind: TxnType,
        state: TxnState,
        amount: i64,
        refunded: i64,
    ) -> Option<Settling> {
        use TxnState::{Authorized, Captured, Closing, Failed, Processing, Settled, Voided};
        let undone = match kind {
            TxnType::Capture | TxnType::Void => OriginalMove::State {
                from: Closing,
                to: Authorized,
            },
            TxnType::Refund => OriginalMove::Release { amount },
            TxnType::Auth | TxnType::Sale => return None,
        };
        let settling = |from, to, approved, original| Settling {
            from,
            to,
            approved,
            original,
        };
        match (self, state) {
            (Self::Confirmed, Processing) => {
                let original = match kind {
                    TxnType::Capture => OriginalMove::State {
                        from: Closing,
                        to: Captured,
                    },
                    TxnType::Void => OriginalMove::State {
                        from: Closing,
                        to: Voided,
                    },
                    _ => OriginalMove::None,
                };
                Some(settling(Processing, Settled, true, original))
            }
            (Self::Refused | Self::FailedAfterwards, Processing) => {
                Some(settling(Processing, Failed, false, undone))
            }
            // A capture refused by the scheme after Adyen confirmed it: the auth is open again,
            // unless part of it was refunded meanwhile (kept for inspection).
            (Self::FailedAfterwards, Settled) if kind == TxnType::Capture && refunded == 0 => {
                let reopened = OriginalMove::State {
                    from: Captured,
                    to: Authorized,
                };
                Some(settling(Settled, Failed, false, reopened))
            }
            (Self::FailedAfterwards, Settled) if kind == TxnType::Refund => {
                Some(settling(Settled, Failed, false, undone))
            }
            _ => None,
        }
    }
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

    /// Every later outcome of every follow-up type, in every state it may find it in.
    #[test]
    fn later_outcomes_settle_each_follow_up_once() {
        use LaterOutcome::{Confirmed, FailedAfterwards, Refused};
        use TxnState::{Authorized, Captured, Closing, Failed, Processing, Settled, Voided};
        let state = |from, to| OriginalMove::State { from, to };
        let release = OriginalMove::Release { amount: 7 };
        let some = |from, to, approved, original| {
            Some(Settling {
                from,
                to,
                approved,
                original,
            })
        };
        let rows = [
            (
                Confirmed,
                TxnType::Capture,
                Processing,
                0,
                some(Processing, Settled, true, state(Closing, Captured)),
            ),
            (
                Refused,
                TxnType::Capture,
                Processing,
                0,
                some(Processing, Failed, false, state(Closing, Authorized)),
            ),
            (
                FailedAfterwards,
                TxnType::Capture,
                Processing,
                0,
                some(Processing, Failed, false, state(Closing, Authorized)),
            ),
            (
                FailedAfterwards,
                TxnType::Capture,
                Settled,
                0,
                some(Settled, Failed, false, state(Captured, Authorized)),
            ),
            (FailedAfterwards, TxnType::Capture, Settled, 3, None),
            (
                Confirmed,
                TxnType::Void,
                Processing,
                0,
                some(Processing, Settled, true, state(Closing, Voided)),
            ),
            (
                Refused,
                TxnType::Void,
                Processing,
                0,
                some(Processing, Failed, false, state(Closing, Authorized)),
            ),
            (
                Confirmed,
                TxnType::Refund,
                Processing,
                0,
                some(Processing, Settled, true, OriginalMove::None),
            ),
            (
                Refused,
                TxnType::Refund,
                Processing,
                0,
                some(Processing, Failed, false, release),
            ),
            (
                FailedAfterwards,
                TxnType::Refund,
                Settled,
                0,
                some(Settled, Failed, false, release),
            ),
            (
                FailedAfterwards,
                TxnType::Refund,
                Processing,
                0,
                some(Processing, Failed, false, release),
            ),
            // Already decided: a repeat, or the later of two contradicting notifications.
            (Confirmed, TxnType::Capture, Settled, 0, None),
            (Confirmed, TxnType::Capture, Failed, 0, None),
            (Refused, TxnType::Refund, Settled, 0, None),
            (FailedAfterwards, TxnType::Refund, Failed, 0, None),
            (Confirmed, TxnType::Auth, Authorized, 0, None),
            (Confirmed, TxnType::Sale, Settled, 0, None),
        ];
        for (outcome, kind, now, refunded, expected) in rows {
            assert_eq!(
                outcome.settle(kind, now, 7, refunded),
                expected,
                "{outcome:?} of a {kind} now {now}"
            );
        }
    }
}
