//! The ports: what the domain needs from the outside world, named for the need.
//!
//! Every store method is scoped by platform (and by mode for mode-bound resources), so an
//! adapter cannot forget the scope: there is no unscoped lookup except the key-hash lookup that
//! establishes the scope in the first place.

use crate::scope::Scope;
use async_trait::async_trait;
use time::OffsetDateTime;

use crate::api_key::{ApiKey, KeyHash, KeyName, KeyStatus};
use crate::idempotency::KeyedAnswer;
use crate::ids::{EventId, KeyId, MerchantId, PlatformId, UserId};
use crate::merchant::{Merchant, MerchantPatch};
use crate::page::{Page, PageRequest};
use crate::platform::Platform;
use crate::user::User;

/// The error contract shared by every store port.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The row to change does not exist in the given scope.
    #[error("not found")]
    NotFound,
    /// A uniqueness rule was broken; names the rule (for example `"users.email"`).
    #[error("duplicate {0}")]
    Duplicate(&'static str),
    /// Anything else: the database is down, a query failed. Carries context for the log only.
    #[error("store failure: {0}")]
    Unexpected(String),
}

/// The current time. Injected so rules about time are tested with fixed clocks.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Clock: Send + Sync {
    /// The current instant.
    fn now(&self) -> OffsetDateTime;
}

/// Identifiers and secrets.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait Ids: Send + Sync {
    /// A new, unique, time-ordered identifier suffix (ASCII alphanumerics) for any resource id.
    fn next_id(&self) -> String;
    /// 26 characters from `SECRET_ALPHABET`, drawn from a cryptographically secure source.
    fn key_secret(&self) -> String;
}

/// Everything a new platform starts with, written together or not at all.
#[derive(Debug, Clone)]
pub struct NewPlatform {
    /// The platform being created, naming `owner` as its owner.
    pub platform: Platform,
    /// The user who creates the platform and owns it.
    pub owner: User,
    /// The two default test-mode keys, Default Private Key and Default Public Key (spec 2.1).
    pub keys: Vec<ApiKey>,
    /// The test-mode sandbox connection and the default plan that routes to it.
    pub connection: crate::payment::routing::ProcessorConnection,
    /// The default test-mode plan, routing every card to `connection`.
    pub plan: crate::payment::routing::Plan,
}

/// Where platforms are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PlatformStore: Send + Sync {
    /// Atomically writes a platform, its owner, its default keys, connection and plan.
    async fn create_platform_atomically(&self, new: &NewPlatform) -> Result<(), StoreError>;

    /// Like `create_platform_atomically`, but only when no platform exists yet; returns whether
    /// it created one. Atomic against concurrent callers (replicas starting together on an
    /// empty database create one demo platform, not several).
    async fn create_first_platform_atomically(&self, new: &NewPlatform)
    -> Result<bool, StoreError>;

    /// The platform with this id, or `None` when there is none.
    async fn get_platform(&self, id: &PlatformId) -> Result<Option<Platform>, StoreError>;

    /// Every platform, oldest first (operators only).
    async fn list_platforms(&self) -> Result<Vec<Platform>, StoreError>;
}

/// Where the user accounts of each platform are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait UserStore: Send + Sync {
    /// Returns `Duplicate("users.email")` when the platform already has a user with that email.
    async fn insert_user(&self, user: &User) -> Result<(), StoreError>;
    /// The user with this id on the platform, or `None` when there is none.
    async fn get_user(
        &self,
        platform: &PlatformId,
        id: &UserId,
    ) -> Result<Option<User>, StoreError>;
    /// All users of the platform.
    async fn list_users(&self, platform: &PlatformId) -> Result<Vec<User>, StoreError>;
    /// Returns `NotFound` when no such user exists on the platform.
    async fn delete_user(&self, platform: &PlatformId, id: &UserId) -> Result<(), StoreError>;
}

