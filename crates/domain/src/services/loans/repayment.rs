//! Repaying a loan early from the merchant's available balance, and charging one off.

use time::OffsetDateTime;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{LoanId, LoanRepaymentId, SettlementRunId};
use crate::loan::{
    Loan, LoanEvent, LoanNews, LoanRepayment, LoanState, RepaymentEvent, RepaymentKind,
};
use crate::ports::{Changed, Event, EventData, LoanChange};
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
        let repaying = Repaying {
            id: LoanRepaymentId::from_suffix(&self.ids.next_id()),
            kind: RepaymentKind::Early,
            amount,
            settlement_run_id: None,
            on: self.clock.now(),
        };
        // Announced at the repayment's time, which the loan after it carries.
        let change = repayment_change(&loan, repaying, |after, data| self.event(after, data))
            .ok_or_else(|| Invalid::new("amount", "is out of range"))?;
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

/// A repayment about to be made of a loan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repaying {
    /// The repayment's id.
    pub id: LoanRepaymentId,
    /// Withheld from a settlement, or early.
    pub kind: RepaymentKind,
    /// Minor units of the loan's currency.
    pub amount: i64,
    /// The settlement run that withholds it.
    pub settlement_run_id: Option<SettlementRunId>,
    /// When it is made.
    pub on: OffsetDateTime,
}

/// The change that records `repaying` of `loan`: the repayment, its journal, the loan after it,
/// and what it announces, each event made by `event` from the loan after it: `loan.repayment`,
/// then `loan.repaid` or `loan.updated` when it moves the loan. `None` when the loan cannot take
/// it (nothing, or more than it has outstanding) or no journal can hold it. An early repayment
/// (`LoanService::repay`) and a settlement run's withholding (`SettlementService`) are both
/// made here.
pub fn repayment_change(
    loan: &Loan,
    repaying: Repaying,
    mut event: impl FnMut(&Loan, EventData) -> Event,
) -> Option<LoanChange> {
    if repaying.amount < 1 || repaying.amount > loan.outstanding() {
        return None;
    }
    let after = loan.after_repaying(repaying.amount, repaying.on);
    let repayment = LoanRepayment {
        id: repaying.id,
        loan_id: loan.id.clone(),
        merchant_id: loan.merchant_id.clone(),
        kind: repaying.kind,
        amount: repaying.amount,
        currency: loan.currency,
        settlement_run_id: repaying.settlement_run_id,
        outstanding: after.outstanding(),
        created_on: repaying.on,
    };
    let journal = loan.repayment_journal(&repayment)?;
    let mut events = vec![event(
        &after,
        EventData::LoanRepayment(Box::new(RepaymentEvent {
            repayment: repayment.clone(),
            loan: after.clone(),
        })),
    )];
    if after.state != loan.state {
        let news = LoanNews {
            event: LoanEvent::of_move(loan.state, after.state),
            loan: after.clone(),
        };
        events.push(event(&after, EventData::Loan(Box::new(news))));
    }
    Some(LoanChange {
        from: loan.state,
        read_on: loan.updated_on,
        loan: after,
        journals: vec![journal],
        payout: None,
        repayment: Some(repayment),
        events,
    })
}
