//! Loans (docs/loans.md): offered by a platform, accepted by the merchant on its hosted page
//! or by the platform with the merchant's consent, paid out through a payout of method `loan`,
//! repaid from settlements (the settlement run withholds) or early, charged off by the operator.
//! Every change is written with its journals and events in one SQL transaction, and only if
//! the loan is still as it was read.

use std::sync::Arc;

use time::{Duration, OffsetDateTime};

use crate::Invalid;
use crate::auth::Principal;
use crate::dashboard::BearerSecret;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{EventId, LoanId, MerchantId};
use crate::loan::{Loan, LoanEvent, LoanNews, LoanRepayment, LoanState, LoanTerms};
use crate::page::{Page, PageRequest};
use crate::ports::{
    Changed, Clock, Event, EventData, Ids, LedgerStore, LoanChange, LoanFilter, LoanStore,
    MerchantStore, Offered, StoreError,
};

use super::{PayoutService, ServiceError};

mod acceptance;
mod repayment;

pub(crate) use repayment::{Repaying, repayment_change};
mod review;
#[cfg(test)]
mod tests;
mod underwriting;

pub use review::ReviewReport;

/// How long an offer lasts when the platform names no end.
pub const DEFAULT_OFFER_DAYS: i64 = 30;
/// The longest an offer may last.
pub const MAX_OFFER_DAYS: i64 = 90;

/// A loan offered through the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLoan {
    /// The merchant it is for; its currency is the loan's.
    pub merchant: MerchantId,
    /// The advance, fee, rate and minimum.
    pub terms: LoanTerms,
    /// Days the offer lasts: 1 to 90, 30 when `None`.
    pub offer_days: Option<i64>,
}

/// A loan just offered, with the link of its acceptance page: shown once, kept only by hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfferedLoan {
    /// The loan.
    pub loan: Loan,
    /// Its acceptance page, for the merchant.
    pub acceptance_url: String,
}

/// The merchant's consent the platform accepts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consent {
    /// The person who consented.
    pub name: String,
    /// The platform's reference to the consent it holds.
    pub reference: String,
}

/// Why the acceptance page cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OfferPageError {
    /// No offered loan has this link (unknown, or decided).
    #[error("this link is unknown, or its offer was already decided")]
    UnknownLink,
    /// The offer ended.
    #[error("this offer has expired")]
    Expired,
    /// The offer changed while it was accepted (nothing was written): open it again.
    #[error("the offer changed at the same time")]
    Busy,
    /// The form was refused (`name`, or `agree` not ticked); nothing was kept. The offer, to
    /// show again.
    #[error("{0}")]
    Refused(Invalid, Box<Loan>),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Offers, reads, accepts, cancels, pays out and repays loans.
#[derive(Clone)]
pub struct LoanService {
    loans: Arc<dyn LoanStore>,
    merchants: Arc<dyn MerchantStore>,
    ledger: Arc<dyn LedgerStore>,
    payouts: PayoutService,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    public_url: String,
}

impl std::fmt::Debug for LoanService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoanService").finish_non_exhaustive()
    }
}

