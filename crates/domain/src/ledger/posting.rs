//! What each transaction outcome posts (docs/money.md):
//!
//! | transaction | when | journal | entries (debit +, credit -) |
//! |---|---|---|---|
//! | sale | approved (`settled`) | charge | processor receivable +gross, merchant pending -(gross - fee), platform fees -fee |
//! | capture | settled (at once, or when its processor confirms it) | charge | the same, gross the captured amount |
//! | auth | approved (`authorized`), with a fee | auth fee | merchant pending +fee, platform fees -fee |
//! | refund | settled | refund | merchant available +(amount + fee), processor receivable -amount, platform fees -fee |
//! | void, decline, failure, `processing`, pending | — | none | — |
//!
//! The gross is what the processor approved (`authorization.approvedAmount`), never what was
//! asked. A refund is taken from what the merchant may be paid, even while the charge it
//! returns is still pending: its available balance goes below zero rather than the refund
//! waiting, and later settlements make it good before any payout.

use time::OffsetDateTime;

use super::journal::Heading;
use super::{Entry, Journal, JournalKind, Purpose};
use crate::payment::lifecycle::{TxnState, TxnType};
use crate::payment::transaction::Transaction;

/// The journal `txn`'s outcome posts at `posted_on`, if it moves money. `None` for what moves nothing, and for amounts no journal can hold (a fee above
/// the gross, which the fee rule never makes).
pub fn journal_for(txn: &Transaction, posted_on: OffsetDateTime) -> Option<Journal> {
    use Purpose::{MerchantAvailable, MerchantPending, PlatformFees, ProcessorReceivable};
    let gross = txn.authorization.approved_amount;
    let fee = txn.fee;
    let (kind, entries) = match (txn.kind, txn.state) {
        (TxnType::Sale | TxnType::Capture, TxnState::Settled) => (
            JournalKind::Charge,
            [
                (ProcessorReceivable, gross),
                (MerchantPending, gross.checked_sub(fee)?.checked_neg()?),
                (PlatformFees, fee.checked_neg()?),
            ],
        ),
        // Approved auths only: a later state (captured, voided) is the same auth, posted once.
        (TxnType::Auth, TxnState::Authorized) if fee > 0 => (
            JournalKind::AuthFee,
            [
                (MerchantPending, fee),
                (PlatformFees, fee.checked_neg()?),
                (ProcessorReceivable, 0),
            ],
        ),
        (TxnType::Refund, TxnState::Settled) => (
            JournalKind::Refund,
            [
                (MerchantAvailable, gross.checked_add(fee)?),
                (ProcessorReceivable, gross.checked_neg()?),
                (PlatformFees, fee.checked_neg()?),
            ],
        ),
        _ => return None,
    };
    // An auth's fee stands alone; any other fee is part of the gross it is taken from.
    if gross < 0 || fee < 0 || (fee > gross && kind != JournalKind::AuthFee) {
        return None;
    }
    let heading = Heading {
        platform_id: txn.platform_id.clone(),
        mode: txn.mode,
        merchant_id: txn.merchant_id.clone(),
        currency: txn.currency,
        kind,
        source: txn.id.to_string(),
        posted_on,
    };
    let entries = entries.map(|(purpose, amount)| Entry { purpose, amount });
    Journal::new(heading, &entries).ok()
}

#[cfg(test)]
mod tests;
