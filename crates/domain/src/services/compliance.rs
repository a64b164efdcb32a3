//! PCI compliance of approved merchants: the current form, its questionnaire (from the
//! merchant's own traffic), and its attestation by a named signer.

use std::net::IpAddr;
use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::compliance::{Attestation, ComplianceForm, ComplianceStatus, RENEWED_AFTER, SaqType};
use crate::ids::{ComplianceFormId, EventId, MerchantId};
use crate::ports::{Clock, ComplianceStore, Ids, MerchantStore};
use crate::text::bounded_text;

use super::ServiceError;

/// A merchant's current compliance form, with the questionnaire it attests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentCompliance {
    /// The form, its status as of now (a pending form past its due date is overdue).
    pub form: ComplianceForm,
    /// The questionnaire: the one attested, or else the one the merchant's traffic calls for.
    pub saq_type: SaqType,
}

/// Who signs an attestation, as they typed it, and whether they agreed.
#[derive(Debug, Clone)]
pub struct Signer {
    /// Their full name.
    pub name: String,
    /// Their title.
    pub title: String,
    /// Whether they ticked the agreement.
    pub agreed: bool,
    /// The address the attestation came from.
    pub address: Option<IpAddr>,
}

/// Reads and attests merchants' compliance forms.
#[derive(Clone)]
pub struct ComplianceService {
    store: Arc<dyn ComplianceStore>,
    merchants: Arc<dyn MerchantStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl std::fmt::Debug for ComplianceService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComplianceService").finish_non_exhaustive()
    }
}

impl ComplianceService {
    /// A service over the compliance and merchant stores.
    pub fn new(
        store: Arc<dyn ComplianceStore>,
        merchants: Arc<dyn MerchantStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            store,
            merchants,
            clock,
            ids,
        }
    }

    /// The merchant's current form: `NotFound("merchant")` for a merchant not in the caller's
    /// mode, `NotFound("compliance form")` before its onboarding is approved.
    pub async fn current(
        &self,
        who: &Principal,
        merchant_id: &MerchantId,
    ) -> Result<CurrentCompliance, ServiceError> {
        let merchant = self
            .merchants
            .get_merchant(&who.scope, merchant_id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("merchant"))?;
        let mut form = self
            .store
            .current_compliance(&who.scope, merchant_id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("compliance form"))?;
        if form.is_overdue_at(self.clock.now()) {
            form.status = ComplianceStatus::Overdue;
        }
        let saq_type = form.attestation.as_ref().map_or_else(
            || SaqType::for_traffic(merchant.raw_cards_on.is_some()),
            |a| a.saq_type,
        );
        Ok(CurrentCompliance { form, saq_type })
    }

    /// The yearly upkeep, as of `as_of` (now unless given): pending forms past due become
    /// `overdue`; a merchant whose latest form is a year old is issued the next, dated on the
    /// anniversary; an approved merchant with no form (approved before compliance existed) is
    /// issued its first. How many became overdue, and how many forms were issued.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn maintain(
        &self,
        as_of: Option<time::OffsetDateTime>,
    ) -> Result<(u64, u64), ServiceError> {
        const BATCH: u32 = 500;
        let as_of = as_of.unwrap_or_else(|| self.clock.now());
        let mut overdue = 0;
        for form in self
            .store
            .pending_due(as_of, BATCH)
            .await
            .map_err(ServiceError::Store)?
        {
            let late = ComplianceForm {
                status: ComplianceStatus::Overdue,
                ..form
            };
            let event = EventId::from_suffix(&self.ids.next_id());
            if self
                .store
                .mark_overdue(&late, &event)
                .await
                .map_err(ServiceError::Store)?
            {
                overdue += 1;
            }
        }
        let mut issued = 0;
        // A year after the last form, on its anniversary: two maintainers issue it once.
        let renewals = self
            .store
            .renewable(as_of - RENEWED_AFTER, BATCH)
            .await
            .map_err(ServiceError::Store)?
            .into_iter()
            .map(|last| {
                let at = last.issued_on + RENEWED_AFTER;
                (last.platform_id, last.mode, last.merchant_id, at)
            });
        // Merchants approved before compliance existed get their first form now.
        let first = self
            .store
            .unissued(BATCH)
            .await
            .map_err(ServiceError::Store)?
            .into_iter()
            .map(|m| (m.platform_id, m.mode, m.id, as_of));
        for (platform, mode, merchant, at) in renewals.chain(first) {
            let form = ComplianceForm::issue(
                ComplianceFormId::from_suffix(&self.ids.next_id()),
                platform,
                mode,
                merchant,
                at,
            );
            let event = EventId::from_suffix(&self.ids.next_id());
            if self
                .store
                .issue_compliance(&form, &event)
                .await
                .map_err(ServiceError::Store)?
            {
                issued += 1;
            }
        }
        Ok((overdue, issued))
    }

    /// Attests the merchant's current form as `signer`, who must name themselves and their
    /// title and agree; `Conflict` when it is already attested.
    pub async fn attest(
        &self,
        who: &Principal,
        merchant_id: &MerchantId,
        signer: Signer,
    ) -> Result<CurrentCompliance, ServiceError> {
        let name = bounded_text("name", &signer.name, 1, 200)?;
        let title = bounded_text("title", &signer.title, 1, 200)?;
        if !signer.agreed {
            return Err(Invalid::new(
                "agreed",
                "must be true: the signer agrees that the merchant meets every requirement listed",
            )
            .into());
        }
        let current = self.current(who, merchant_id).await?;
        if current.form.status == ComplianceStatus::Attested {
            return Err(ServiceError::Conflict {
                field: "merchantId",
                message: "the current compliance form is already attested".into(),
            });
        }
        let form = ComplianceForm {
            status: ComplianceStatus::Attested,
            attestation: Some(Attestation {
                name,
                title,
                on: self.clock.now(),
                address: signer.address,
                saq_type: current.saq_type,
            }),
            ..current.form
        };
        let event = EventId::from_suffix(&self.ids.next_id());
        if !self
            .store
            .attest_compliance(&form, &event)
            .await
            .map_err(ServiceError::Store)?
        {
            return Err(ServiceError::Conflict {
                field: "merchantId",
                message: "the current compliance form is already attested".into(),
            });
        }
        Ok(CurrentCompliance {
            saq_type: current.saq_type,
            form,
        })
    }
}
