//! The API key (spec 2.1, 3.1): its name, its secret value, and its lifecycle.

mod name;
mod state;
mod value;

pub use name::KeyName;
pub use state::{KeyEvent, KeyStatus, KeyTransition, TransitionRefused};
pub use value::{KeyHash, KeyValue, MalformedKey, SECRET_ALPHABET, SECRET_LEN};

use time::OffsetDateTime;

use crate::ids::{KeyId, PlatformId, UserId};
use crate::mode::{KeyType, Mode};

/// A stored API key. It never holds the secret value: only its hash and last four characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub id: KeyId,
    pub platform_id: PlatformId,
    pub name: KeyName,
    pub key_type: KeyType,
    /// Fixed at creation (spec 3.1: "mode never changes"); there is no setter anywhere.
    pub mode: Mode,
    pub status: KeyStatus,
    pub hash: KeyHash,
    pub last4: String,
    /// The user who generated the key; webhook subscriptions created with it name this user as
    /// their creator.
    pub created_by: UserId,
    pub created_on: OffsetDateTime,
    pub last_used_on: Option<OffsetDateTime>,
}

impl ApiKey {
    pub fn is_active(&self) -> bool {
        self.status == KeyStatus::Active
    }
}
