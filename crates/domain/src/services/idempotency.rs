//! Idempotency keys (spec 5.4): a request under a key runs once; its answer is stored and
//! replayed to every retry.

use std::sync::Arc;

use crate::auth::Principal;
use crate::idempotency::{IdempotencyKey, RETENTION, StoredResponse, fingerprint};
use crate::ports::{Begun, Clock, IdempotencyStore, StoreError};

/// Runs the idempotency-key protocol for the doors: claim, store the answer, release, purge.
#[derive(Clone)]
pub struct IdempotencyService {
    store: Arc<dyn IdempotencyStore>,
    clock: Arc<dyn Clock>,
    /// Keys the request fingerprints, so a stored fingerprint reveals nothing of the body.
    secret: [u8; 32],
}

impl IdempotencyService {
    /// A service over `store`, fingerprinting requests under `secret`.
    pub fn new(store: Arc<dyn IdempotencyStore>, clock: Arc<dyn Clock>, secret: [u8; 32]) -> Self {
        Self {
            store,
            clock,
            secret,
        }
    }

    /// Claims `key` for the request `method path body`, or says what an earlier request under
    /// it left.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn begin(
        &self,
        who: &Principal,
        key: &IdempotencyKey,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> Result<Begun, StoreError> {
        let print = fingerprint(&self.secret, method, path, body);
        self.store
            .begin(&who.scope, key, &print, self.clock.now())
            .await
    }

    /// Stores the answer of the request that holds `key`.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn complete(
        &self,
        who: &Principal,
        key: &IdempotencyKey,
        response: &StoredResponse,
    ) -> Result<(), StoreError> {
        self.store.complete(&who.scope, key, response).await
    }

    /// Forgets `key`: its request failed transiently and may be retried.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn release(&self, who: &Principal, key: &IdempotencyKey) -> Result<(), StoreError> {
        self.store.release(&who.scope, key).await
    }

    /// Forgets every key past its retention; returns how many.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn purge_expired(&self) -> Result<u64, StoreError> {
        self.store.purge(self.clock.now() - RETENTION).await
    }
}
