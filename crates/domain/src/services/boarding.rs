//! Boarding forms: created for a merchant through the API, filled in on a hosted page reached
//! by an unguessable link, submitted (`form.completed`), then decided by underwriting.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::boarding::OnboardingStatus;
use crate::boarding::answers::{self, Answers};
use crate::boarding::checks::last4;
use crate::boarding::form::{
    BoardingForm, DEFAULT_LINK_LIFETIME, FormStatus, SealedValue, Submission,
};
use crate::boarding::underwriting::{self, Decision};
use crate::compliance::ComplianceForm;
use crate::dashboard::Secret;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{BoardingFormId, ComplianceFormId, EventId, MerchantId, PlatformId};
use crate::merchant::{Merchant, MerchantDetails};
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::ports::{
    BoardingStore, CardVault, Clock, FormWrite, Guard, Ids, MerchantStore, StoreError,
};
use crate::scope::Scope;
use crate::text::bounded_text;

use super::ServiceError;

/// Which merchant a new form boards.
#[derive(Debug, Clone)]
pub enum FormFor {
    /// A merchant that exists in the caller's platform and mode.
    Existing(MerchantId),
    /// A new merchant, created with the form.
    New(MerchantDetails),
}

/// A form with the one copy of its link the caller will ever see.
#[derive(Clone)]
pub struct IssuedForm {
    /// The form as stored.
    pub form: BoardingForm,
    /// The hosted page's address, carrying the form's secret.
    pub url: String,
}

/// The link carries the form's secret: never printed.
impl std::fmt::Debug for IssuedForm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedForm")
            .field("form", &self.form)
            .field("url", &"…")
            .finish()
    }
}

/// Why the hosted page cannot act on a form.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// No form has this link (unknown, or replaced by a newer link).
    #[error("this link is unknown or was replaced by a newer one")]
    UnknownLink,
    /// The link's time is up.
    #[error("this link has expired")]
    Expired,
    /// The form can no longer be changed (submitted or decided): the form as it is.
    #[error("this form is {} and can no longer be changed", .0.status)]
    Closed(Box<BoardingForm>),
    /// Answers were refused, or the form changed meanwhile; nothing was kept. The form as it
    /// is, to show again with the refusals.
    #[error("some answers were refused")]
    Refused(Vec<Invalid>, Box<BoardingForm>),
    /// The store failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
}

/// Creates, reads and fills boarding forms.
#[derive(Clone)]
pub struct BoardingService {
    forms: Arc<dyn BoardingStore>,
    merchants: Arc<dyn MerchantStore>,
    vault: Arc<dyn CardVault>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    public_url: String,
}

impl std::fmt::Debug for BoardingService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoardingService").finish_non_exhaustive()
    }
}

