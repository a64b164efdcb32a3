//! Payouts (docs/money.md): a merchant's available money taken to in transit and handed to its
//! bank, which pays it or sends it back. Every move posts its journal and announces itself in
//! one SQL transaction with the payout's new state.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{EventId, MerchantId, PayoutId};
use crate::merchant::Currency;
use crate::page::{Page, PageRequest};
use crate::payout::{Payout, PayoutFailure, PayoutMethod, PayoutState, ReturnCode};
use crate::ports::{
    BoardingStore, CardVault, Clock, Event, EventData, Ids, LedgerStore, Made, MerchantStore,
    PayoutFilter, PayoutMove, PayoutStore, StoreError,
};

use super::ServiceError;

/// A payout asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewPayout {
    /// The merchant to pay.
    pub merchant: MerchantId,
    /// The balance to take from; the merchant's own currency when `None`.
    pub currency: Option<Currency>,
    /// Minor units; everything available when `None`.
    pub amount: Option<i64>,
}

/// How many times in all a payout of everything available is tried, when something took some
/// of it between the read and the write (a refund, a reversal, another payout).
const ATTEMPTS: usize = 3;

/// How many payouts a rail hands to its bank per batch.
const BATCH: u32 = 500;

/// What a run of the payout rails did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RailReport {
    /// Payouts the schedules made.
    pub made: u64,
    /// Live payouts handed to the bank in a NACHA file.
    pub sent: u64,
    /// Payouts the bank paid.
    pub paid: u64,
    /// Payouts the bank sent back.
    pub failed: u64,
}

/// Makes, reads, cancels and pays out payouts.
#[derive(Clone)]
pub struct PayoutService {
    payouts: Arc<dyn PayoutStore>,
    ledger: Arc<dyn LedgerStore>,
    merchants: Arc<dyn MerchantStore>,
    forms: Arc<dyn BoardingStore>,
    vault: Arc<dyn CardVault>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    /// The live rail, when the operator configured one; live payouts stay pending otherwise.
    ach: Option<AchRail>,
}

impl std::fmt::Debug for PayoutService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayoutService").finish_non_exhaustive()
    }
}

