//! Journals: entries posted together, which sum to zero in one currency.

use time::OffsetDateTime;

use super::Purpose;
use crate::ids::{MerchantId, PlatformId};
use crate::merchant::Currency;
use crate::mode::Mode;

crate::words! {
    /// Why a journal was posted; with its source, it is posted once.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum JournalKind {
        /// An approved sale or a settled capture: the gross owed by the processor, the fee
        /// earned (a capture's with its auth's), the net pending for the merchant.
        Charge,
        /// A settled refund: the money returned, taken from what the merchant may be paid.
        Refund,
        /// A charge's net, moved from pending to available once its plan's delay has passed.
        Settlement,
        /// Everything a capture or refund posted, undone: its processor failed it after
        /// confirming it. Taken from available where its charge had settled.
        Reversal,
        /// A payout made: its amount from available to in transit.
        Payout,
        /// A payout the bank paid: out of in transit, passed on from the processors.
        PayoutPaid,
        /// A payout failed or canceled: its amount back from in transit to available.
        PayoutReturned,
        /// A loan's advance lent: what the merchant owes (advance and fee) against its
        /// available balance (the advance, paid out at once) and the platform's loan fees.
        LoanAdvance,
        /// A share of a settlement's net withheld to repay a loan, from available.
        LoanWithholding,
        /// A loan repaid early from the merchant's available balance.
        LoanRepayment,
        /// What a loan still owed, written off against the platform's funding.
        LoanChargeOff,
    }
}

/// One line of a journal: an amount posted to one of its accounts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Which account of the journal's merchant or platform.
    pub purpose: Purpose,
    /// Debit (positive) or credit (negative), in minor units; never zero.
    pub amount: i64,
}

/// Entries that do not make a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Unbalanced {
    /// They do not sum to zero (or their sum overflows).
    #[error("the entries do not sum to zero")]
    NotZero,
    /// Fewer than two accounts move.
    #[error("a journal moves at least two accounts")]
    TooFew,
    /// One account appears twice.
    #[error("an account appears twice in one journal")]
    Repeated,
}

/// Entries posted together for one merchant of a platform, in one mode and currency.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    /// Who and what it is about.
    pub heading: Heading,
    entries: Vec<Entry>,
}

/// Who and what a journal is about, before its entries. A journal is known by its source and
/// kind: a source posts each kind once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// The platform whose books it is in.
    pub platform_id: PlatformId,
    /// The mode of what it records.
    pub mode: Mode,
    /// The merchant whose accounts it moves.
    pub merchant_id: MerchantId,
    /// The one currency of every entry.
    pub currency: Currency,
    /// Why it is posted.
    pub kind: JournalKind,
    /// What it records.
    pub source: String,
    /// When it is posted.
    pub posted_on: OffsetDateTime,
}

impl Journal {
    /// A journal of `heading` with `entries`, leaving out zero amounts: at least two accounts,
    /// each once, summing to zero.
    pub fn new(heading: Heading, entries: &[Entry]) -> Result<Self, Unbalanced> {
        let entries: Vec<Entry> = entries.iter().copied().filter(|e| e.amount != 0).collect();
        if entries.len() < 2 {
            return Err(Unbalanced::TooFew);
        }
        let mut purposes: Vec<Purpose> = entries.iter().map(|e| e.purpose).collect();
        purposes.sort();
        purposes.dedup();
        if purposes.len() != entries.len() {
            return Err(Unbalanced::Repeated);
        }
        let sum = entries
            .iter()
            .try_fold(0_i64, |sum, e| sum.checked_add(e.amount));
        if sum != Some(0) {
            return Err(Unbalanced::NotZero);
        }
        Ok(Self { heading, entries })
    }

    /// Its entries: two or more, one per account, summing to zero.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// What it posts to `purpose` (0 when it does not move that account).
    pub fn amount_to(&self, purpose: Purpose) -> i64 {
        self.entries
            .iter()
            .find(|e| e.purpose == purpose)
            .map_or(0, |e| e.amount)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heading() -> Heading {
        Heading {
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("1"),
            currency: Currency::USD,
            kind: JournalKind::Charge,
            source: "txn_1".into(),
            posted_on: crate::services::fixtures::NOON,
        }
    }

    fn entry(purpose: Purpose, amount: i64) -> Entry {
        Entry { purpose, amount }
    }

    #[test]
    fn a_journal_sums_to_zero_over_two_or_more_accounts_each_once() {
        use Purpose::{MerchantPending, PlatformFees, ProcessorReceivable};
        let ok = Journal::new(
            heading(),
            &[
                entry(ProcessorReceivable, 1000),
                entry(MerchantPending, -970),
                entry(PlatformFees, -30),
                entry(Purpose::MerchantAvailable, 0),
            ],
        )
        .unwrap();
        assert_eq!(ok.entries().len(), 3, "a zero amount is no entry");
        assert_eq!(ok.amount_to(MerchantPending), -970);
        assert_eq!(ok.amount_to(Purpose::MerchantInTransit), 0);
        let cases: [(&[Entry], Unbalanced); 5] = [
            (
                &[
                    entry(ProcessorReceivable, 1000),
                    entry(MerchantPending, -999),
                ],
                Unbalanced::NotZero,
            ),
            (
                &[entry(ProcessorReceivable, 0), entry(MerchantPending, 0)],
                Unbalanced::TooFew,
            ),
            (
                &[
                    entry(ProcessorReceivable, 5),
                    entry(MerchantPending, -5),
                    entry(ProcessorReceivable, 0),
                ][..1],
                Unbalanced::TooFew,
            ),
            (
                &[entry(MerchantPending, 5), entry(MerchantPending, -5)],
                Unbalanced::Repeated,
            ),
            (
                &[
                    entry(ProcessorReceivable, i64::MAX),
                    entry(MerchantPending, 1),
                    entry(PlatformFees, i64::MIN),
                ],
                Unbalanced::NotZero,
            ),
        ];
        for (entries, why) in cases {
            assert_eq!(Journal::new(heading(), entries), Err(why), "{entries:?}");
        }
    }
}
