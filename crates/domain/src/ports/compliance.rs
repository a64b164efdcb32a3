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

    /// Records the form's attestation with `compliance.updated` (`event`), while the stored
    /// form is still pending or overdue; whether it was written.
    async fn attest_compliance(
        &self,
        form: &ComplianceForm,
        event: &EventId,
    ) -> Result<bool, StoreError>;
}