impl LoanService {
    /// The service over the loans, the merchants they are for, the ledger the sandbox
    /// underwriter reads their volume from, the payouts that pay their advances, the clock and
    /// ids.
    pub fn new(
        loans: Arc<dyn LoanStore>,
        merchants: Arc<dyn MerchantStore>,
        ledger: Arc<dyn LedgerStore>,
        payouts: PayoutService,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            loans,
            merchants,
            ledger,
            payouts,
            clock,
            ids,
            public_url: super::DEFAULT_PUBLIC_URL.to_owned(),
        }
    }

    /// Acceptance links start with `url`, where merchants reach Holdfast.
    #[must_use]
    pub fn with_public_url(mut self, url: &str) -> Self {
        url.trim_end_matches('/').clone_into(&mut self.public_url);
        self
    }

    /// Offers `new` to its merchant (in the merchant's currency), with `loan.created`. Refused
    /// while the merchant has a loan that is not final.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn offer(
        &self,
        who: &Principal,
        new: NewLoan,
        reply: Option<&Recorder<'_, OfferedLoan>>,
    ) -> Result<OfferedLoan, ServiceError> {
        let days = new.offer_days.unwrap_or(DEFAULT_OFFER_DAYS);
        if !(1..=MAX_OFFER_DAYS).contains(&days) {
            return Err(Invalid::new("offerDays", "must be 1 to 90").into());
        }
        let merchant = self
            .merchants
            .get_merchant(&who.scope, &new.merchant)
            .await
            .map_err(ServiceError::Store)?
            .ok_or_else(|| Invalid::new("merchantId", "no such merchant"))?;
        let now = self.clock.now();
        let secret = BearerSecret::new(self.ids.key_secret());
        let loan = Loan {
            id: LoanId::from_suffix(&self.ids.next_id()),
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            merchant_id: merchant.id,
            currency: merchant.details.currency,
            state: LoanState::Offered,
            terms: new.terms,
            repaid: 0,
            offer_expires_on: now + Duration::days(days),
            link_hash: Some(secret.hash()),
            acceptance: None,
            payout_id: None,
            paid_out_on: None,
            created_on: now,
            updated_on: now,
        };
        let offered = OfferedLoan {
            acceptance_url: format!("{}/loans/{}", self.public_url, secret.expose()),
            loan,
        };
        let event = self.news(&offered.loan, LoanEvent::Created);
        match self
            .loans
            .offer_loan(&offered.loan, &event, reply_for(reply, &offered))
            .await
            .map_err(ServiceError::Store)?
        {
            Offered::Offered => {
                tracing::info!(loan = %offered.loan.id, merchant = %offered.loan.merchant_id, "loan offered");
                Ok(offered)
            }
            Offered::AlreadyOpen => Err(ServiceError::Conflict {
                field: "merchantId",
                message: "the merchant already has a loan offered, accepted or being repaid".into(),
            }),
        }
    }

    /// One loan of the caller's platform and mode.
    pub async fn get(&self, who: &Principal, id: &LoanId) -> Result<Loan, ServiceError> {
        self.loans
            .get_loan(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("loan"))
    }

    /// The caller's loans that `filter` lets through, newest first.
    pub async fn list(
        &self,
        who: &Principal,
        filter: &LoanFilter,
        page: &PageRequest,
    ) -> Result<Page<Loan>, ServiceError> {
        self.loans
            .list_loans(&who.scope, filter, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// The repayments of one of the caller's loans, newest first.
    pub async fn repayments(
        &self,
        who: &Principal,
        id: &LoanId,
        page: &PageRequest,
    ) -> Result<Page<LoanRepayment>, ServiceError> {
        Ok(self.with_repayments(who, id, page).await?.1)
    }

    /// One of the caller's loans and a page of its repayments, newest first (the dashboard's
    /// loan page).
    pub async fn with_repayments(
        &self,
        who: &Principal,
        id: &LoanId,
        page: &PageRequest,
    ) -> Result<(Loan, Page<LoanRepayment>), ServiceError> {
        let loan = self.get(who, id).await?;
        let repayments = self
            .loans
            .repayments(&who.scope, id, page)
            .await
            .map_err(ServiceError::Store)?;
        Ok((loan, repayments))
    }

    /// Cancels a loan before its advance is paid out, with `loan.canceled`.
    #[tracing::instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn cancel(
        &self,
        who: &Principal,
        id: &LoanId,
        reply: Option<&Recorder<'_, Loan>>,
    ) -> Result<Loan, ServiceError> {
        let loan = self.get(who, id).await?;
        if loan.state.to(LoanState::Canceled).is_none() {
            return Err(refused(
                loan.state,
                "only an offered or accepted loan can be canceled",
            ));
        }
        let after = self.moved(&loan, LoanState::Canceled);
        let change = self.change(&loan, after, Vec::new());
        self.write(&change, reply_for(reply, &change.loan)).await?;
        Ok(change.loan)
    }

    /// `loan` moved to `to` now; a decided offer's link stops working.
    fn moved(&self, loan: &Loan, to: LoanState) -> Loan {
        Loan {
            state: to,
            link_hash: None,
            updated_on: self.clock.now(),
            ..loan.clone()
        }
    }

    /// The change from `loan` to `after`, posting `journals`, with the event its move sends.
    fn change(
        &self,
        loan: &Loan,
        after: Loan,
        journals: Vec<crate::ledger::Journal>,
    ) -> LoanChange {
        let events = (after.state != loan.state)
            .then(|| self.news(&after, LoanEvent::of_move(loan.state, after.state)))
            .into_iter()
            .collect();
        LoanChange {
            loan: after,
            from: loan.state,
            read_on: loan.updated_on,
            journals,
            payout: None,
            repayment: None,
            events,
        }
    }

    async fn write(
        &self,
        change: &LoanChange,
        reply: Option<crate::idempotency::KeyedAnswer>,
    ) -> Result<(), ServiceError> {
        match self
            .loans
            .change_loan(change, reply)
            .await
            .map_err(ServiceError::Store)?
        {
            Changed::Changed => Ok(()),
            Changed::Moved | Changed::Short { .. } => Err(busy()),
        }
    }

    fn news(&self, loan: &Loan, event: LoanEvent) -> Event {
        self.event(
            loan,
            EventData::Loan(Box::new(LoanNews {
                event,
                loan: loan.clone(),
            })),
        )
    }

    fn event(&self, loan: &Loan, data: EventData) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: loan.platform_id.clone(),
            mode: loan.mode,
            created_on: loan.updated_on,
            data,
        }
    }

    fn now(&self) -> OffsetDateTime {
        self.clock.now()
    }
}

fn refused(state: LoanState, rule: &str) -> ServiceError {
    ServiceError::Conflict {
        field: "id",
        message: format!("is {state}: {rule}"),
    }
}

/// The loan changed while the request was answered: nothing was written, and the same request
/// may be sent again.
fn busy() -> ServiceError {
    ServiceError::Busy("the loan changed at the same time; send the request again".into())
}
