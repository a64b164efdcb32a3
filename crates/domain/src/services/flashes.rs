//! What a dashboard page shows once, after the change that led to it: a new key's value, or a
//! word saying what was done. The change's form posts, the server keeps the flash on the session
//! (sealed by the vault, so a key value is never in the database in clear) and redirects; the
//! page that follows takes it, which clears it. A reload then shows neither the value nor the
//! notice, and makes nothing twice.

use std::sync::Arc;

use crate::dashboard::{BearerSecret, SignedIn};
use crate::ids::KeyId;
use crate::ports::{CardVault, CredentialStore, Sealed, StoreError};

/// One page's worth of news.
#[derive(Clone, PartialEq, Eq)]
pub enum Flash {
    /// A change was made: the word its page turns into a sentence (`renamed`, `enabled`…).
    Notice(String),
    /// A key was made: shown this once.
    KeyCreated {
        /// The new key.
        id: KeyId,
        /// Its full value.
        value: String,
    },
}

impl std::fmt::Debug for Flash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Notice(word) => write!(f, "Notice({word})"),
            Self::KeyCreated { id, .. } => write!(f, "KeyCreated({id}, value redacted)"),
        }
    }
}

impl Flash {
    fn to_text(&self) -> String {
        match self {
            Self::Notice(word) => format!("notice\n{word}"),
            Self::KeyCreated { id, value } => format!("key\n{id}\n{value}"),
        }
    }

    fn from_text(text: &str) -> Option<Self> {
        let mut lines = text.split('\n');
        match (lines.next()?, lines.next()?, lines.next(), lines.next()) {
            ("notice", word, None, None) => Some(Self::Notice(word.to_owned())),
            ("key", id, Some(value), None) => Some(Self::KeyCreated {
                id: KeyId::from_trusted(id.to_owned()),
                value: value.to_owned(),
            }),
            _ => None,
        }
    }
}

/// Flashes kept on dashboard sessions.
#[derive(Clone)]
pub struct Flashes {
    credentials: Arc<dyn CredentialStore>,
    vault: Arc<dyn CardVault>,
}

impl std::fmt::Debug for Flashes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Flashes")
    }
}

impl Flashes {
    /// Flashes kept by `credentials`, sealed by `vault`.
    pub fn new(credentials: Arc<dyn CredentialStore>, vault: Arc<dyn CardVault>) -> Self {
        Self { credentials, vault }
    }

    /// Keeps `flash` for `page` of the session `secret` names, replacing any other.
    pub async fn leave(
        &self,
        secret: &BearerSecret,
        page: &str,
        flash: &Flash,
    ) -> Result<(), StoreError> {
        let hash = secret.hash();
        let sealed = self.vault.seal(&context(&hash), &flash.to_text());
        self.credentials
            .set_session_flash(&hash, page, &sealed.to_text())
            .await
    }

    /// The flash left for `page` on the session `secret` names (`who` as it was read), if any;
    /// taking it clears it, and another page's flash stays for that page (a second tab cannot
    /// eat a new key's value). A page no flash waits for asks the store nothing. One that no
    /// longer opens (the vault's key changed) is dropped.
    pub async fn take(
        &self,
        who: &SignedIn,
        secret: &BearerSecret,
        page: &str,
    ) -> Result<Option<Flash>, StoreError> {
        if who.flash_for.as_deref() != Some(page) {
            return Ok(None);
        }
        let hash = secret.hash();
        let Some(stored) = self.credentials.take_session_flash(&hash, page).await? else {
            return Ok(None);
        };
        Ok(Sealed::from_text(&stored)
            .and_then(|sealed| self.vault.open(&context(&hash), &sealed).ok())
            .and_then(|text| Flash::from_text(&text)))
    }
}

/// A flash opens only on the session it was left on.
fn context(hash: &crate::api_key::KeyHash) -> String {
    use base64::Engine as _;
    let id = base64::engine::general_purpose::STANDARD_NO_PAD.encode(hash.as_bytes());
    format!("flash:{id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flash_reads_back_as_it_was_written_and_nothing_else_reads() {
        for flash in [
            Flash::Notice("renamed".into()),
            Flash::KeyCreated {
                id: KeyId::from_trusted("key_01".into()),
                value: "priv_test_abc".into(),
            },
        ] {
            assert_eq!(Flash::from_text(&flash.to_text()), Some(flash.clone()));
        }
        for other in ["", "notice", "key\nkey_01", "key\na\nb\nc", "other\nx"] {
            assert_eq!(Flash::from_text(other), None, "{other:?}");
        }
        let key = Flash::KeyCreated {
            id: KeyId::from_trusted("key_01".into()),
            value: "priv_test_abc".into(),
        };
        assert!(!format!("{key:?}").contains("priv_test_abc"));
    }
}
