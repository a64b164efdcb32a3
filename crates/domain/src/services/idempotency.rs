//! Idempotency keys (our decision, docs/decisions.md: the spec has none): a request under a key
//! runs once; its answer is stored and replayed to every retry.

use std::sync::Arc;

use crate::auth::Principal;
use crate::idempotency::{Answer, IdempotencyKey, KeyClaim, RETENTION, fingerprint};
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

    /// The claim the request `method path body` makes on the client's `key`, not yet made
    /// (`begin` makes it, or a card payment's pending row: `Recorder::claim_at_first_write`).
    /// Its key is the key as stored, in the caller's key space (`IdempotencyKey::scoped_to`),
    /// which `complete`, `release` and a stored answer take.
    pub fn claim_for(
        &self,
        who: &Principal,
        key: IdempotencyKey,
        method: &str,
        path: &str,
        body: &[u8],
    ) -> KeyClaim {
        KeyClaim {
            key: key.scoped_to(who),
            fingerprint: fingerprint(&self.secret, method, path, body),
            at: self.clock.now(),
        }
    }

    /// Makes `claim` now, or says what an earlier request under its key left.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn begin(&self, who: &Principal, claim: &KeyClaim) -> Result<Begun, StoreError> {
        self.store
            .begin(&who.scope, &claim.key, &claim.fingerprint, self.clock.now())
            .await
    }

    /// Stores the answer of the request that holds `key`.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn complete(
        &self,
        who: &Principal,
        key: &IdempotencyKey,
        answer: &Answer,
    ) -> Result<(), StoreError> {
        self.store.complete(&who.scope, key, answer).await
    }

    /// Settles `key` with an answer no change stored: kept for replay, unless it is a transient
    /// failure (5xx), which releases the key so that a retry runs again.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn settle(
        &self,
        who: &Principal,
        key: &IdempotencyKey,
        answer: &Answer,
    ) -> Result<(), StoreError> {
        if crate::idempotency::kept_for_replay(answer.status) {
            self.complete(who, key, answer).await
        } else {
            self.release(who, key).await
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{KeyId, PlatformId, UserId};
    use crate::mode::{KeyType, Mode};
    use crate::ports::MockIdempotencyStore;
    use crate::scope::Scope;
    use crate::services::fixtures::{NOON, clock_at_noon};

    fn who(key_type: KeyType) -> Principal {
        Principal {
            scope: Scope::new(PlatformId::from_suffix("1"), Mode::Test),
            key_type,
            key_id: Some(KeyId::from_suffix("pub")),
            user_id: UserId::from_suffix("1"),
        }
    }

    fn service(store: MockIdempotencyStore, secret: u8) -> IdempotencyService {
        IdempotencyService::new(Arc::new(store), Arc::new(clock_at_noon()), [secret; 32])
    }

    /// The claim is made in the caller's scope, under the key as the caller's key type stores
    /// it, with the request's fingerprint under the server secret, at the service's clock.
    #[tokio::test]
    async fn a_claim_is_scoped_fingerprinted_and_timed_by_the_service() {
        for (key_type, stored) in [
            (KeyType::Private, "order-1"),
            (KeyType::Public, "key_pub order-1"),
        ] {
            let print = fingerprint(&[7; 32], "POST", "/v1/x", b"{}");
            let mut store = MockIdempotencyStore::new();
            store
                .expect_begin()
                .withf(move |scope, key, fp, at| {
                    *scope == who(key_type).scope
                        && key.as_str() == stored
                        && *fp == print
                        && *at == NOON
                })
                .times(1)
                .returning(|_, _, _, _| Ok(Begun::Started));
            let key = IdempotencyKey::parse("order-1").unwrap();
            let service = service(store, 7);
            let claim = service.claim_for(&who(key_type), key, "POST", "/v1/x", b"{}");
            let begun = service.begin(&who(key_type), &claim).await.unwrap();
            assert_eq!((begun, claim.key.as_str()), (Begun::Started, stored));
        }
    }

    /// Another secret makes another fingerprint of the same request, and another request
    /// another fingerprint under the same secret: the stored print names no body.
    #[test]
    fn fingerprints_depend_on_the_secret_and_the_request() {
        let print = |secret: u8, body: &[u8]| fingerprint(&[secret; 32], "POST", "/v1/x", body);
        assert_ne!(print(7, b"{}"), print(8, b"{}"));
        assert_ne!(print(7, b"{}"), print(7, b"{\"a\":1}"));
        assert_eq!(print(7, b"{}"), print(7, b"{}"));
    }

    /// Keys are kept 24 hours, counted back from the service's clock.
    #[tokio::test]
    async fn keys_older_than_a_day_are_purged() {
        let mut store = MockIdempotencyStore::new();
        store
            .expect_purge()
            .withf(|before| *before == NOON - time::Duration::hours(24))
            .times(1)
            .returning(|_| Ok(4));
        assert_eq!(service(store, 7).purge_expired().await.unwrap(), 4);
    }
}
