//! Platform creation: the platform, its owner, and the two default test keys (spec 2.1).

use std::sync::Arc;

use crate::api_key::KeyName;
use crate::audit::{Action, Actor};
use crate::ids::{ConnectionId, PlanId};
use crate::ids::{PlatformId, UserId};
use crate::mode::{KeyType, Mode};
use crate::payment::fee::FeeRule;
use crate::payment::routing::{Plan, ProcessorAccount, ProcessorConnection};
use crate::platform::{Platform, PlatformName};
use crate::ports::{Clock, Ids, NewPlatform, PlatformStore};
use crate::user::{Email, User};

use super::ServiceError;
use super::audit::{Auditor, Target};
use super::keys::{CreatedKey, new_key};

/// The names spec 2.1 gives the default keys.
pub const DEFAULT_PRIVATE_KEY_NAME: &str = "Default Private Key";
pub const DEFAULT_PUBLIC_KEY_NAME: &str = "Default Public Key";

/// The test-mode default plan's price: 2.9% + 30 minor units, like the common card pricing.
pub const DEFAULT_FEE_BASIS_POINTS: i64 = 290;
pub const DEFAULT_FEE_FIXED: i64 = 30;

/// A platform just created, with everything made alongside it.
#[derive(Debug, Clone)]
pub struct CreatedPlatform {
    /// The new platform.
    pub platform: Platform,
    /// The user who owns the platform and is recorded as creator of its default keys.
    pub owner: User,
    /// The default private key, then the default public key, with their values shown once.
    pub keys: Vec<CreatedKey>,
}

impl CreatedPlatform {
    fn stored_keys(&self) -> Vec<crate::api_key::ApiKey> {
        self.keys.iter().map(|k| k.key.clone()).collect()
    }
}

/// Creates and reads platforms: the tenants that own merchants, users and keys.
#[derive(Clone)]
pub struct PlatformService {
    platforms: Arc<dyn PlatformStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    audit: Auditor,
}

impl PlatformService {
    /// A service over the platform store, with the clock and id source it stamps records with,
    /// recording the owner and the default keys in the audit log.
    pub fn new(
        platforms: Arc<dyn PlatformStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        audit: Auditor,
    ) -> Self {
        Self {
            platforms,
            clock,
            ids,
            audit,
        }
    }

    /// The owner and the default keys a new platform starts with, as the audit log tells it.
    async fn record(&self, actor: &Actor, created: &CreatedPlatform) {
        let platform = &created.platform.id;
        let owner = Target {
            platform,
            mode: None,
            id: created.owner.id.as_str(),
        };
        self.audit.record(actor, Action::UserCreated, owner).await;
        for k in &created.keys {
            let key = Target {
                platform,
                mode: Some(k.key.mode),
                id: k.key.id.as_str(),
            };
            self.audit.record(actor, Action::KeyGenerated, key).await;
        }
    }

