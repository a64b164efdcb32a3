//! What each transaction outcome posts (docs/money.md):
//!
//! | transaction | when | journal | entries (debit +, credit -) |
//! |---|---|---|---|
//! | sale | approved (`settled`) | charge | processor receivable +gross, merchant pending -(gross - fee), platform fees -fee |
//! | capture | settled (at once, or when its processor confirms it) | charge | the same, gross the captured amount, fee its own and its auth's |
//! | refund | settled | refund | merchant available +(amount + fee), processor receivable -amount, platform fees -fee |
//! | auth, void, decline, failure, `processing`, pending | — | none | — |
//!
//! The gross is what the processor approved (`authorization.approvedAmount`), never what was
//! asked. An auth moves no money: its fee is collected with its capture, so an auth and its
//! capture post what a sale of the same amount posts (each fee capped at its own amount), and an auth voided or never
//! captured charges nothing. A refund is taken from what the merchant may be paid, even while the charge it
//! returns is still pending: its available balance goes below zero rather than the refund
//! waiting, and later settlements make it good before any payout.

use time::OffsetDateTime;

use super::journal::Heading;
use super::{Entry, Journal, JournalKind, Purpose};
use crate::payment::lifecycle::{TxnState, TxnType};
use crate::payment::transaction::Transaction;

/// The journal `txn`'s outcome posts at `posted_on`, if it moves money. A capture's
/// `original` is the auth it captures, whose fee it collects; other types ignore it. `None`
/// for what moves nothing, and for amounts no journal can hold (negative, or overflowing).
pub fn journal_for(
    txn: &Transaction,
    original: Option<&Transaction>,
    posted_on: OffsetDateTime,
) -> Option<Journal> {
    use Purpose::{MerchantAvailable, MerchantPending, PlatformFees, ProcessorReceivable};
    let gross = txn.authorization.approved_amount;
    let fee = match txn.kind {
        TxnType::Capture => txn.fee.checked_add(original.map_or(0, |auth| auth.fee))?,
        _ => txn.fee,
    };
    if gross < 0 || fee < 0 {
        return None;
    }
    let (kind, entries) = match (txn.kind, txn.state) {
        // A capture's fee can exceed what it captured (its auth's fixed fee on a small
        // capture): the merchant's pending then owes the difference.
        (TxnType::Sale | TxnType::Capture, TxnState::Settled) => (
            JournalKind::Charge,
            [
                (ProcessorReceivable, gross),
                (MerchantPending, fee.checked_sub(gross)?),
                (PlatformFees, fee.checked_neg()?),
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
