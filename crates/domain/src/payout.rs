//! Payouts: a merchant's available money on its way to its bank (docs/money.md).
//!
//! A payout takes an amount of the merchant's available balance to in transit when it is made,
//! and leaves it there until its bank rail says how it ended:
//!
//! | from | to | when | journal (debit +, credit -) |
//! |---|---|---|---|
//! | — | `pending` | made (by its schedule, or asked for) | `payout`: merchant available +amount, merchant in transit -amount |
//! | `pending` | `in_transit` | handed to the bank (the sandbox bank at once; a NACHA file written) | none |
//! | `in_transit` | `paid` | the bank paid it | `payout_paid`: merchant in transit +amount, processor receivable -amount |
//! | `pending`, `in_transit` | `failed` | the bank refused or returned it (an ACH return code) | `payout_returned`: merchant in transit +amount, merchant available -amount |
//! | `paid` | `failed` | the bank returned it after paying (an ACH return, days later) | `payout_returned`: processor receivable +amount, merchant available -amount |
//! | `pending` | `canceled` | canceled before it was handed to the bank | `payout_returned`, the same |
//!
//! A paid payout's money is what the processors owed for the merchant's charges, passed on:
//! the receivable they settle to the platform is what the platform's bank pays out. A loan's
//! payout (method `loan`) is the platform's own money: where the table says processor
//! receivable, it posts to the platform's funding.

pub mod ach;
mod bank;
pub mod nacha;
mod schedule;
mod state;

use serde::Serialize;
use time::OffsetDateTime;

use crate::ids::{BoardingFormId, MerchantId, PayoutId, PlatformId};
use crate::ledger::{Entry, Heading, Journal, JournalKind, Purpose};
use crate::merchant::Currency;
use crate::mode::Mode;

pub use bank::{
    ReturnCode, SANDBOX_ACCOUNTS, SANDBOX_PAYING_ACCOUNT, SandboxOutcome, sandbox_outcome,
};
pub use schedule::{MerchantSchedule, PayoutInterval, PayoutSchedule, parse_weekday, weekday_name};
pub use state::{PayoutState, Transition};

crate::words! {
    /// Who made a payout.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum PayoutMethod {
        /// Asked for (`POST /v1/payouts`).
        Manual,
        /// Made by the merchant's payout schedule.
        Scheduled,
        /// A loan's advance, paid out when the loan was accepted (docs/loans.md): the
        /// platform's own money, so once paid it comes from the platform's funding.
        Loan,
    }
}

/// A payout of a merchant's available money to its bank account. Its `Serialize` is the API's
/// JSON shape, for responses and for the `data` of its events alike.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Payout {
    /// Its id (`po_…`), the source of its journals.
    pub id: PayoutId,
    /// The merchant's platform.
    pub platform_id: PlatformId,
    /// The mode of the money: a test payout goes to the sandbox bank.
    pub mode: Mode,
    /// The merchant paid.
    pub merchant_id: MerchantId,
    /// The currency of the balance it takes from.
    pub currency: Currency,
    /// Minor units, above zero.
    pub amount: i64,
    /// Where it is.
    pub state: PayoutState,
    /// Asked for, or made by the schedule.
    pub method: PayoutMethod,
    /// The last four digits of the bank account it goes to.
    pub bank_last4: String,
    /// The boarding form whose sealed bank account it goes to; `None` for a test payout of a
    /// merchant without one, which goes to the sandbox bank's paying account.
    #[serde(skip)]
    #[cfg_attr(feature = "openapi", schema(ignore))]
    pub bank_form: Option<BoardingFormId>,
    /// The trace number of its entry in the NACHA file that carried it to the bank: what the
    /// bank's statements and returns name it by. A live payout's, once handed over; `None`
    /// before, and for a test payout.
    pub trace_number: Option<String>,
    /// Why the bank sent it back, once failed.
    pub failure: Option<PayoutFailure>,
    /// When it was made.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub created_on: OffsetDateTime,
    /// When it last moved.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub updated_on: OffsetDateTime,
}

/// Why a payout failed: the bank's ACH return code and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PayoutFailure {
    /// `R01` to `R85`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^R[0-9]{2}$", example = "R03"))]
    pub code: ReturnCode,
    /// What the code means, in the Nacha rules' words.
    pub message: &'static str,
}

impl PayoutFailure {
    /// The failure a return with `code` makes.
    pub fn new(code: ReturnCode) -> Self {
        Self {
            code,
            message: code.meaning(),
        }
    }
}

