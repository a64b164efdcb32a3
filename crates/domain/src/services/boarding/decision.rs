//! Underwriting's decision on a submitted form: the sandbox's at once in test mode, an operator's
//! otherwise, and what an approval makes.

use super::{BoardingService, TAX_ID, vault_context};
use crate::auth::Principal;
use crate::boarding::form::{BoardingForm, FormStatus};
use crate::boarding::underwriting::{self, Decision};
use crate::compliance::ComplianceForm;
use crate::ids::{BoardingFormId, ComplianceFormId, PlatformId};
use crate::mode::Mode;
use crate::ports::{FormWrite, Guard, StoreError};
use crate::scope::Scope;
use crate::services::ServiceError;

impl BoardingService {
    /// Test mode: the sandbox underwriter decides at once, by the test tax id.
    pub(super) async fn sandbox_decides(
        &self,
        form: BoardingForm,
    ) -> Result<BoardingForm, ServiceError> {
        let tax_id = form
            .tax_id
            .as_ref()
            .map(|v| self.vault.open(&vault_context(&form.id, TAX_ID), &v.sealed))
            .transpose()
            .map_err(|e| ServiceError::Store(StoreError::Unexpected(e.to_string())))?
            .unwrap_or_default();
        let decision = underwriting::sandbox(&tax_id);
        self.decide(form, decision).await
    }

    /// Records underwriting's decision of a submitted form: the form's status, the merchant's
    /// (`merchant.updated`), the fields asked about and the reason. `Conflict` unless the form
    /// is submitted.
    pub(super) async fn decide(
        &self,
        form: BoardingForm,
        decision: Decision,
    ) -> Result<BoardingForm, ServiceError> {
        let undecidable = |status: FormStatus| ServiceError::Conflict {
            field: "id",
            message: format!("the form is {status}: only a submitted form can be decided"),
        };
        if form.status != FormStatus::Submitted {
            return Err(undecidable(form.status));
        }
        let decision = decision.checked()?;
        let (fields, reason) = match &decision {
            Decision::Approve => (Vec::new(), None),
            Decision::Decline { reason } => (Vec::new(), Some(reason.clone())),
            Decision::RequestInformation { fields, reason } => {
                (fields.clone(), Some(reason.clone()))
            }
        };
        let decided = BoardingForm {
            status: decision.form_status(),
            requested_fields: fields,
            reason,
            updated_on: self.clock.now(),
            ..form
        };
        // Approval issues the merchant's first compliance form, with the decision.
        let compliance = (decision == Decision::Approve).then(|| {
            let issued = ComplianceForm::issue(
                ComplianceFormId::from_suffix(&self.ids.next_id()),
                decided.platform_id.clone(),
                decided.mode,
                decided.merchant_id.clone(),
                decided.updated_on,
            );
            (issued, self.event_id())
        });
        let write = FormWrite {
            merchant_status: Some((decision.merchant_status(), self.event_id())),
            compliance,
            guard: Guard::Status(FormStatus::Submitted),
            ..FormWrite::default()
        };
        if !self.write(&decided, write).await? {
            return Err(ServiceError::Conflict {
                field: "id",
                message: "the form was decided by another request at the same time".into(),
            });
        }
        Ok(decided)
    }

    /// A dashboard admin's decision of a submitted form of the caller's platform and mode.
    #[tracing::instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn decide_in(
        &self,
        who: &Principal,
        id: &BoardingFormId,
        decision: Decision,
    ) -> Result<BoardingForm, ServiceError> {
        let form = self.get(who, id).await?;
        self.decide(form, decision).await
    }

    /// An operator's decision of a submitted form of `platform`, in either mode.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn operator_decides(
        &self,
        platform: &PlatformId,
        id: &BoardingFormId,
        decision: Decision,
    ) -> Result<BoardingForm, ServiceError> {
        for mode in [Mode::Live, Mode::Test] {
            let scope = Scope::new(platform.clone(), mode);
            let found = self
                .forms
                .get_form(&scope, id)
                .await
                .map_err(ServiceError::Store)?;
            if let Some(form) = found {
                return self.decide(form, decision).await;
            }
        }
        Err(ServiceError::NotFound("boarding form"))
    }
}
