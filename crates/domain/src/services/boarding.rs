//! Boarding forms: created for a merchant through the API, filled in on a hosted page reached
//! by an unguessable link, submitted (`form.completed`), then decided by underwriting.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::boarding::OnboardingStatus;
use crate::boarding::answers::Answers;
use crate::boarding::form::{BoardingForm, DEFAULT_LINK_LIFETIME, FormStatus};
use crate::dashboard::BearerSecret;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{BoardingFormId, EventId, MerchantId};
use crate::merchant::{Merchant, MerchantDetails};
use crate::page::{Page, PageRequest};
use crate::ports::{BoardingStore, CardVault, Clock, FormWrite, Guard, Ids, MerchantStore};

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

    pub(super) fn event_id(&self) -> EventId {
        EventId::from_suffix(&self.ids.next_id())
    }

    /// A new link: its secret, the hash kept, and the address it makes.
    pub(super) fn new_link(&self) -> (BearerSecret, String) {
        let secret = BearerSecret::new(self.ids.key_secret());
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
}

/// The vault's context for the secret `what` of form `id`: it opens only for that form.
pub(crate) fn vault_context(id: &BoardingFormId, what: &str) -> String {
    format!("{id}:{what}")
}

const TAX_ID: &str = "taxId";

/// What a form's bank account is sealed as; a payout opens it for its bank.
pub(crate) const BANK_ACCOUNT: &str = "bankAccount";

mod decision;
mod page;
