//! Accepting an offer (the merchant on its page, or the platform with the merchant's consent)
//! and paying its advance out.

use crate::Invalid;
use crate::auth::Principal;
use crate::dashboard::BearerSecret;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{EventId, LoanId, PayoutId};
use crate::loan::{Acceptance, AcceptedBy, Loan, LoanState, accepted_text};
use crate::payout::{Payout, PayoutMethod, PayoutState};
use crate::ports::{Event, EventData};
use crate::scope::Scope;

use super::{Consent, LoanService, OfferPageError, ServiceError, refused};

impl LoanService {
    /// Accepts an offer for its merchant, with the consent the platform holds, and pays its
    /// advance out in the same SQL transaction (`accept`). The loan as it then is.
    #[tracing::instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn accept_for_merchant(
        &self,
        who: &Principal,
        id: &LoanId,
        consent: &Consent,
        address: &str,
        reply: Option<&Recorder<'_, Loan>>,
    ) -> Result<Loan, ServiceError> {
        let name = accepted_text("consent.name", &consent.name)?;
        let reference = accepted_text("consent.reference", &consent.reference)?;
        let loan = self.get(who, id).await?;
        self.offer_is_open(&loan)?;
        let acceptance = Acceptance {
            by: AcceptedBy::Platform,
            name,
            consent_reference: Some(reference),
            address: address.to_owned(),
            accepted_on: self.clock.now(),
        };
        self.accept(&loan, acceptance, reply).await
    }

    /// The offer a link opens, for its acceptance page.
    pub async fn offer_by_link(&self, token: &str) -> Result<Loan, OfferPageError> {
        let secret = BearerSecret::presented(token).ok_or(OfferPageError::UnknownLink)?;
        let loan = self
            .loans
            .loan_by_link(&secret.hash())
            .await?
            .filter(|loan| loan.state == LoanState::Offered)
            .ok_or(OfferPageError::UnknownLink)?;
        if loan.offer_expires_on <= self.clock.now() {
            return Err(OfferPageError::Expired);
        }
        Ok(loan)
    }

    /// Accepts the offer a link opens, by the merchant's `name` typed on the page with the
    /// terms `agreed` to, from `address`, and pays its advance out (`accept`). The loan as it
    /// then is; a name that is not one, or terms not agreed to, are `Refused` with the offer.
    pub async fn accept_by_link(
        &self,
        token: &str,
        name: &str,
        agreed: bool,
        address: &str,
    ) -> Result<Loan, OfferPageError> {
        let loan = self.offer_by_link(token).await?;
        let name = if agreed {
            accepted_text("name", name)
        } else {
            Err(Invalid::new("agree", "must be ticked to accept the terms"))
        };
        let name = match name {
            Ok(name) => name,
            Err(invalid) => return Err(OfferPageError::Refused(invalid, Box::new(loan))),
        };
        let acceptance = Acceptance {
            by: AcceptedBy::Merchant,
            name,
            consent_reference: None,
            address: address.to_owned(),
            accepted_on: self.clock.now(),
        };
        match self.accept(&loan, acceptance, None).await {
            Ok(accepted) => Ok(accepted),
            Err(ServiceError::Store(e)) => Err(OfferPageError::Store(e)),
            // Another acceptance or the review moved it meanwhile: not a guess at a link.
            Err(ServiceError::Busy(_)) => Err(OfferPageError::Busy),
            Err(_) => Err(OfferPageError::UnknownLink),
        }
    }

    /// Accepts `loan` and lends and pays out its advance, in one SQL transaction with `reply`
    /// (so a replay answers what the request did): `loan.accepted`, then `pay_out`'s change.
    /// When the advance cannot be paid yet (a live merchant without a US bank account), the
    /// loan is accepted alone, for the review to pay out once it can.
    async fn accept(
        &self,
        loan: &Loan,
        acceptance: Acceptance,
        reply: Option<&Recorder<'_, Loan>>,
    ) -> Result<Loan, ServiceError> {
        let mut accepted = self.moved(loan, LoanState::Accepted);
        accepted.acceptance = Some(acceptance);
        let accepted_news = self.news(&accepted, crate::loan::LoanEvent::Accepted);
        let change = match self.payout_change(&accepted).await {
            Ok(mut paid) => {
                paid.from = loan.state;
                paid.read_on = loan.updated_on;
                paid.events.insert(0, accepted_news);
                paid
            }
            Err(ServiceError::Store(e)) => return Err(ServiceError::Store(e)),
            Err(e) => {
                tracing::warn!(loan = %loan.id, error = %e, "loan accepted, advance not paid out yet");
                self.change(loan, accepted, Vec::new())
            }
        };
        self.write(&change, reply_for(reply, &change.loan)).await?;
        tracing::info!(loan = %loan.id, state = change.loan.state.as_str(), "loan accepted");
        Ok(change.loan)
    }

    /// Lends an accepted loan's advance and pays it out, in one SQL transaction: the
    /// `loan_advance` journal, a payout of method `loan` of the advance, `loan.paid_out` and
    /// `payout.created`.
    pub(super) async fn pay_out(&self, loan: &Loan) -> Result<Loan, ServiceError> {
        if loan.state != LoanState::Accepted {
            return Err(refused(loan.state, "only an accepted loan is paid out"));
        }
        let change = self.payout_change(loan).await?;
        self.write(&change, None).await?;
        tracing::info!(loan = %loan.id, payout = ?change.loan.payout_id, "loan paid out");
        Ok(change.loan)
    }

    /// The change that pays out accepted `loan`'s advance to its merchant's bank account;
    /// refused when the merchant has none the payout can go to.
    async fn payout_change(&self, loan: &Loan) -> Result<crate::ports::LoanChange, ServiceError> {
        let scope = Scope::new(loan.platform_id.clone(), loan.mode);
        let (bank_form, bank_last4) = self
            .payouts
            .bank_account(&scope, &loan.merchant_id, loan.currency)
            .await?;
        let now = self.clock.now();
        let payout = Payout {
            id: PayoutId::from_suffix(&self.ids.next_id()),
            platform_id: loan.platform_id.clone(),
            mode: loan.mode,
            merchant_id: loan.merchant_id.clone(),
            currency: loan.currency,
            amount: loan.terms.advance,
            state: PayoutState::Pending,
            method: PayoutMethod::Loan,
            bank_last4,
            bank_form,
            trace_number: None,
            failure: None,
            created_on: now,
            updated_on: now,
        };
        let journals = loan
            .advance_journal(now)
            .zip(payout.journal_for(None, PayoutState::Pending, now))
            .map(|(advance, paid)| vec![advance, paid])
            .ok_or_else(|| Invalid::new("advance", "is out of range"))?;
        let mut after = self.moved(loan, LoanState::PaidOut);
        after.payout_id = Some(payout.id.clone());
        after.paid_out_on = Some(now);
        let mut change = self.change(loan, after, journals);
        change.events.push(Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: payout.platform_id.clone(),
            mode: payout.mode,
            created_on: now,
            data: EventData::PayoutCreated(Box::new(payout.clone())),
        });
        change.payout = Some(payout);
        Ok(change)
    }

    fn offer_is_open(&self, loan: &Loan) -> Result<(), ServiceError> {
        if loan.state != LoanState::Offered {
            return Err(refused(loan.state, "only an offered loan can be accepted"));
        }
        if loan.offer_expires_on <= self.clock.now() {
            return Err(ServiceError::Conflict {
                field: "id",
                message: "the offer has expired".into(),
            });
        }
        Ok(())
    }
}
