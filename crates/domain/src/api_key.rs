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
    /// The key's public identifier, shown in listings and used to manage it.
    pub id: KeyId,
    /// The platform the key belongs to and authenticates as.
    pub platform_id: PlatformId,
    /// The display name an operator gave the key; it can be changed (spec 2.1).
    pub name: KeyName,
    /// Whether the key is private (full server-side access) or public (tokenization only).
    pub key_type: KeyType,
    /// Fixed at creation (spec 3.1: "mode never changes"); there is no setter anywhere.
    pub mode: Mode,
    /// Whether the key currently authenticates requests (spec 3.1).
    pub status: KeyStatus,
    /// The hash a presented secret is checked against; the secret itself is never stored.
    pub hash: KeyHash,
    /// The secret's last four characters, so operators can recognise the key.
    pub last4: String,
    /// The user who generated the key; webhook subscriptions created with it name this user as
    /// their creator.
    pub created_by: UserId,
    /// When the key was generated.
    pub created_on: OffsetDateTime,
    /// Roughly when the key last authenticated a request (noted at most once per touch interval);
    /// `None` if it never has.
    pub last_used_on: Option<OffsetDateTime>,
}

impl ApiKey {
    /// Whether the key may authenticate requests: only active keys do (spec 3.1).
    pub fn is_active(&self) -> bool {
        self.status == KeyStatus::Active
    }
}