    /// Creates a platform with its owner user and two default test-mode keys, atomically.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn create(
        &self,
        actor: &Actor,
        name: PlatformName,
        owner_email: Email,
    ) -> Result<CreatedPlatform, ServiceError> {
        let (created, new) = self.build(name, owner_email);
        self.platforms
            .create_platform_atomically(&new)
            .await
            .map_err(ServiceError::Store)?;
        self.record(actor, &created).await;
        Ok(created)
    }

    /// Creates the demo platform when the database has none, so that a newcomer's first
    /// `holdfast serve` can be called at once. Returns `None` when a platform already exists.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn bootstrap_demo(
        &self,
        actor: &Actor,
        name: PlatformName,
        owner_email: Email,
    ) -> Result<Option<CreatedPlatform>, ServiceError> {
        let (created, new) = self.build(name, owner_email);
        let first = self
            .platforms
            .create_first_platform_atomically(&new)
            .await
            .map_err(ServiceError::Store)?;
        if !first {
            return Ok(None);
        }
        self.record(actor, &created).await;
        Ok(Some(created))
    }

    /// Every platform, oldest first; for operators only.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn list(&self) -> Result<Vec<Platform>, ServiceError> {
        self.platforms
            .list_platforms()
            .await
            .map_err(ServiceError::Store)
    }

    fn build(&self, name: PlatformName, owner_email: Email) -> (CreatedPlatform, NewPlatform) {
        let now = self.clock.now();
        let owner_id = UserId::from_suffix(&self.ids.next_id());
        let platform = Platform {
            id: PlatformId::from_suffix(&self.ids.next_id()),
            name,
            owner_id: owner_id.clone(),
            created_on: now,
        };
        let owner = User {
            id: owner_id,
            platform_id: platform.id.clone(),
            email: owner_email,
            role: crate::user::Role::Admin,
            created_on: now,
        };
        let keys = [
            (DEFAULT_PRIVATE_KEY_NAME, KeyType::Private),
            (DEFAULT_PUBLIC_KEY_NAME, KeyType::Public),
        ]
        .into_iter()
        .map(|(name, key_type)| {
            let name = KeyName::parse(name).expect("default names are valid");
            new_key(
                &*self.clock,
                &*self.ids,
                &platform.id,
                &owner.id,
                name,
                key_type,
                Mode::Test,
            )
        })
        .collect();
        let connection = ProcessorConnection {
            id: ConnectionId::from_suffix(&self.ids.next_id()),
            platform_id: platform.id.clone(),
            mode: Mode::Test,
            name: "Sandbox".into(),
            account: ProcessorAccount::Sandbox,
            created_on: now,
        };
        let plan = Plan {
            id: PlanId::from_suffix(&self.ids.next_id()),
            platform_id: platform.id.clone(),
            mode: Mode::Test,
            name: "Default plan".into(),
            fee: FeeRule::new(DEFAULT_FEE_BASIS_POINTS, DEFAULT_FEE_FIXED).expect("valid"),
            default_connection: connection.id.clone(),
            brand_routes: Vec::new(),
            fallbacks: Vec::new(),
            is_default: true,
            created_on: now,
            settlement_delay: crate::ledger::SettlementDelay::DEFAULT,
        };
        let created = CreatedPlatform {
            platform,
            owner,
            keys,
        };
        let new = NewPlatform {
            platform: created.platform.clone(),
            owner: created.owner.clone(),
            keys: created.stored_keys(),
            connection,
            plan,
        };
        (created, new)
    }

    /// The platform with this id; `NotFound("platform")` when there is none.
    #[tracing::instrument(level = "debug", skip_all, fields(id = %id))]
    pub async fn get(&self, id: &PlatformId) -> Result<Platform, ServiceError> {
        self.platforms
            .get_platform(id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("platform"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_key::KeyStatus;
    use crate::ports::{MockIds, MockPlatformStore};
    use crate::services::fixtures::clock_at_noon;
    use std::sync::atomic::{AtomicU32, Ordering};

    #[tokio::test]
    async fn new_platform_gets_two_default_test_keys_owned_by_the_owner() {
        let clock = clock_at_noon();
        let counter = AtomicU32::new(0);
        let mut ids = MockIds::new();
        ids.expect_next_id()
            .returning(move || format!("{}", counter.fetch_add(1, Ordering::Relaxed)));
        ids.expect_key_secret()
            .returning(|| "ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned());
        let mut store = MockPlatformStore::new();
        store
            .expect_create_platform_atomically()
            .withf(|new| {
                let (p, owner, keys) = (&new.platform, &new.owner, &new.keys);
                new.plan.is_default
                    && new.plan.mode == Mode::Test
                    && new.plan.default_connection == new.connection.id
                    && keys.len() == 2
                    && keys.iter().all(|k| {
                        k.mode == Mode::Test
                            && k.status == KeyStatus::Active
                            && k.created_by == owner.id
                            && k.platform_id == p.id
                    })
                    && p.owner_id == owner.id
            })
            .times(1)
            .returning(|_| Ok(()));
        let (auditor, audit) = crate::services::audit::recording::auditor();
        let service =
            PlatformService::new(Arc::new(store), Arc::new(clock), Arc::new(ids), auditor);
        let created = service
            .create(
                &Actor::operator(),
                PlatformName::parse("Acme").unwrap(),
                Email::parse("owner@acme.test").unwrap(),
            )
            .await
            .unwrap();
        let shown: Vec<_> = created
            .keys
            .iter()
            .map(|k| (k.key.name.as_str(), k.key.key_type, &k.value.expose()[..5]))
            .collect();
        assert_eq!(
            shown,
            [
                ("Default Private Key", KeyType::Private, "priv_"),
                ("Default Public Key", KeyType::Public, "pub_t"),
            ]
        );
        let recorded: Vec<_> = audit.lock().unwrap().iter().map(|e| e.action).collect();
        assert_eq!(
            recorded,
            [
                Action::UserCreated,
                Action::KeyGenerated,
                Action::KeyGenerated
            ]
        );
    }

    #[tokio::test]
    async fn bootstrap_reports_when_a_platform_already_exists() {
        let clock = clock_at_noon();
        let mut ids = MockIds::new();
        ids.expect_next_id().returning(|| "1".to_owned());
        ids.expect_key_secret()
            .returning(|| "ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned());
        let mut store = MockPlatformStore::new();
        store
            .expect_create_first_platform_atomically()
            .times(1)
            .returning(|_| Ok(false));
        store.expect_create_platform_atomically().never();
        let (auditor, audit) = crate::services::audit::recording::auditor();
        let service =
            PlatformService::new(Arc::new(store), Arc::new(clock), Arc::new(ids), auditor);
        let out = service
            .bootstrap_demo(
                &Actor::operator(),
                PlatformName::parse("Demo").unwrap(),
                Email::parse("demo@example.com").unwrap(),
            )
            .await
            .unwrap();
        assert!(out.is_none());
        assert!(audit.lock().unwrap().is_empty(), "nothing was created");
    }
}
