//! Where boarding forms are kept, each change written with the events that report it.

use super::StoreError;
use crate::api_key::KeyHash;
use crate::boarding::OnboardingStatus;
use crate::boarding::form::{BoardingForm, FormStatus};
use crate::idempotency::KeyedAnswer;
use crate::ids::{BoardingFormId, EventId};
use crate::merchant::Merchant;
use crate::page::{Page, PageRequest};
use crate::scope::Scope;
use crate::webhook::EventType;
use async_trait::async_trait;

/// What a form's write changes beside the form, all in its one SQL transaction.
#[derive(Debug, Clone, Default)]
pub struct FormWrite {
    /// A merchant created with the form (`merchant.created`, as this event id).
    pub new_merchant: Option<(Merchant, EventId)>,
    /// The form's own event (`form.created`, `form.completed`) with its id.
    pub form_event: Option<(EventType, EventId)>,
    /// The merchant's onboarding status becomes this, reported by `merchant.updated` (this
    /// event id), unless it already is.
    pub merchant_status: Option<(OnboardingStatus, EventId)>,
    /// A compliance form issued with the change (at approval), with its `compliance.created`.
    pub compliance: Option<(crate::compliance::ComplianceForm, EventId)>,
    /// The form is written only while its status is one of these (empty: a new form).
    pub only_if: Vec<FormStatus>,
    /// The request's idempotent answer, if it has one.
    pub reply: Option<KeyedAnswer>,
}

/// Boarding forms, scoped to a platform and mode, except the one lookup by a link's hash.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait BoardingStore: Send + Sync {
    /// Writes the form (inserted when `write.only_if` is empty, else replaced while its stored
    /// status is one of them) with everything `write` names, in one SQL transaction. Whether
    /// it was written: `false` when the stored status no longer allowed it.
    async fn write_form(&self, form: &BoardingForm, write: FormWrite) -> Result<bool, StoreError>;

    /// The form `id` in `scope`, or `None`.
    async fn get_form(
        &self,
        scope: &Scope,
        id: &BoardingFormId,
    ) -> Result<Option<BoardingForm>, StoreError>;

    /// The scope's forms, newest first.
    async fn list_forms(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<BoardingForm>, StoreError>;

    /// The form whose current link hashes to `hash`, whatever its scope: the hosted page's
    /// only lookup, by an unguessable secret.
    async fn form_by_link(&self, hash: &KeyHash) -> Result<Option<BoardingForm>, StoreError>;
}