/// Where API keys are kept: by hash, never by value.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait KeyStore: Send + Sync {
    /// Stores a newly generated key.
    async fn insert_key(&self, key: &ApiKey) -> Result<(), StoreError>;
    /// The one unscoped lookup: by the hash of a presented value, on an indexed column.
    async fn find_key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError>;
    /// The key with this id on the platform, or `None` when there is none.
    async fn get_key(
        &self,
        platform: &PlatformId,
        id: &KeyId,
    ) -> Result<Option<ApiKey>, StoreError>;
    /// All keys of the platform, both modes, oldest first.
    async fn list_keys(&self, platform: &PlatformId) -> Result<Vec<ApiKey>, StoreError>;
    /// Returns `NotFound` when the key does not exist on the platform.
    async fn rename_key(
        &self,
        platform: &PlatformId,
        id: &KeyId,
        name: &KeyName,
    ) -> Result<(), StoreError>;
    /// Returns `NotFound` when the key does not exist on the platform.
    async fn set_key_status(
        &self,
        platform: &PlatformId,
        id: &KeyId,
        status: KeyStatus,
    ) -> Result<(), StoreError>;
    /// Permanently removes the key. Returns `NotFound` when it does not exist on the platform.
    async fn delete_key(&self, platform: &PlatformId, id: &KeyId) -> Result<(), StoreError>;
    /// Records a use of the key (best effort, called at most about once a minute per key).
    async fn touch_key(
        &self,
        platform: &PlatformId,
        id: &KeyId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError>;
}

/// Where merchants are kept, each change written with its merchant event.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait MerchantStore: Send + Sync {
    /// Writes the merchant and its `merchant.created` event (id `event`), with the event's
    /// fan-out, and the request's idempotent `reply` if it has one, in one SQL transaction.
    async fn insert_merchant_with_event(
        &self,
        merchant: &Merchant,
        event: &EventId,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError>;
    /// A deleted merchant, or one of another platform or mode, is `None`.
    async fn get_merchant(
        &self,
        scope: &Scope,
        id: &MerchantId,
    ) -> Result<Option<Merchant>, StoreError>;
    /// Newest first; `starting_after` is the id of the last merchant of the previous page.
    async fn list_merchants(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<Merchant>, StoreError>;
    /// Changes only the fields the patch carries, and `updated_on`, in one statement (two
    /// concurrent patches of different fields both take effect). Returns the merchant as it now
    /// is, or `NotFound` when it does not exist in that scope or is deleted. Its
    /// `merchant.updated` event (id `event`) is written in the same SQL transaction.
    async fn update_merchant_with_event(
        &self,
        scope: &Scope,
        id: &MerchantId,
        patch: &MerchantPatch,
        at: OffsetDateTime,
        event: &EventId,
    ) -> Result<Merchant, StoreError>;
    /// Marks the merchant deleted (its past payments keep pointing at it), with its
    /// `merchant.deleted` event, in one SQL transaction.
    /// Returns `NotFound` when it does not exist or is already deleted.
    async fn delete_merchant_with_event(
        &self,
        scope: &Scope,
        id: &MerchantId,
        at: OffsetDateTime,
        event: &EventId,
    ) -> Result<(), StoreError>;
}

mod ach;
mod audit;
mod boarding;
mod cards;
mod compliance;
mod dashboard;
mod delivery_hints;
mod events;
mod idempotency;
mod ledger;
mod loans;
mod notices;
mod outbound;
mod payments;
mod payouts;
mod webhooks;

pub use ach::*;
pub use audit::*;
pub use boarding::*;
pub use cards::*;
pub use compliance::*;
pub use dashboard::*;
pub use delivery_hints::*;
pub use events::*;
pub use idempotency::*;
pub use ledger::*;
pub use loans::*;
pub use notices::*;
pub use outbound::*;
pub use payments::*;
pub use payouts::*;
pub use webhooks::*;