impl PayoutService {
    /// The service over the payouts, the balances they are made from, the merchants paid, the
    /// boarding forms holding their bank accounts, the vault that opens those for the rail,
    /// the clock, and the ids of payouts and events.
    pub fn new(
        payouts: Arc<dyn PayoutStore>,
        ledger: Arc<dyn LedgerStore>,
        merchants: Arc<dyn MerchantStore>,
        forms: Arc<dyn BoardingStore>,
        vault: Arc<dyn CardVault>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            payouts,
            ledger,
            merchants,
            forms,
            vault,
            clock,
            ids,
            ach: None,
        }
    }

    /// The service with the live rail: live payouts go to the bank in NACHA files.
    #[must_use]
    pub fn with_ach_rail(self, rail: AchRail) -> Self {
        Self {
            ach: Some(rail),
            ..self
        }
    }

    /// Makes a payout of `new.amount` (everything available when not given) of the merchant's
    /// available balance to the bank account of its newest approved boarding form (in test
    /// mode, without one, the sandbox bank's paying account). Refused when the balance does not
    /// cover it, or a live merchant has no bank account.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        new: NewPayout,
        reply: Option<&Recorder<'_, Payout>>,
    ) -> Result<Payout, ServiceError> {
        if let Some(amount) = new.amount
            && amount < 1
        {
            return Err(Invalid::new("amount", "must be at least 1").into());
        }
        let merchant = self
            .merchants
            .get_merchant(&who.scope, &new.merchant)
            .await
            .map_err(ServiceError::Store)?
            .ok_or_else(|| Invalid::new("merchantId", "no such merchant"))?;
        let currency = new.currency.unwrap_or(merchant.details.currency);
        let (bank_form, bank_last4) = self
            .bank_account(&who.scope, &new.merchant, currency)
            .await?;
        for _ in 0..ATTEMPTS {
            let amount = match new.amount {
                Some(amount) => amount,
                None => self.available(who, &new.merchant, currency).await?,
            };
            if amount < 1 {
                return Err(nothing_available());
            }
            let now = self.clock.now();
            let payout = Payout {
                id: PayoutId::from_suffix(&self.ids.next_id()),
                platform_id: who.scope.platform.clone(),
                mode: who.scope.mode,
                merchant_id: new.merchant.clone(),
                currency,
                amount,
                state: PayoutState::Pending,
                method: PayoutMethod::Manual,
                bank_last4: bank_last4.clone(),
                bank_form: bank_form.clone(),
                trace_number: None,
                failure: None,
                created_on: now,
                updated_on: now,
            };
            let journal = payout
                .journal_for(None, PayoutState::Pending, now)
                .ok_or_else(|| Invalid::new("amount", "is out of range"))?;
            let event = self.event(&payout, EventData::PayoutCreated);
            match self
                .payouts
                .make_payout(&payout, &journal, &event, reply_for(reply, &payout))
                .await
                .map_err(ServiceError::Store)?
            {
                Made::Made => {
                    tracing::info!(payout = %payout.id, merchant = %payout.merchant_id, amount, "payout made");
                    return Ok(payout);
                }
                Made::Short { available } if new.amount.is_some() || available < 1 => {
                    return Err(if available < 1 {
                        nothing_available()
                    } else {
                        ServiceError::Conflict {
                            field: "amount",
                            message: format!(
                                "is more than the merchant's available balance, {available}"
                            ),
                        }
                    });
                }
                // Everything available was asked for and a refund took some meanwhile: again.
                Made::Short { .. } => {}
            }
        }
        // Nothing was made: the same request, under the same key, may be sent again.
        Err(ServiceError::Busy(
            "the merchant's available balance kept changing while the payout was made; send \
             the request again"
                .into(),
        ))
    }

    /// The merchant's available balance in `currency`, zero when it has none.
    async fn available(
        &self,
        who: &Principal,
        merchant: &MerchantId,
        currency: Currency,
    ) -> Result<i64, ServiceError> {
        let balances = self
            .ledger
            .balances(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?;
        Ok(balances
            .iter()
            .find(|b| b.currency == currency)
            .map_or(0, |b| b.available))
    }

    /// One payout of the caller's platform and mode.
    pub async fn payout(&self, who: &Principal, id: &PayoutId) -> Result<Payout, ServiceError> {
        self.payouts
            .get_payout(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("payout"))
    }

    /// The caller's payouts that `filter` lets through, newest first.
    pub async fn payouts(
        &self,
        who: &Principal,
        filter: &PayoutFilter,
        page: &PageRequest,
    ) -> Result<Page<Payout>, ServiceError> {
        self.payouts
            .list_payouts(&who.scope, filter, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// Cancels a pending payout: its money is available again. Refused once it was handed to
    /// the bank.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn cancel(
        &self,
        who: &Principal,
        id: &PayoutId,
        reply: Option<&Recorder<'_, Payout>>,
    ) -> Result<Payout, ServiceError> {
        let payout = self.payout(who, id).await?;
        let refused = |state: PayoutState| ServiceError::Conflict {
            field: "id",
            message: format!("is {state}: only a pending payout can be canceled"),
        };
        if payout.state != PayoutState::Pending {
            return Err(refused(payout.state));
        }
        // A loan's advance is lent once it is paid out: canceling its payout would leave the
        // loan owed with its money back in the merchant's balance (docs/loans.md).
        if payout.method == PayoutMethod::Loan {
            return Err(ServiceError::Conflict {
                field: "id",
                message: "is a loan's payout: cancel the loan before it is paid out instead".into(),
            });
        }
        let change = self.change(&payout, PayoutState::Canceled, None)?;
        if self
            .payouts
            .move_payout(&change, reply_for(reply, &change.payout))
            .await
            .map_err(ServiceError::Store)?
        {
            return Ok(change.payout);
        }
        // It moved meanwhile (the rail took it): say where it went.
        let now = self.payout(who, id).await?;
        Err(refused(now.state))
    }

    /// One run of the rails: the schedules due today pay out, then test mode's sandbox bank
    /// answers every test payout (`run_sandbox_rail`), then the live rail, when there is one,
    /// hands live payouts to the bank and reads its answers (`run_ach_rail`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn run_rails(&self) -> Result<RailReport, StoreError> {
        let made = self.run_schedules().await?;
        let sandbox = self.run_sandbox_rail().await?;
        let live = match &self.ach {
            Some(rail) => self.run_ach_rail(rail).await?,
            None => RailReport::default(),
        };
        Ok(RailReport {
            made,
            sent: live.sent,
            paid: sandbox.paid + live.paid,
            failed: sandbox.failed + live.failed,
        })
    }
    /// `payout` moved to `to` (with `failure`, for a failed one) now: its new form, the journal
    /// the move posts and the event it sends.
    fn change(
        &self,
        payout: &Payout,
        to: PayoutState,
        failure: Option<ReturnCode>,
    ) -> Result<PayoutMove, ServiceError> {
        let now = self.clock.now();
        let journal = payout.journal_for(Some(payout.state), to, now);
        if journal.is_none() && to != PayoutState::InTransit {
            return Err(ServiceError::Conflict {
                field: "id",
                message: format!("cannot move from {} to {to}", payout.state),
            });
        }
        let moved = Payout {
            state: to,
            failure: failure.map(PayoutFailure::new),
            updated_on: now,
            ..payout.clone()
        };
        let event = match to {
            PayoutState::Paid => Some(EventData::PayoutPaid as fn(_) -> _),
            PayoutState::Failed => Some(EventData::PayoutFailed as fn(_) -> _),
            PayoutState::Canceled => Some(EventData::PayoutCanceled as fn(_) -> _),
            PayoutState::Pending | PayoutState::InTransit => None,
        }
        .map(|data| self.event(&moved, data));
        Ok(PayoutMove {
            payout: moved,
            from: payout.state,
            journal,
            event,
        })
    }

    /// The event `data` makes of `payout`, now.
    fn event(&self, payout: &Payout, data: fn(Box<Payout>) -> EventData) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: payout.platform_id.clone(),
            mode: payout.mode,
            created_on: payout.updated_on,
            data: data(Box::new(payout.clone())),
        }
    }
}

fn nothing_available() -> ServiceError {
    ServiceError::Conflict {
        field: "amount",
        message: "the merchant has nothing available to pay out".into(),
    }
}

fn unexpected(e: &ServiceError) -> StoreError {
    StoreError::Unexpected(e.to_string())
}

mod accounts;
mod ach_rail;
mod sandbox_rail;
mod schedules;
#[cfg(test)]
mod tests;

pub use ach_rail::AchRail;
