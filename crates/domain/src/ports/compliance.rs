//! Where merchants' compliance forms are kept.

use async_trait::async_trait;

use super::StoreError;
use crate::compliance::ComplianceForm;
use crate::ids::{EventId, MerchantId};
use crate::scope::Scope;

/// Compliance forms, scoped to a platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ComplianceStore: Send + Sync {
    /// The merchant's latest form, or `None` (not approved yet).
    async fn current_compliance(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<ComplianceForm>, StoreError>;

    /// Pending forms due at or before `as_of`, at most `limit`.
    async fn pending_due(
        &self,
        as_of: time::OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ComplianceForm>, StoreError>;

    /// Writes `overdue` on a form still pending, with `compliance.updated` (`event`); whether
    /// it was written.
    async fn mark_overdue(
        &self,
        form: &ComplianceForm,
        event: &EventId,
    ) -> Result<bool, StoreError>;

    /// Forms issued at or before `issued_before` that are their merchant's latest, of merchants
    /// approved and not deleted, at most `limit`: a new year's form is due for them.
    async fn renewable(
        &self,
        issued_before: time::OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ComplianceForm>, StoreError>;

    /// Writes a newly issued form with `compliance.created` (`event`), unless its merchant
    /// already has one issued less than a year before it or after it (another maintainer issued
    /// it, whatever instant its clock said); whether written.
    async fn issue_compliance(
        &self,
        form: &ComplianceForm,
        event: &EventId,
    ) -> Result<bool, StoreError>;

    /// Approved merchants (not deleted) that have no form at all, at most `limit`: those
    /// approved before compliance existed.
    async fn unissued(&self, limit: u32) -> Result<Vec<crate::merchant::Merchant>, StoreError>;

    /// Records the form's attestation with `compliance.updated` (`event`), while the stored
    /// form is still pending or overdue; whether it was written.
    async fn attest_compliance(
        &self,
        form: &ComplianceForm,
        event: &EventId,
    ) -> Result<bool, StoreError>;
}