impl Payout {
    /// The journal its move `from` (`None` when it is made) `to` posts at `posted_on` (the
    /// module's table): `None` for a move that posts nothing (handed to the bank), one the
    /// table does not allow, or an amount no journal can hold.
    pub fn journal_for(
        &self,
        from: Option<PayoutState>,
        to: PayoutState,
        posted_on: OffsetDateTime,
    ) -> Option<Journal> {
        use Purpose::{MerchantAvailable, MerchantInTransit};
        let source = match self.method {
            PayoutMethod::Loan => Purpose::PlatformFunding,
            PayoutMethod::Manual | PayoutMethod::Scheduled => Purpose::ProcessorReceivable,
        };
        if let Some(from) = from {
            from.to(to)?;
        }
        let amount = self.amount;
        let back = amount.checked_neg()?;
        let (kind, entries) = match (from, to) {
            (_, PayoutState::Pending) => (
                JournalKind::Payout,
                [(MerchantAvailable, amount), (MerchantInTransit, back)],
            ),
            (_, PayoutState::Paid) => (
                JournalKind::PayoutPaid,
                [(MerchantInTransit, amount), (source, back)],
            ),
            (Some(PayoutState::Paid), PayoutState::Failed) => (
                JournalKind::PayoutReturned,
                [(source, amount), (MerchantAvailable, back)],
            ),
            (_, PayoutState::Failed | PayoutState::Canceled) => (
                JournalKind::PayoutReturned,
                [(MerchantInTransit, amount), (MerchantAvailable, back)],
            ),
            (_, PayoutState::InTransit) => return None,
        };
        let heading = Heading {
            platform_id: self.platform_id.clone(),
            mode: self.mode,
            merchant_id: self.merchant_id.clone(),
            currency: self.currency,
            kind,
            source: self.id.to_string(),
            posted_on,
        };
        let entries = entries.map(|(purpose, amount)| Entry { purpose, amount });
        Journal::new(heading, &entries).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::fixtures::NOON;

    fn payout(amount: i64) -> Payout {
        Payout {
            id: PayoutId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("P"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("M"),
            currency: Currency::USD,
            amount,
            state: PayoutState::Pending,
            method: PayoutMethod::Manual,
            bank_last4: "6789".into(),
            bank_form: None,
            trace_number: None,
            failure: None,
            created_on: NOON,
            updated_on: NOON,
        }
    }

    /// The module's table, every pair of states: what each move posts (nothing for a move the
    /// table does not allow, or one to the bank), each journal in the payout's currency with
    /// it as its source.
    #[test]
    fn each_move_posts_what_the_table_says() {
        use Purpose::{MerchantAvailable, MerchantInTransit, ProcessorReceivable};
        let p = payout(941);
        let made = (
            JournalKind::Payout,
            vec![(MerchantAvailable, 941), (MerchantInTransit, -941)],
        );
        let paid = (
            JournalKind::PayoutPaid,
            vec![(MerchantInTransit, 941), (ProcessorReceivable, -941)],
        );
        let back = (
            JournalKind::PayoutReturned,
            vec![(MerchantAvailable, -941), (MerchantInTransit, 941)],
        );
        let returned_after_paid = (
            JournalKind::PayoutReturned,
            vec![(MerchantAvailable, -941), (ProcessorReceivable, 941)],
        );
        let posted = |from, to| {
            p.journal_for(from, to, NOON).map(|j| {
                assert_eq!(j.heading.source, "po_1");
                assert_eq!(j.heading.currency, Currency::USD);
                let mut entries: Vec<(Purpose, i64)> =
                    j.entries().iter().map(|e| (e.purpose, e.amount)).collect();
                entries.sort();
                (j.heading.kind, entries)
            })
        };
        assert_eq!(posted(None, PayoutState::Pending), Some(made));
        for &from in PayoutState::ALL {
            for &to in PayoutState::ALL {
                let expected = match (from, to) {
                    (PayoutState::InTransit, PayoutState::Paid) => Some(paid.clone()),
                    (PayoutState::Paid, PayoutState::Failed) => Some(returned_after_paid.clone()),
                    (PayoutState::Pending | PayoutState::InTransit, PayoutState::Failed)
                    | (PayoutState::Pending, PayoutState::Canceled) => Some(back.clone()),
                    _ => None,
                };
                assert_eq!(posted(Some(from), to), expected, "{from} -> {to}");
            }
        }
        assert_eq!(
            payout(i64::MIN).journal_for(None, PayoutState::Pending, NOON),
            None
        );
    }

    #[test]
    fn a_loans_payout_is_paid_from_the_platforms_funding() {
        let loan = Payout {
            method: PayoutMethod::Loan,
            ..payout(500)
        };
        let paid = loan
            .journal_for(Some(PayoutState::InTransit), PayoutState::Paid, NOON)
            .unwrap();
        assert_eq!(paid.amount_to(Purpose::PlatformFunding), -500);
        assert_eq!(paid.amount_to(Purpose::ProcessorReceivable), 0);
        let returned = loan
            .journal_for(Some(PayoutState::Paid), PayoutState::Failed, NOON)
            .unwrap();
        assert_eq!(returned.amount_to(Purpose::PlatformFunding), 500);
        assert_eq!(returned.amount_to(Purpose::MerchantAvailable), -500);
    }
}
