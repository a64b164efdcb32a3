//! Payouts (docs/money.md): a merchant's available money taken to in transit and handed to its
//! bank, which pays it or sends it back. Every move posts its journal and announces itself in
//! one SQL transaction with the payout's new state.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::boarding::form::BoardingForm;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{BoardingFormId, EventId, MerchantId, PayoutId};
use crate::merchant::Currency;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::payout::{
    MerchantSchedule, Payout, PayoutFailure, PayoutMethod, PayoutSchedule, PayoutState, ReturnCode,
    SANDBOX_PAYING_ACCOUNT, SandboxOutcome, sandbox_outcome,
};
use crate::ports::{
    AnnouncePayout, BoardingStore, CardVault, Clock, Event, EventData, Ids, LedgerStore, Made,
    MerchantStore, PayoutFilter, PayoutMove, PayoutStore, ScheduledRun, StoreError,
};
use crate::scope::Scope;

use super::ServiceError;
use super::boarding::{BANK_ACCOUNT, vault_context};

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

/// The last four digits the sandbox paying account shows.
fn sandbox_last4() -> String {
    SANDBOX_PAYING_ACCOUNT[SANDBOX_PAYING_ACCOUNT.len() - 4..].to_owned()
}

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

    /// The bank account a payout of `merchant` in `currency` goes to: its newest approved
    /// boarding form's and the account's last four digits (in test mode, without one, the
    /// sandbox bank's paying account). Refused in live mode unless the live rail can pay it.
    pub async fn bank_account(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        currency: Currency,
    ) -> Result<(Option<BoardingFormId>, String), ServiceError> {
        let form = self
            .forms
            .payout_account(scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .filter(|form| form.bank_account.is_some());
        if scope.mode == Mode::Live {
            live_rail_takes(currency, form.as_ref())?;
        }
        Ok(
            match form.and_then(|form| form.bank_account.map(|account| (form.id, account.last4))) {
                Some((form, last4)) => (Some(form), last4),
                None => (None, sandbox_last4()),
            },
        )
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

    /// Pays out every schedule due now, in one SQL transaction: how many payouts it made.
    pub async fn run_schedules(&self) -> Result<u64, StoreError> {
        let now = self.clock.now();
        let run = ScheduledRun {
            now,
            id_prefix: self.ids.next_id().chars().take(16).collect(),
        };
        let announce = Arc::new(Announcer {
            ids: self.ids.clone(),
        });
        let made = self.payouts.pay_out_scheduled(&run, announce).await?;
        if made > 0 {
            tracing::info!(made, "scheduled payouts made");
        }
        Ok(made)
    }

    /// `merchant`'s payout schedule (manual when it has none set).
    pub async fn schedule(
        &self,
        who: &Principal,
        merchant: &MerchantId,
    ) -> Result<MerchantSchedule, ServiceError> {
        self.merchant_exists(who, merchant).await?;
        let schedule = self
            .payouts
            .schedule(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .unwrap_or(PayoutSchedule::MANUAL);
        Ok(MerchantSchedule::of(merchant.clone(), schedule))
    }

    /// Sets `merchant`'s payout schedule.
    pub async fn set_schedule(
        &self,
        who: &Principal,
        merchant: &MerchantId,
        schedule: PayoutSchedule,
        reply: Option<&Recorder<'_, MerchantSchedule>>,
    ) -> Result<MerchantSchedule, ServiceError> {
        self.merchant_exists(who, merchant).await?;
        let shown = MerchantSchedule::of(merchant.clone(), schedule);
        self.payouts
            .set_schedule(
                &who.scope,
                merchant,
                schedule,
                self.clock.now(),
                reply_for(reply, &shown),
            )
            .await
            .map_err(ServiceError::Store)?;
        Ok(shown)
    }

    async fn merchant_exists(
        &self,
        who: &Principal,
        merchant: &MerchantId,
    ) -> Result<(), ServiceError> {
        self.merchants
            .get_merchant(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .map(drop)
            .ok_or(ServiceError::NotFound("merchant"))
    }

    /// Hands every test payout made by now to the sandbox bank, which pays it or returns it at
    /// once by its account number (`SANDBOX_ACCOUNTS`). Those a stopped run left in transit
    /// are finished first: the sandbox bank's answer is never late, so theirs was lost.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn run_sandbox_rail(&self) -> Result<RailReport, StoreError> {
        let now = self.clock.now();
        let mut report = RailReport::default();
        for state in [PayoutState::InTransit, PayoutState::Pending] {
            let mut after = None;
            loop {
                let batch = self
                    .payouts
                    .payouts_to_hand_over(Mode::Test, state, now, after.clone(), BATCH)
                    .await?;
                let full = batch.len() == BATCH as usize;
                after = batch.last().map(|p| (p.created_on, p.id.clone()));
                for payout in batch {
                    let id = payout.id.clone();
                    match self.pay_in_sandbox(payout).await {
                        Ok(Some(SandboxOutcome::Paid)) => report.paid += 1,
                        Ok(Some(SandboxOutcome::Returned(_))) => report.failed += 1,
                        Ok(None) => {}
                        // One payout whose move cannot be written must not hold up every other
                        // (runs read oldest first): it is named, left, and tried next run.
                        Err(e) => {
                            tracing::error!(payout = %id, error = %e, "payout left for an operator");
                        }
                    }
                }
                if !full {
                    break;
                }
            }
        }
        if report != RailReport::default() {
            tracing::info!(
                paid = report.paid,
                failed = report.failed,
                "sandbox bank run"
            );
        }
        Ok(report)
    }

    /// One payout through the sandbox bank: to in transit (unless it is there), then paid or
    /// failed. `None` when it moved meanwhile (canceled, or taken by another worker), or its
    /// account does not open (named in the log and left where it is: one payout the rail
    /// cannot take must not hold up every other).
    async fn pay_in_sandbox(&self, payout: Payout) -> Result<Option<SandboxOutcome>, StoreError> {
        let account = match self.account_number(&payout).await {
            Ok(account) => account,
            Err(StoreError::Unexpected(why)) => {
                tracing::error!(payout = %payout.id, error = %why, "payout left for an operator");
                return Ok(None);
            }
            Err(other) => return Err(other),
        };
        let outcome = sandbox_outcome(&account);
        let handed = if payout.state == PayoutState::InTransit {
            payout
        } else {
            let handed = self
                .change(&payout, PayoutState::InTransit, None)
                .map_err(|e| unexpected(&e))?;
            if !self.payouts.move_payout(&handed, None).await? {
                return Ok(None);
            }
            handed.payout
        };
        let (to, failure) = match outcome {
            SandboxOutcome::Paid => (PayoutState::Paid, None),
            SandboxOutcome::Returned(code) => (PayoutState::Failed, Some(code)),
        };
        let ended = self
            .change(&handed, to, failure)
            .map_err(|e| unexpected(&e))?;
        Ok(self
            .payouts
            .move_payout(&ended, None)
            .await?
            .then_some(outcome))
    }

    /// The account number a payout goes to, opened from its boarding form.
    async fn account_number(&self, payout: &Payout) -> Result<String, StoreError> {
        let Some(form) = &payout.bank_form else {
            return Ok(SANDBOX_PAYING_ACCOUNT.to_owned());
        };
        let scope = Scope::new(payout.platform_id.clone(), payout.mode);
        let sealed = self
            .forms
            .get_form(&scope, form)
            .await?
            .and_then(|form| form.bank_account)
            .ok_or_else(|| StoreError::Unexpected(format!("{form}: no bank account")))?;
        self.vault
            .open(&vault_context(form, BANK_ACCOUNT), &sealed.sealed)
            .map_err(|e| StoreError::Unexpected(format!("{form}: bank account: {e}")))
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

/// Each scheduled payout's `payout.created`, stamped with its time.
struct Announcer {
    ids: Arc<dyn Ids>,
}

impl AnnouncePayout for Announcer {
    fn event_for(&self, payout: &Payout) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: payout.platform_id.clone(),
            mode: payout.mode,
            created_on: payout.created_on,
            data: EventData::PayoutCreated(Box::new(payout.clone())),
        }
    }
}

/// Refused unless the live rail can pay a payout in `currency` to `form`'s account: ACH pays
/// US accounts, in USD.
fn live_rail_takes(currency: Currency, form: Option<&BoardingForm>) -> Result<(), ServiceError> {
    let refused = |field, message: &str| {
        Err(ServiceError::Conflict {
            field,
            message: message.into(),
        })
    };
    if currency != Currency::USD {
        return refused("currency", "live payouts go by ACH, in USD only");
    }
    match form {
        None => refused(
            "merchantId",
            "has no bank account: its boarding form must be approved first",
        ),
        Some(form) if form.answers.routing_number.is_none() => refused(
            "merchantId",
            "its bank account is not a US account: live payouts go by ACH to US accounts only",
        ),
        Some(_) => Ok(()),
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

mod ach_rail;
#[cfg(test)]
mod tests;

pub use ach_rail::AchRail;
