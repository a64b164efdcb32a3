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
use async_trait::async_trait;

/// When a form's write goes through.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Guard {
    /// A new form: inserted.
    #[default]
    Insert,
    /// Replaced while its stored status is this one (a decision: two cannot both win).
    Status(FormStatus),
    /// Replaced only if nothing changed it since it was read (its status and `updated_on` as
    /// read): a save, a submission or a new link never undoes another made meanwhile.
    Unchanged(FormStatus, time::OffsetDateTime),
}

/// What a form's write changes beside the form, all in its one SQL transaction.
#[derive(Debug, Clone, Default)]
pub struct FormWrite {
    /// A merchant created with the form (`merchant.created`, as this event id).
    pub new_merchant: Option<(Merchant, EventId)>,
    /// The form's own event, with this id: `form.created` for a new form, `form.completed`
    /// for a replaced one (a submission).
    pub form_event: Option<EventId>,
    /// The merchant's onboarding status becomes this, reported by `merchant.updated` (this
    /// event id), unless it already is, or the merchant is approved (approval is final) or
    /// deleted.
    pub merchant_status: Option<(OnboardingStatus, EventId)>,
    /// A compliance form issued with the change (at approval), with its `compliance.created`:
    /// written only when this write is what moved the merchant to approved.
    pub compliance: Option<(crate::compliance::ComplianceForm, EventId)>,
    /// When the stored form may be replaced (a new form is inserted).
    pub guard: Guard,
    /// The request's idempotent answer, if it has one.
    pub reply: Option<KeyedAnswer>,
}

/// Boarding forms, scoped to a platform and mode, except the one lookup by a link's hash.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait BoardingStore: Send + Sync {
    /// Writes the form as `write.guard` allows, with everything `write` names, in one SQL
    /// transaction. Whether it was written: `false` (and nothing written) when the guard no
    /// longer held.
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

    /// The newest approved form of `merchant` in `scope` holding a bank account: where its
    /// payouts go.
    async fn payout_account(
        &self,
        scope: &Scope,
        merchant: &crate::ids::MerchantId,
    ) -> Result<Option<BoardingForm>, StoreError>;

    /// The form whose current link hashes to `hash`, whatever its scope: the hosted page's
    /// only lookup, by an unguessable secret.
    async fn form_by_link(&self, hash: &KeyHash) -> Result<Option<BoardingForm>, StoreError>;
}
