//! The hosted form's side: opening it by its link, saving and submitting answers, secrets sealed
//! before they are kept.

use super::{BoardingService, PageError, TAX_ID, vault_context};
use crate::Invalid;
use crate::boarding::OnboardingStatus;
use crate::boarding::answers::{self};
use crate::boarding::checks::last4;
use crate::boarding::form::{BoardingForm, FormStatus, SealedValue, Submission};
use crate::dashboard::BearerSecret;
use crate::ids::BoardingFormId;
use crate::mode::Mode;
use crate::ports::{FormWrite, Guard};
use crate::services::ServiceError;
use crate::text::bounded_text;
use std::collections::BTreeMap;
use std::net::IpAddr;

impl BoardingService {
    /// The form a link opens, if it still works.
    pub async fn open(&self, link: &str) -> Result<BoardingForm, PageError> {
        let secret = BearerSecret::presented(link).ok_or(PageError::UnknownLink)?;
        let form = self
            .forms
            .form_by_link(&secret.hash())
            .await
            .map_err(ServiceError::Store)?
            .ok_or(PageError::UnknownLink)?;
        if !form.link_works_at(self.clock.now()) {
            return Err(PageError::Expired);
        }
        Ok(form)
    }

    /// The form a link opens, while it can still be changed.
    pub(super) async fn editable(&self, link: &str) -> Result<BoardingForm, PageError> {
        let form = self.open(link).await?;
        if form.status.is_editable() {
            Ok(form)
        } else {
            Err(PageError::Closed(Box::new(form)))
        }
    }

    /// Why a write lost to another made meanwhile (another window saved, submitted, or a new
    /// link was issued), with the form as it now is.
    pub(super) async fn changed_meanwhile(&self, link: &str) -> PageError {
        match self.editable(link).await {
            Ok(form) => PageError::Refused(
                vec![Invalid::new(
                    "form",
                    "was changed at the same time elsewhere; check the answers and save again",
                )],
                Box::new(form),
            ),
            Err(other) => other,
        }
    }

    pub(super) fn seal(
        &self,
        form: &BoardingFormId,
        what: &str,
        value: Option<String>,
    ) -> Option<SealedValue> {
        value.map(|v| SealedValue {
            sealed: self.vault.seal(&vault_context(form, what), &v),
            last4: last4(&v),
        })
    }

    /// Writes the form as `write` says; whether its guard still held.
    pub(super) async fn write(
        &self,
        form: &BoardingForm,
        write: FormWrite,
    ) -> Result<bool, ServiceError> {
        self.forms
            .write_form(form, write)
            .await
            .map_err(ServiceError::Store)
    }

    /// Saves what the page sent: every field checked, nothing kept if any is refused; answers
    /// left empty keep what an earlier visit saved. The merchant is `in_progress` from the
    /// first save (`merchant.updated`).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn save(
        &self,
        link: &str,
        typed: &BTreeMap<String, String>,
    ) -> Result<BoardingForm, PageError> {
        let current = self.editable(link).await?;
        let now = self.clock.now();
        let (answers, secrets) = match answers::check(typed, now, current.answers.country) {
            Ok(checked) => checked,
            Err(refused) => return Err(PageError::Refused(refused, Box::new(current))),
        };
        // Another country's tax id and bank account follow another country's rules: they are
        // dropped unless typed again.
        let same_country = answers.country.is_none() || answers.country == current.answers.country;
        let kept = |sealed: &Option<SealedValue>| sealed.clone().filter(|_| same_country);
        let id = &current.id;
        let form = BoardingForm {
            answers: current.answers.merged(answers),
            tax_id: self
                .seal(id, TAX_ID, secrets.tax_id)
                .or_else(|| kept(&current.tax_id)),
            bank_account: self
                .seal(id, super::BANK_ACCOUNT, secrets.bank_account)
                .or_else(|| kept(&current.bank_account)),
            updated_on: now,
            ..current.clone()
        };
        let status = match current.status {
            FormStatus::NeedsInformation => OnboardingStatus::NeedsInformation,
            _ => OnboardingStatus::InProgress,
        };
        let write = FormWrite {
            merchant_status: Some((status, self.event_id())),
            guard: Guard::Unchanged(current.status, current.updated_on),
            ..FormWrite::default()
        };
        if !self.write(&form, write).await? {
            return Err(self.changed_meanwhile(link).await);
        }
        Ok(form)
    }

    /// Submits the form as `signer`, from `address`, who must have `confirmed` the answers:
    /// it must lack nothing. The form becomes `submitted`, the merchant too, and
    /// `form.completed` is written with them.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn submit(
        &self,
        link: &str,
        signer: &str,
        confirmed: bool,
        address: Option<IpAddr>,
    ) -> Result<BoardingForm, PageError> {
        let current = self.editable(link).await?;
        let mut refused: Vec<Invalid> = current
            .answers
            .missing(current.tax_id.is_some(), current.bank_account.is_some())
            .into_iter()
            .map(|field| Invalid::new(field, "is needed before the form can be submitted"))
            .collect();
        let signer = bounded_text("signerName", signer, 1, 200)
            .map_err(|e| refused.push(e))
            .ok();
        if !confirmed {
            refused.push(Invalid::new(
                "confirm",
                "must be ticked: confirm that the answers are true and complete",
            ));
        }
        let Some(signer) = signer.filter(|_| refused.is_empty()) else {
            return Err(PageError::Refused(refused, Box::new(current)));
        };
        let now = self.clock.now();
        let form = BoardingForm {
            status: FormStatus::Submitted,
            submission: Some(Submission {
                name: signer,
                on: now,
                address,
            }),
            requested_fields: Vec::new(),
            updated_on: now,
            ..current.clone()
        };
        let write = FormWrite {
            form_event: Some(self.event_id()),
            merchant_status: Some((OnboardingStatus::Submitted, self.event_id())),
            guard: Guard::Unchanged(current.status, current.updated_on),
            ..FormWrite::default()
        };
        if !self.write(&form, write).await? {
            return Err(self.changed_meanwhile(link).await);
        }
        if form.mode == Mode::Test {
            return Ok(self.sandbox_decides(form).await?);
        }
        Ok(form)
    }
}
