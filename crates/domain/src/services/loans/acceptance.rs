//! Accepting an offer (the merchant on its page, or the platform with the merchant's consent)
//! and paying its advance out.

use crate::Invalid;
use crate::auth::Principal;
use crate::dashboard::Secret;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{EventId, LoanId, PayoutId};
use crate::loan::{Acceptance, AcceptedBy, Loan, LoanState, accepted_text};
use crate::payout::{Payout, PayoutMethod, PayoutState};
use crate::ports::{Event, EventData};
use crate::scope::Scope;

use super::{Consent, LoanService, OfferPageError, ServiceError, refused};

impl LoanService {
    /// Accepts an offer for its merchant, with the consent the platform holds; then pays its
    /// advance out (`pay_out`). The loan as it then is.
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
        let accepted = self.accept(&loan, acceptance, reply).await?;
        Ok(self.pay_out_or_wait(accepted).await)
    }

    /// The offer a link opens, for its acceptance page.
    pub async fn offer_by_link(&self, token: &str) -> Result<Loan, OfferPageError> {
        let secret = Secret::presented(token).ok_or(OfferPageError::UnknownLink)?;
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

    /// Accepts the offer a link opens, by the merchant's `name` typed on the page, from
    /// `address`; then pays its advance out. The loan as it then is.
    pub async fn accept_by_link(
        &self,
        token: &str,
        name: &str,
        address: &str,
    ) -> Result<Loan, OfferPageError> {
        let name = accepted_text("name", name)?;
        let loan = self.offer_by_link(token).await?;
        let acceptance = Acceptance {
            by: AcceptedBy::Merchant,
            name,
            consent_reference: None,
            address: address.to_owned(),
            accepted_on: self.clock.now(),
        };
        let accepted = match self.accept(&loan, acceptance, None).await {
            Ok(accepted) => accepted,
            Err(ServiceError::Store(e)) => return Err(OfferPageError::Store(e)),
            Err(_) => return Err(OfferPageError::UnknownLink),
        };
        Ok(self.pay_out_or_wait(accepted).await)
    }

    async fn accept(
        &self,
        loan: &Loan,
        acceptance: Acceptance,
        reply: Option<&Recorder<'_, Loan>>,
    ) -> Result<Loan, ServiceError> {
        let mut after = self.moved(loan, LoanState::Accepted);
        after.acceptance = Some(acceptance);
        let change = self.change(loan, after, Vec::new());
        self.write(&change, reply_for(reply, &change.loan)).await?;
        tracing::info!(loan = %loan.id, "loan accepted");
        Ok(change.loan)
    }

    /// Pays an accepted loan's advance out; when it cannot yet (a live merchant without a US
    /// bank account, or the loan changed), it stays accepted for the review to pay later.
    async fn pay_out_or_wait(&self, accepted: Loan) -> Loan {
        match self.pay_out(&accepted).await {
            Ok(paid) => paid,
            Err(e) => {
                tracing::warn!(loan = %accepted.id, error = %e, "loan accepted, advance not paid out yet");
                accepted
            }
        }
    }

    /// Lends an accepted loan's advance and pays it out, in one SQL transaction: the
    /// `loan_advance` journal, a payout of method `loan` of the advance, `loan.paid_out` and
    /// `payout.created`.
    pub async fn pay_out(&self, loan: &Loan) -> Result<Loan, ServiceError> {
        if loan.state != LoanState::Accepted {
            return Err(refused(loan.state, "only an accepted loan is paid out"));
        }
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
        self.write(&change, None).await?;
        tracing::info!(loan = %loan.id, payout = ?change.loan.payout_id, "loan paid out");
        Ok(change.loan)
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
