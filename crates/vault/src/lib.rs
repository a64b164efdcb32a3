#![doc = include_str!("../README.md")]
// No input may stop the server (issue 37): what could panic is refused outside tests, and each
// proven-safe case says why in its `#[expect]`.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

mod password;

pub use password::Argon2Hasher;

use std::collections::HashMap;
use std::fmt;

use aes_gcm::aead::{Aead, Generate, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use holdfast_domain::idempotency::hmac_sha256;
use holdfast_domain::ports::{CardVault, Sealed, VaultError};

/// A 256-bit key with its id.
pub struct VaultKey {
    pub id: String,
    cipher: Aes256Gcm,
    /// HMAC key for request fingerprints, derived from the key (never the key itself).
    fingerprint_secret: [u8; 32],
}

impl fmt::Debug for VaultKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VaultKey({})", self.id)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("vault key {id:?}: {message}")]
    Invalid { id: String, message: String },
}

impl VaultKey {
    /// `id` (1 to 32 letters, digits, `-` or `_`) and 32 bytes, base64-encoded.
    pub fn from_base64(id: &str, key: &str) -> Result<Self, KeyError> {
        let bad = |message: &str| KeyError::Invalid {
            id: id.to_owned(),
            message: message.to_owned(),
        };
        let id_ok = (1..=32).contains(&id.len())
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !id_ok {
            return Err(bad("the id must be 1 to 32 letters, digits, - or _"));
        }
        let bytes = STANDARD
            .decode(key.trim())
            .map_err(|_| bad("the key is not base64"))?;
        let raw: [u8; 32] = bytes
            .as_slice()
            .try_into()
            .map_err(|_| bad("the key must be 32 bytes"))?;
        let cipher =
            Aes256Gcm::new_from_slice(&raw).map_err(|_| bad("the key must be 32 bytes"))?;
        Ok(Self {
            id: id.to_owned(),
            cipher,
            fingerprint_secret: hmac_sha256(&raw, &[b"holdfast idempotency fingerprint v1"]),
        })
    }

    /// A new random key, base64-encoded, for `holdfast`'s first start on an empty machine.
    pub fn generate_base64() -> String {
        STANDARD.encode(aes_gcm::Key::<Aes256Gcm>::generate())
    }
}

/// The vault: a current key that seals, and every key that may still open.
#[derive(Debug)]
pub struct AesGcmVault {
    current: String,
    keys: HashMap<String, VaultKey>,
}

impl AesGcmVault {
    /// `current` seals; `previous` keys only open what they sealed before a rotation.
    pub fn new(current: VaultKey, previous: Vec<VaultKey>) -> Self {
        let id = current.id.clone();
        let mut keys: HashMap<String, VaultKey> =
            previous.into_iter().map(|k| (k.id.clone(), k)).collect();
        keys.insert(id.clone(), current);
        Self { current: id, keys }
    }

    /// The secret that keys request fingerprints, derived from the current key, so every
    /// replica configured with the same key agrees on it.
    #[expect(
        clippy::indexing_slicing,
        reason = "`new` puts the current key in the map, and nothing removes it"
    )]
    pub fn fingerprint_secret(&self) -> [u8; 32] {
        self.keys[&self.current].fingerprint_secret
    }
}

impl CardVault for AesGcmVault {
    #[expect(
        clippy::indexing_slicing,
        clippy::expect_used,
        reason = "`new` puts the current key in the map; AES-GCM fails only past 64 GiB"
    )]
    fn seal(&self, context: &str, secret: &str) -> Sealed {
        let key = &self.keys[&self.current];
        let nonce = Nonce::generate();
        let ciphertext = key
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: secret.as_bytes(),
                    aad: context.as_bytes(),
                },
            )
            .expect("AES-GCM encryption of a short message cannot fail");
        Sealed {
            key_id: key.id.clone(),
            nonce: nonce.to_vec(),
            ciphertext,
        }
    }

    fn open(&self, context: &str, sealed: &Sealed) -> Result<String, VaultError> {
        let key = self
            .keys
            .get(&sealed.key_id)
            .ok_or_else(|| VaultError::UnknownKey(sealed.key_id.clone()))?;
        let nonce = Nonce::try_from(sealed.nonce.as_slice()).map_err(|_| VaultError::Corrupt)?;
        let plain = key
            .cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: &sealed.ciphertext,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| VaultError::Corrupt)?;
        String::from_utf8(plain).map_err(|_| VaultError::Corrupt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(id: &str) -> VaultKey {
        VaultKey::from_base64(id, &VaultKey::generate_base64()).unwrap()
    }

    #[test]
    fn seals_and_opens_bound_to_context() {
        let vault = AesGcmVault::new(key("k1"), vec![]);
        let sealed = vault.seal("tkn_1", "4111111111111111|1230");
        assert_eq!(sealed.key_id, "k1");
        assert!(
            !sealed
                .ciphertext
                .windows(16)
                .any(|w| w == b"4111111111111111")
        );
        assert_eq!(
            vault.open("tkn_1", &sealed).unwrap(),
            "4111111111111111|1230"
        );
        assert_eq!(
            vault.open("tkn_2", &sealed),
            Err(VaultError::Corrupt),
            "bound to its token"
        );
        let mut tampered = sealed.clone();
        tampered.ciphertext[0] ^= 1;
        assert_eq!(vault.open("tkn_1", &tampered), Err(VaultError::Corrupt));
        assert_ne!(
            vault.seal("tkn_1", "x").nonce,
            vault.seal("tkn_1", "x").nonce,
            "fresh nonces"
        );
    }

    #[test]
    fn rotation_keeps_old_data_readable() {
        let old_b64 = VaultKey::generate_base64();
        let before = AesGcmVault::new(VaultKey::from_base64("k1", &old_b64).unwrap(), vec![]);
        let sealed = before.seal("tkn_1", "secret");
        let after = AesGcmVault::new(
            key("k2"),
            vec![VaultKey::from_base64("k1", &old_b64).unwrap()],
        );
        assert_eq!(after.open("tkn_1", &sealed).unwrap(), "secret");
        assert_eq!(after.seal("tkn_1", "new").key_id, "k2");
        let forgotten = AesGcmVault::new(key("k2"), vec![]);
        assert_eq!(
            forgotten.open("tkn_1", &sealed),
            Err(VaultError::UnknownKey("k1".into()))
        );
    }

    #[test]
    fn key_configuration_errors_name_the_key() {
        for (id, key, message) in [
            ("k1", "not base64!", "not base64"),
            ("k1", "AAAA", "32 bytes"),
            ("", &VaultKey::generate_base64()[..], "the id"),
            ("k 1", &VaultKey::generate_base64()[..], "the id"),
        ] {
            let err = VaultKey::from_base64(id, key).unwrap_err().to_string();
            assert!(err.contains(message), "{err}");
        }
    }
}
