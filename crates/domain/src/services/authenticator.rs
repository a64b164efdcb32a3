//! Turns the `x-api-key` header into a principal, or a refusal (spec 5).

use std::sync::Arc;

use time::Duration;

use crate::api_key::KeyValue;
use crate::auth::{Access, AuthError, Presented, Principal, decide};
use crate::ports::{Clock, KeyStore, StoreError};

/// Why `Authenticator::authenticate` gave no principal.
#[derive(Debug, thiserror::Error)]
pub enum AuthenticateError {
    /// The request is refused: 401 or 403, as `AuthError` says.
    #[error(transparent)]
    Denied(#[from] AuthError),
    /// The key store failed: the request can be neither admitted nor refused.
    #[error(transparent)]
    Store(StoreError),
}

/// Authenticates requests against the stored API keys, noting when each key was last used.
#[derive(Clone)]
pub struct Authenticator {
    keys: Arc<dyn KeyStore>,
    clock: Arc<dyn Clock>,
}

impl Authenticator {
    /// `lastUsedOn` is refreshed at most this often, so authentication is a read, not a write,
    /// on nearly every request.
    pub const TOUCH_INTERVAL: Duration = Duration::minutes(1);

    /// An authenticator reading keys from `keys` and the time from `clock`.
    pub fn new(keys: Arc<dyn KeyStore>, clock: Arc<dyn Clock>) -> Self {
        Self { keys, clock }
    }

    /// The principal for the `x-api-key` header (`None` when absent) if its key may call an
    /// operation requiring `required`; refreshes the key's `lastUsedOn` when stale.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn authenticate(
        &self,
        header: Option<&str>,
        required: Access,
    ) -> Result<Principal, AuthenticateError> {
        let Some(raw) = header else {
            return decide(Presented::Missing, required).map_err(Into::into);
        };
        let Ok(value) = KeyValue::parse(raw) else {
            return decide(Presented::Malformed, required).map_err(Into::into);
        };
        let stored = self
            .keys
            .find_key_by_hash(&value.hash())
            .await
            .map_err(AuthenticateError::Store)?;
        let principal = decide(
            Presented::Parsed {
                value: &value,
                stored: stored.as_ref(),
            },
            required,
        )?;
        let now = self.clock.now();
        let stale = stored
            .and_then(|k| k.last_used_on)
            .is_none_or(|at| now - at >= Self::TOUCH_INTERVAL);
        if stale && let Some(key) = &principal.key_id {
            // Best effort: failing to note the time of use must not fail an authorised request.
            let _ = self
                .keys
                .touch_key(&principal.scope.platform, key, now)
                .await;
        }
        Ok(principal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_key::{ApiKey, KeyName, KeyStatus};
    use crate::ids::{KeyId, PlatformId, UserId};
    use crate::mode::{KeyType, Mode};
    use crate::ports::{MockClock, MockKeyStore};
    use time::OffsetDateTime;
    use time::macros::datetime;

    const NOW: OffsetDateTime = datetime!(2026-11-22 12:00 UTC);
    const VALUE: &str = "priv_test_ABCDEFGHIJKLMNOPQRSTUVWXYZ";

    fn stored(last_used_on: Option<OffsetDateTime>) -> ApiKey {
        let value = KeyValue::parse(VALUE).unwrap();
        ApiKey {
            id: KeyId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("1"),
            name: KeyName::parse("Backend").unwrap(),
            key_type: KeyType::Private,
            mode: Mode::Test,
            status: KeyStatus::Active,
            hash: value.hash(),
            last4: value.last4(),
            created_by: UserId::from_suffix("1"),
            created_on: NOW,
            last_used_on,
        }
    }

    fn clock() -> MockClock {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOW);
        clock
    }

    #[tokio::test]
    async fn missing_or_malformed_header_never_reaches_the_store() {
        let mut keys = MockKeyStore::new();
        keys.expect_find_key_by_hash().never();
        let auth = Authenticator::new(Arc::new(keys), Arc::new(clock()));
        for header in [None, Some(""), Some("priv_test_short"), Some("Bearer x")] {
            let err = auth
                .authenticate(header, Access::Private)
                .await
                .unwrap_err();
            assert!(
                matches!(err, AuthenticateError::Denied(AuthError::Unauthenticated)),
                "{header:?}"
            );
        }
    }

    #[tokio::test]
    async fn last_used_is_written_only_when_stale() {
        let cases = [
            (None, 1),
            (Some(NOW - Duration::seconds(59)), 0),
            (Some(NOW - Duration::seconds(60)), 1),
        ];
        for (last_used_on, touches) in cases {
            let mut keys = MockKeyStore::new();
            keys.expect_find_key_by_hash()
                .returning(move |_| Ok(Some(stored(last_used_on))));
            keys.expect_touch_key()
                .withf(|platform, _, at| platform.as_str() == "pfm_1" && *at == NOW)
                .times(touches)
                .returning(|_, _, _| Ok(()));
            let auth = Authenticator::new(Arc::new(keys), Arc::new(clock()));
            let principal = auth
                .authenticate(Some(VALUE), Access::Private)
                .await
                .unwrap();
            assert_eq!(principal.scope.mode, Mode::Test);
        }
    }

    #[tokio::test]
    async fn touch_failure_does_not_fail_the_request() {
        let mut keys = MockKeyStore::new();
        keys.expect_find_key_by_hash()
            .returning(|_| Ok(Some(stored(None))));
        keys.expect_touch_key()
            .returning(|_, _, _| Err(StoreError::Unexpected("down".into())));
        let auth = Authenticator::new(Arc::new(keys), Arc::new(clock()));
        assert!(
            auth.authenticate(Some(VALUE), Access::Private)
                .await
                .is_ok()
        );
    }
}
