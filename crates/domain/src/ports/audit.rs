//! Where the audit log is kept.

use async_trait::async_trait;

use super::StoreError;
use crate::audit::AuditEntry;
use crate::ids::PlatformId;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};

/// The audit log: appended to, never changed.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AuditLog: Send + Sync {
    /// Appends an entry.
    async fn record(&self, entry: &AuditEntry) -> Result<(), StoreError>;

    /// The platform's entries of `mode` and those without a mode (users), newest first.
    async fn list_audit(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<AuditEntry>, StoreError>;
}
