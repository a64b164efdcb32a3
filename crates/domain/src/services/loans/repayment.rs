//! Repaying a loan early from the merchant's available balance, and charging one off.

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{LoanId, LoanRepaymentId};
use crate::loan::{Loan, LoanRepayment, LoanState, RepaymentEvent, RepaymentKind};
use crate::ports::{Changed, EventData};
use crate::scope::Scope;

use super::{LoanService, ServiceError, busy, refused};

impl LoanService {
    /// Repays `amount` (everything outstanding when `None`) of a loan being repaid from its
    /// merchant's available balance, with `loan.repayment` (and `loan.repaid` or
    /// `loan.updated` when that moves it).
    #[tracing::instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn repay(
        &self,
        who: &Principal,
        id: &LoanId,
        amount: Option<i64>,
        reply: Option<&Recorder<'_, Loan>>,
    ) -> Result<Loan, ServiceError> {
        let loan = self.get(who, id).await?;
        if !loan.state.is_repaying() {
            return Err(refused(loan.state, "only a paid-out loan can be repaid"));
        }
        let outstanding = loan.outstanding();
        let amount = amount.unwrap_or(outstanding);
        if amount < 1 {
            return Err(Invalid::new("amount", "must be at least 1").into());
        }
        // What is outstanding changes with every settlement: a conflict with the loan's state,
        // as more than the available balance is for a payout.
        if amount > outstanding {
            return Err(ServiceError::Conflict {
                field: "amount",
                message: format!("is more than the loan has outstanding, {outstanding}"),
            });
        }
        let now = self.clock.now();
        let after = loan.after_repaying(amount, now);
        let repayment = LoanRepayment {
            id: LoanRepaymentId::from_suffix(&self.ids.next_id()),
            loan_id: loan.id.clone(),
            merchant_id: loan.merchant_id.clone(),
            kind: RepaymentKind::Early,
            amount,
            currency: loan.currency,
            settlement_run_id: None,
            outstanding: after.outstanding(),
            created_on: now,
        };
        let journal = loan
            .repayment_journal(&repayment)
            .ok_or_else(|| Invalid::new("amount", "is out of range"))?;
        let mut change = self.change(&loan, after, vec![journal]);
        // Announced at the repayment's time, which the loan after it carries.
        change.events.insert(
            0,
            self.event(
                &change.loan,
                EventData::LoanRepayment(Box::new(RepaymentEvent {
                    repayment: repayment.clone(),
                    loan: change.loan.clone(),
                })),
            ),
        );
        change.repayment = Some(repayment);
        match self
            .loans
            .change_loan(&change, reply_for(reply, &change.loan))
            .await
            .map_err(ServiceError::Store)?
        {
            Changed::Changed => Ok(change.loan),
            Changed::Short { available } => Err(ServiceError::Conflict {
                field: "amount",
                message: format!("is more than the merchant's available balance, {available}"),
            }),
            Changed::Moved => Err(busy()),
        }
    }

    /// Charges off what a loan being repaid still owes (the operator's `holdfast loans
    /// charge-off`), with `loan.charged_off`.
    pub async fn charge_off(&self, scope: &Scope, id: &LoanId) -> Result<Loan, ServiceError> {
        let loan = self
            .loans
            .get_loan(scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("loan"))?;
        if loan.state.to(LoanState::ChargedOff).is_none() {
            return Err(refused(
                loan.state,
                "only a paid-out loan can be charged off",
            ));
        }
        let journal = loan.charge_off_journal(self.clock.now());
        let after = self.moved(&loan, LoanState::ChargedOff);
        let change = self.change(&loan, after, journal.into_iter().collect());
        self.write(&change, None).await?;
        tracing::warn!(loan = %loan.id, written_off = loan.outstanding(), "loan charged off");
        Ok(change.loan)
    }
}
