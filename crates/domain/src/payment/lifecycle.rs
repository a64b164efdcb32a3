//! What may follow a transaction: capture and void of an auth, refunds of money that moved.
//!
//! | original | state | capture | void | refund |
//! |---|---|---|---|---|
//! | auth | authorized | once, up to the approved amount | yes | no |
//! | auth | closing (a capture or void in flight) | no | no | no |
//! | auth | captured or voided | no | no | no (refund the capture) |
//! | sale or capture | settled | no | no | repeatedly, never more in total than its amount |
//! | capture | processing (its processor has not confirmed it) | no | no | not yet |
//! | any | declined or failed | no | no | no |
//! | capture, void, refund | — | no | no | refunds of a capture only |

use super::amount::Amount;

crate::words! {
    /// The five transaction types.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum TxnType {
        /// Places a hold on the customer's funds without moving them (spec 1).
        Auth,
        /// Moves funds to the merchant directly; final.
        Sale,
        /// Completes an auth and moves the held funds.
        Capture,
        /// Cancels an auth and releases its hold.
        Void,
        /// Returns money moved by a sale or a capture, in part or in full.
        Refund,
    }
}

crate::words! {
    /// Where a transaction stands with respect to what may follow it.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum TxnState {
        /// Recorded before the processor call; final once the call returns.
        Pending,
        /// An approved auth holding funds, not yet captured or voided.
        Authorized,
        /// An auth whose capture or void is in flight: no other follow-up may start.
        Closing,
        /// An auth whose capture completed.
        Captured,
        /// An auth that was voided; the hold is released.
        Voided,
        /// A capture, void or refund the processor took but has not decided yet: its outcome
        /// comes later (Adyen's notifications) and moves it to `settled` or `failed`, with a
        /// `transaction.updated` event. Its original stays reserved meanwhile.
        Processing,
        /// Money moved (approved sale or capture) or the record is final (void, refund).
        Settled,
        /// The processor declined; nothing follows.
        Declined,
        /// A processor error or timeout; any hold was reversed; nothing follows.
        Failed,
    }
}

/// A follow-up asked of an original transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FollowUp {
    /// Capture an auth, for the given amount or, when none, the whole approved amount.
    Capture(Option<Amount>),
    /// Void an auth, releasing its hold.
    Void,
    /// Refund a sale or capture, for the given amount or, when none, all that remains.
    Refund(Option<Amount>),
}

/// Why a follow-up is refused. Each names the rule broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// A capture or void asked of something other than an auth.
    #[error("only an auth can be captured or voided")]
    NotAnAuth,
    /// The auth is closing: another capture or void of it has not finished.
    #[error("a capture or void of this auth is in progress")]
    InFlight,
    /// The auth was captured already; only the capture can now be refunded.
    #[error("this auth was already captured")]
    AlreadyCaptured,
    /// The auth was voided and its hold released.
    #[error("this auth was voided")]
    AlreadyVoided,
    /// The original is not in an approved state the follow-up needs: declined, failed or pending.
    #[error("a declined or failed transaction cannot be followed up")]
    NotApproved,
    /// A refund asked of something other than a sale or a capture.
    #[error("only a sale or a capture can be refunded")]
    NotRefundable,
    /// The amount asked is more than remains to capture or refund.
    #[error("the amount exceeds what remains: at most {remaining}")]
    AmountTooHigh {
        /// The most that may still be captured or refunded, in minor units.
        remaining: i64,
    },
    /// Refunds already add up to the whole amount of the original.
    #[error("nothing remains to refund")]
    FullyRefunded,
    /// The original is a capture its processor has not confirmed yet.
    #[error("this transaction awaits its processor's outcome; try again once it is settled")]
    AwaitingProcessor,
}

/// What the rules need to know of the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Original {
    /// The original's transaction type.
    pub kind: TxnType,
    /// Where the original stands now.
    pub state: TxnState,
    /// The approved amount (auth, sale) or the captured amount (capture).
    pub approved_amount: i64,
    /// The sum of refunds already made of it.
    pub refunded_amount: i64,
}

impl Original {
    /// The amount the follow-up moves, or why it may not happen. A missing amount means "all
    /// that remains" (full capture, full refund); a void moves nothing new, so it is the
    /// approved amount being released.
    pub fn allows(&self, follow_up: FollowUp) -> Result<i64, Refused> {
        match follow_up {
            FollowUp::Capture(amount) => {
                self.open_auth()?;
                within(amount, self.approved_amount)
            }
            FollowUp::Void => {
                self.open_auth()?;
                Ok(self.approved_amount)
            }
            FollowUp::Refund(amount) => {
                if !matches!(self.kind, TxnType::Sale | TxnType::Capture) {
                    return Err(Refused::NotRefundable);
                }
                if self.state == TxnState::Processing {
                    return Err(Refused::AwaitingProcessor);
                }
                if self.state != TxnState::Settled {
                    return Err(Refused::NotApproved);
                }
                let remaining = self.approved_amount - self.refunded_amount;
                if remaining <= 0 {
                    return Err(Refused::FullyRefunded);
                }
                within(amount, remaining)
            }
        }
    }

    fn open_auth(&self) -> Result<(), Refused> {
        if self.kind != TxnType::Auth {
            return Err(Refused::NotAnAuth);
        }
        match self.state {
            TxnState::Authorized => Ok(()),
            TxnState::Closing => Err(Refused::InFlight),
            TxnState::Captured => Err(Refused::AlreadyCaptured),
            TxnState::Voided => Err(Refused::AlreadyVoided),
            TxnState::Pending
            | TxnState::Declined
            | TxnState::Failed
            | TxnState::Settled
            | TxnState::Processing => Err(Refused::NotApproved),
        }
    }
}

fn within(amount: Option<Amount>, remaining: i64) -> Result<i64, Refused> {
    match amount {
        None => Ok(remaining),
        Some(a) if a.minor_units() <= remaining => Ok(a.minor_units()),
        Some(_) => Err(Refused::AmountTooHigh { remaining }),
    }
}

impl TxnType {
    /// Whether it follows an original: a capture, void or refund.
    pub fn is_follow_up(self) -> bool {
        matches!(self, Self::Capture | Self::Void | Self::Refund)
    }

    /// The state an approved transaction of this type takes: an auth holds funds, everything
    /// else is final.
    pub fn state_when_approved(self) -> TxnState {
        match self {
            Self::Auth => TxnState::Authorized,
            Self::Sale | Self::Capture | Self::Void | Self::Refund => TxnState::Settled,
        }
    }
}

#[cfg(test)]
mod tests;
