//! The storage of loans and their repayments (docs/loans.md): each change written with its
//! journals and events in one SQL transaction, and only if the loan is still as it was read.

use async_trait::async_trait;

use super::{Event, StoreError};
use crate::api_key::KeyHash;
use crate::idempotency::KeyedAnswer;
use crate::ids::{LoanId, MerchantId};
use crate::ledger::Journal;
use crate::loan::{Loan, LoanRepayment, LoanState};
use crate::page::{Page, PageRequest};
use crate::payout::Payout;
use crate::scope::Scope;

/// What offering a loan did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offered {
    /// It was written, with its event.
    Offered,
    /// Nothing was written: the merchant already has a loan that is not final (offered,
    /// accepted, or being repaid). A merchant has one at a time.
    AlreadyOpen,
}

/// A loan's change, written only if the loan is still in `from` and unchanged since it was read
/// (`loan.updated_on` before the change is `read_on`).
#[derive(Debug, Clone)]
pub struct LoanChange {
    /// The loan after the change.
    pub loan: Loan,
    /// The state it must still be in.
    pub from: LoanState,
    /// When it last changed, as read.
    pub read_on: time::OffsetDateTime,
    /// The journals the change posts (a charge-off's; a payout's advance and payout).
    pub journals: Vec<Journal>,
    /// The payout it makes (a loan's advance), if any.
    pub payout: Option<Payout>,
    /// A repayment it records, if any.
    pub repayment: Option<LoanRepayment>,
    /// What it announces.
    pub events: Vec<Event>,
}

/// The times a review reads loans by (`LoanStore::loans_to_review`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReviewDue {
    /// Offers ended by then expire.
    pub offers_ended_by: time::OffsetDateTime,
    /// Loans paid out by then have had a first period for their minimum.
    pub paid_out_by: time::OffsetDateTime,
}

/// What writing a change did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed {
    /// Written.
    Changed,
    /// Nothing written: the loan moved or changed meanwhile.
    Moved,
    /// Nothing written: the change takes a repayment from the merchant's available balance,
    /// which (read under the payouts' lock) is below it.
    Short {
        /// The available balance it found.
        available: i64,
    },
}

/// Which loans a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoanFilter {
    /// Only this merchant's.
    pub merchant: Option<MerchantId>,
    /// Only those in this state.
    pub state: Option<LoanState>,
}

/// Storage of loans, scoped to a platform and mode except for the reviews' reads.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LoanStore: Send + Sync {
    /// Writes `loan` (offered) with `event` and `reply` in one SQL transaction, unless its
    /// merchant has a loan that is not final.
    async fn offer_loan(
        &self,
        loan: &Loan,
        event: &Event,
        reply: Option<KeyedAnswer>,
    ) -> Result<Offered, StoreError>;

    /// Writes `change` and `reply` in one SQL transaction, if the loan is still as read. A
    /// change with an early repayment is written only if the merchant's available balance,
    /// read under the payouts' lock, covers it; one with a payout takes what its advance
    /// journal made available at once.
    async fn change_loan(
        &self,
        change: &LoanChange,
        reply: Option<KeyedAnswer>,
    ) -> Result<Changed, StoreError>;

    /// The loan `id` in `scope`, or `None`.
    async fn get_loan(&self, scope: &Scope, id: &LoanId) -> Result<Option<Loan>, StoreError>;

    /// The offered loan whose acceptance link hashes to `hash`, in any platform, or `None`.
    async fn loan_by_link(&self, hash: &KeyHash) -> Result<Option<Loan>, StoreError>;

    /// The scope's loans that `filter` lets through, newest first.
    async fn list_loans(
        &self,
        scope: &Scope,
        filter: &LoanFilter,
        page: &PageRequest,
    ) -> Result<Page<Loan>, StoreError>;

    /// The repayments of `loan` in `scope`, newest first.
    async fn repayments(
        &self,
        scope: &Scope,
        loan: &LoanId,
        page: &PageRequest,
    ) -> Result<Page<LoanRepayment>, StoreError>;

    /// Up to `limit` loans of every platform and mode that a review may move, by id, after
    /// `after`: offers whose end is at or before `due.offers_ended_by`, accepted loans (their
    /// advance to pay out), loans past due, and loans in good standing with a minimum, paid
    /// out at or before `due.paid_out_by` (a first period passed: they may have fallen due).
    /// The rest cannot move with time and are not read.
    async fn loans_to_review(
        &self,
        due: ReviewDue,
        after: Option<LoanId>,
        limit: u32,
    ) -> Result<Vec<Loan>, StoreError>;
}
