//! The record of idempotency keys.

use crate::scope::Scope;
use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;

/// The state of one request under an `Idempotency-Key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begun {
    /// This request holds the key now and must run, then `complete` or `release` it.
    Started,
    /// Another request already holds or completed the key; what to do about it.
    Seen(crate::idempotency::Seen),
}

/// Records of idempotency keys, scoped by platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Atomically claims the key for a request with `fingerprint`, or reports what a previous
    /// request left (stale records are replaced and claimed, per `idempotency::on_seen`).
    async fn begin(
        &self,
        scope: &Scope,
        key: &crate::idempotency::IdempotencyKey,
        fingerprint: &[u8; 32],
        now: OffsetDateTime,
    ) -> Result<Begun, StoreError>;

    /// Stores the answer of the request that holds the key.
    async fn complete(
        &self,
        scope: &Scope,
        key: &crate::idempotency::IdempotencyKey,
        answer: &crate::idempotency::Answer,
    ) -> Result<(), StoreError>;

    /// Forgets the key (the request failed transiently and may be retried).
    async fn release(
        &self,
        scope: &Scope,
        key: &crate::idempotency::IdempotencyKey,
    ) -> Result<(), StoreError>;

    /// Deletes keys created before `before` (past their retention); returns how many.
    async fn purge(&self, before: OffsetDateTime) -> Result<u64, StoreError>;
}