impl BoardingService {
    /// A service over the form and merchant stores, sealing secrets in `vault`, with links that
    /// last 7 days and start at the default public URL.
    pub fn new(
        forms: Arc<dyn BoardingStore>,
        merchants: Arc<dyn MerchantStore>,
        vault: Arc<dyn CardVault>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            forms,
            merchants,
            vault,
            clock,
            ids,
            public_url: super::DEFAULT_PUBLIC_URL.to_owned(),
        }
    }

    /// Links start with `url`.
    #[must_use]
    pub fn with_public_url(mut self, url: &str) -> Self {
        url.trim_end_matches('/').clone_into(&mut self.public_url);
        self
    }

    fn event_id(&self) -> EventId {
        EventId::from_suffix(&self.ids.next_id())
    }

    /// A new link: its secret, the hash kept, and the address it makes.
    fn new_link(&self) -> (Secret, String) {
        let secret = Secret::new(self.ids.key_secret());
        let url = format!("{}/onboarding/{}", self.public_url, secret.expose());
        (secret, url)
    }

    /// Creates a form for an existing merchant of the caller's mode, or for a new one created
    /// with it, with `form.created` (and `merchant.created`) in the same transaction.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        target: FormFor,
        reply: Option<&Recorder<'_, IssuedForm>>,
    ) -> Result<IssuedForm, ServiceError> {
        let now = self.clock.now();
        let (merchant_id, new_merchant) = match target {
            FormFor::Existing(id) => {
                let merchant = self
                    .merchants
                    .get_merchant(&who.scope, &id)
                    .await
                    .map_err(ServiceError::Store)?
                    .ok_or_else(|| Invalid::new("merchantId", "no such merchant in this mode"))?;
                // A new form would take an approved merchant back into onboarding and stop
                // its live payments.
                if merchant.onboarding_status == OnboardingStatus::Approved {
                    return Err(ServiceError::Conflict {
                        field: "merchantId",
                        message: "the merchant's onboarding is already approved".into(),
                    });
                }
                (merchant.id, None)
            }
            FormFor::New(details) => {
                let id = MerchantId::from_suffix(&self.ids.next_id());
                let merchant = Merchant::new(id, &who.scope, details, now);
                (merchant.id.clone(), Some((merchant, self.event_id())))
            }
        };
        let (secret, url) = self.new_link();
        let form = BoardingForm {
            id: BoardingFormId::from_suffix(&self.ids.next_id()),
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            merchant_id,
            status: FormStatus::Open,
            link_hash: secret.hash(),
            expires_on: now + DEFAULT_LINK_LIFETIME,
            answers: Answers::default(),
            tax_id: None,
            bank_account: None,
            requested_fields: Vec::new(),
            reason: None,
            submission: None,
            created_on: now,
            updated_on: now,
        };
        let issued = IssuedForm { form, url };
        let write = FormWrite {
            new_merchant,
            form_event: Some(self.event_id()),
            reply: reply_for(reply, &issued),
            ..FormWrite::default()
        };
        self.write(&issued.form, write).await?;
        Ok(issued)
    }

    /// A form of the caller's platform and mode; `NotFound("boarding form")` otherwise.
    pub async fn get(
        &self,
        who: &Principal,
        id: &BoardingFormId,
    ) -> Result<BoardingForm, ServiceError> {
        self.forms
            .get_form(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("boarding form"))
    }

    /// The caller's forms, newest first.
    pub async fn list(
        &self,
        who: &Principal,
        page: &PageRequest,
    ) -> Result<Page<BoardingForm>, ServiceError> {
        self.forms
            .list_forms(&who.scope, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// A fresh link for the form, lasting the full lifetime again; the old link stops working.
    #[tracing::instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn renew_link(
        &self,
        who: &Principal,
        id: &BoardingFormId,
        reply: Option<&Recorder<'_, IssuedForm>>,
    ) -> Result<IssuedForm, ServiceError> {
        let current = self.get(who, id).await?;
        let now = self.clock.now();
        let (secret, url) = self.new_link();
        let form = BoardingForm {
            link_hash: secret.hash(),
            expires_on: now + DEFAULT_LINK_LIFETIME,
            updated_on: now,
            ..current.clone()
        };
        let issued = IssuedForm { form, url };
        let write = FormWrite {
            guard: Guard::Unchanged(current.status, current.updated_on),
            // The answer a replay gets, stored with the new link's hash: without the link.
            reply: reply_for(reply, &issued),
            ..FormWrite::default()
        };
        if !self.write(&issued.form, write).await? {
            return Err(ServiceError::Conflict {
                field: "id",
                message: "the form changed at the same time; ask for a new link again".into(),
            });
        }
        Ok(issued)
    }

    /// The form a link opens, if it still works.
    pub async fn open(&self, link: &str) -> Result<BoardingForm, PageError> {
        let secret = Secret::presented(link).ok_or(PageError::UnknownLink)?;
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
    async fn editable(&self, link: &str) -> Result<BoardingForm, PageError> {
        let form = self.open(link).await?;
        if form.status.is_editable() {
            Ok(form)
        } else {
            Err(PageError::Closed(Box::new(form)))
        }
    }

    /// Why a write lost to another made meanwhile (another window saved, submitted, or a new
    /// link was issued), with the form as it now is.
    async fn changed_meanwhile(&self, link: &str) -> PageError {
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

    fn seal(
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
    async fn write(&self, form: &BoardingForm, write: FormWrite) -> Result<bool, ServiceError> {
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
                .seal(id, "bankAccount", secrets.bank_account)
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

    /// Test mode: the sandbox underwriter decides at once, by the test tax id.
    async fn sandbox_decides(&self, form: BoardingForm) -> Result<BoardingForm, ServiceError> {
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
    async fn decide(
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

/// The vault's context for the secret `what` of form `id`: it opens only for that form.
fn vault_context(id: &BoardingFormId, what: &str) -> String {
    format!("{id}:{what}")
}

const TAX_ID: &str = "taxId";
