//! Card data at rest: the vault that seals it and the tokens that hold it sealed.

use crate::scope::Scope;
use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;
use crate::idempotency::KeyedAnswer;

/// Card data sealed by the vault: which key, the nonce, and the ciphertext with its tag.
#[derive(Clone, PartialEq, Eq)]
pub struct Sealed {
    /// The id of the vault key that sealed it, so it still opens after a key rotation.
    pub key_id: String,
    /// The nonce used for this sealing, never reused under the same key.
    pub nonce: Vec<u8>,
    /// The encrypted card data followed by its authentication tag.
    pub ciphertext: Vec<u8>,
}

impl Sealed {
    const TEXT_PREFIX: &'static str = "sealed:v1:";

    /// As text, for a text column: `sealed:v1:{key id}:{nonce, hex}:{ciphertext, hex}`.
    pub fn to_text(&self) -> String {
        format!(
            "{}{}:{}:{}",
            Self::TEXT_PREFIX,
            self.key_id,
            hex(&self.nonce),
            hex(&self.ciphertext)
        )
    }

    /// Whether `text` is written as `to_text` writes (whatever it holds).
    pub fn is_text(text: &str) -> bool {
        text.starts_with(Self::TEXT_PREFIX)
    }

    /// What `to_text` wrote; `None` for anything else.
    pub fn from_text(text: &str) -> Option<Self> {
        let mut parts = text.strip_prefix(Self::TEXT_PREFIX)?.splitn(3, ':');
        let (key_id, nonce, ciphertext) = (parts.next()?, parts.next()?, parts.next()?);
        Some(Self {
            key_id: key_id.to_owned(),
            nonce: unhex(nonce)?,
            ciphertext: unhex(ciphertext)?,
        })
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut text, b| {
        let _ = write!(text, "{b:02x}");
        text
    })
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}

impl std::fmt::Debug for Sealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Sealed(key {}, {} bytes)",
            self.key_id,
            self.ciphertext.len()
        )
    }
}

/// Why sealed card data could not be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VaultError {
    /// The data names a vault key (by id) that the vault no longer holds.
    #[error("no vault key with id {0}")]
    UnknownKey(String),
    /// Wrong key, wrong context, or altered ciphertext.
    #[error("sealed card data does not open")]
    Corrupt,
}

/// Encryption of card data at rest.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait CardVault: Send + Sync {
    /// Seals `secret`, bound to `context` (the token id): it opens only with the same context.
    fn seal(&self, context: &str, secret: &str) -> Sealed;
    /// Opens what `seal` produced with the same `context`, giving back the secret.
    fn open(&self, context: &str, sealed: &Sealed) -> Result<String, VaultError>;
}

/// Storage of card tokens, scoped to a platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TokenStore: Send + Sync {
    /// Writes the token and the request's idempotent `reply`, if any, in one SQL transaction.
    async fn save(
        &self,
        token: &crate::payment::token::Token,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError>;

    /// Takes token `id` for one payment on `terms`, in one SQL transaction: the token must be
    /// usable (in this platform and mode; a single-use one unused and unexpired at
    /// `terms.now`), and a client session it was made under must be open, unexpired and held by
    /// no other payment; `terms.admit` then sees both. If all hold, a single-use token is marked
    /// used and its sealed card erased from its row (the returned token is the only copy left,
    /// held for the one payment), and the session is held until `terms.hold_until()`. Anything
    /// else changes nothing. Of two payments racing for one token, or for two tokens of one
    /// session, one gets it.
    async fn take(
        &self,
        scope: &Scope,
        id: &crate::ids::TokenId,
        terms: &crate::payment::token::TakeTerms,
    ) -> Result<crate::payment::token::Taken, StoreError>;

    /// Reads a token without using it, whatever its state; `None` when it does not exist in this
    /// platform and mode.
    async fn find(
        &self,
        scope: &Scope,
        id: &crate::ids::TokenId,
    ) -> Result<Option<crate::payment::token::Token>, StoreError>;

    /// Deletes token `id` of this platform and mode, its sealed card with it, in one
    /// statement; `NotFound` when there is no such token.
    async fn delete(&self, scope: &Scope, id: &crate::ids::TokenId) -> Result<(), StoreError>;

    /// Erases the sealed card of every single-use token that expired unused by `now` (the rows
    /// stay); returns how many were erased.
    async fn erase_expired(&self, now: OffsetDateTime) -> Result<usize, StoreError>;

    /// Records that wallet payment `message_id` of `wallet` has made a token; `false` when it
    /// already had (one statement: of two racing, one wins).
    async fn claim_wallet_payment(
        &self,
        wallet: crate::payment::wallet::WalletKind,
        message_id: &str,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError>;
}

/// Storage of client sessions, scoped to a platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ClientSessionStore: Send + Sync {
    /// Writes the session and the request's idempotent `reply`, if any, in one SQL transaction.
    async fn save(
        &self,
        session: &crate::payment::client_session::ClientSession,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError>;

    /// Reads a session; `None` when it does not exist in this platform and mode.
    async fn find(
        &self,
        scope: &Scope,
        id: &crate::ids::ClientSessionId,
    ) -> Result<Option<crate::payment::client_session::ClientSession>, StoreError>;

    /// Cancels a session that is open, unexpired and held by no payment at `now`, in one
    /// statement: of a cancel racing a payment, one wins. Returns the session as it is
    /// afterwards, or `None` when it could not be canceled (or does not exist in this platform
    /// and mode).
    async fn cancel(
        &self,
        scope: &Scope,
        id: &crate::ids::ClientSessionId,
        now: OffsetDateTime,
    ) -> Result<Option<crate::payment::client_session::ClientSession>, StoreError>;

    /// Ends hold `held` of a payment that did not succeed, so the session takes another token;
    /// a hold that is no longer the session's (another payment's since) is left alone.
    async fn release(
        &self,
        scope: &Scope,
        held: &crate::payment::token::HeldSession,
    ) -> Result<(), StoreError>;
}

/// Apple Pay's merchant validation: asks Apple's gateway for a merchant session, presenting the
/// merchant identity certificate (mutual TLS). Wired only when that certificate is configured.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait ApplePayGateway: Send + Sync {
    /// The session Apple answered for `request`, as the JSON object it sent.
    async fn start_session(
        &self,
        request: &crate::payment::wallet::MerchantValidation,
    ) -> Result<String, crate::payment::wallet::GatewayFailure>;
}

/// Opens wallet tokens addressed to Holdfast, with the keys of the caller's mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait WalletOpener: Send + Sync {
    /// The card inside `token` (as the wallet gave it to the page), checked as of `now`.
    fn open(
        &self,
        kind: crate::payment::wallet::WalletKind,
        mode: crate::mode::Mode,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<crate::payment::wallet::WalletCard, crate::payment::wallet::WalletRefusal>;
}
