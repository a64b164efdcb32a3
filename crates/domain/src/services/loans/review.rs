//! The loans' review, run by the worker on its clock: offers past their end expire, accepted
//! loans whose advance could not be paid out yet are paid out, and loans being repaid take the
//! standing their repayments and the 30-day minimums give them (docs/loans.md). Time moves
//! only through the clock port, so tests travel in time instead of sleeping.

use crate::loan::{Loan, LoanState, MINIMUM_PERIOD};
use crate::ports::{ReviewDue, StoreError};

use super::LoanService;

/// How many loans the review reads at once.
const BATCH: u32 = 500;

/// What one review did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReviewReport {
    /// Offers that expired.
    pub expired: u64,
    /// Advances paid out.
    pub paid_out: u64,
    /// Loans whose standing moved (past due, back in good standing, repaid).
    pub moved: u64,
}

impl LoanService {
    /// Reviews every loan that may move at this time, of every platform and mode.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn review(&self) -> Result<ReviewReport, StoreError> {
        let mut report = ReviewReport::default();
        let now = self.now();
        let due = ReviewDue {
            offers_ended_by: now,
            paid_out_by: now.checked_sub(MINIMUM_PERIOD).unwrap_or(now),
        };
        let mut after = None;
        loop {
            let batch = self.loans.loans_to_review(due, after.take(), BATCH).await?;
            let Some(last) = batch.last() else {
                break;
            };
            after = Some(last.id.clone());
            for loan in &batch {
                self.review_one(loan, &mut report).await?;
            }
            if batch.len() < BATCH as usize {
                break;
            }
        }
        if report != ReviewReport::default() {
            tracing::info!(
                expired = report.expired,
                paid_out = report.paid_out,
                moved = report.moved,
                "loans reviewed"
            );
        }
        Ok(report)
    }

    async fn review_one(&self, loan: &Loan, report: &mut ReviewReport) -> Result<(), StoreError> {
        let now = self.now();
        match loan.state {
            LoanState::Offered if loan.offer_expires_on <= now => {
                let after = self.moved(loan, LoanState::Expired);
                if self.written(&self.change(loan, after, Vec::new())).await? {
                    report.expired += 1;
                }
            }
            LoanState::Accepted => match self.pay_out(loan).await {
                Ok(_) => report.paid_out += 1,
                Err(super::ServiceError::Store(e)) => return Err(e),
                // A live merchant still without a US account: logged, tried next review.
                Err(e) => {
                    tracing::warn!(loan = %loan.id, error = %e, "accepted loan not paid out yet");
                }
            },
            LoanState::PaidOut | LoanState::PastDue => {
                let standing = loan.standing(now);
                if standing != loan.state {
                    let after = self.moved(loan, standing);
                    if self.written(&self.change(loan, after, Vec::new())).await? {
                        report.moved += 1;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Whether `change` was written; one the loan outran is left for the next review.
    async fn written(&self, change: &crate::ports::LoanChange) -> Result<bool, StoreError> {
        Ok(self.loans.change_loan(change, None).await? == crate::ports::Changed::Changed)
    }
}
