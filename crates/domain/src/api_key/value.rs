use std::fmt;

use sha2::{Digest, Sha256};

use crate::mode::{KeyType, Mode};

/// Length of the identifier after the prefix (spec 2.1, 8).
pub const SECRET_LEN: usize = 26;

/// The 62-letter alphabet of the identifier: ASCII digits and letters.
pub const SECRET_ALPHABET: [char; 62] = [
    '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I',
    'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', 'a', 'b',
    'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's', 't', 'u',
    'v', 'w', 'x', 'y', 'z',
];

/// The prefix table of spec 2.1. `priv_test_` is tried before `priv_` only for clarity: a live
/// identifier cannot contain `_`, so no value matches two rows.
const PREFIXES: [(&str, KeyType, Mode); 4] = [
    ("pub_test_", KeyType::Public, Mode::Test),
    ("pub_", KeyType::Public, Mode::Live),
    ("priv_test_", KeyType::Private, Mode::Test),
    ("priv_", KeyType::Private, Mode::Live),
];

/// The full secret value of a key: `{prefix}{26 alphanumerics}`.
///
/// `Debug` is redacted so a value can never reach a log through `{:?}`.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyValue {
    value: String,
    key_type: KeyType,
    mode: Mode,
}

/// A presented credential that cannot be a key of ours. Deliberately carries no detail: the
/// caller answers 401 exactly as for an unknown key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("not a well-formed API key")]
pub struct MalformedKey;

impl KeyValue {
    /// The prefix the spec 2.1 table gives to a key of this type and mode, e.g. `priv_test_`.
    pub fn prefix_for(key_type: KeyType, mode: Mode) -> &'static str {
        PREFIXES
            .iter()
            .find(|(_, t, m)| *t == key_type && *m == mode)
            .map(|(p, _, _)| *p)
            .expect("the prefix table covers every type and mode")
    }

    /// Builds a new value from a random identifier drawn by the `Ids` port.
    pub fn generate(key_type: KeyType, mode: Mode, secret: &str) -> Result<Self, MalformedKey> {
        Self::parse(&format!("{}{secret}", Self::prefix_for(key_type, mode)))
    }

    /// Reads a presented credential, recognising its type and mode from the prefix; refuses
    /// anything not a known prefix followed by exactly 26 ASCII alphanumerics.
    pub fn parse(raw: &str) -> Result<Self, MalformedKey> {
        let (prefix, key_type, mode) = PREFIXES
            .iter()
            .find(|(p, _, _)| raw.starts_with(p))
            .ok_or(MalformedKey)?;
        let secret = &raw[prefix.len()..];
        if secret.len() != SECRET_LEN || !secret.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(MalformedKey);
        }
        Ok(Self {
            value: raw.to_owned(),
            key_type: *key_type,
            mode: *mode,
        })
    }

    /// Whether this is a public or private key, as read from the prefix.
    pub fn key_type(&self) -> KeyType {
        self.key_type
    }

    /// The test or live mode the key belongs to, as read from the prefix.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The full value, for the one response that shows it at creation.
    pub fn expose(&self) -> &str {
        &self.value
    }

    /// The last four characters, safe to store and show so a key can be recognised later.
    pub fn last4(&self) -> String {
        self.value[self.value.len() - 4..].to_owned()
    }

    /// The digest stored in place of the value and used to look the key up.
    pub fn hash(&self) -> KeyHash {
        KeyHash::of(&self.value)
    }
}

impl fmt::Debug for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KeyValue({}…{})",
            Self::prefix_for(self.key_type, self.mode),
            self.last4()
        )
    }
}

/// SHA-256 of the full key value. Keys carry 26×log2(62) ≈ 155 bits of entropy, so a fast hash is
/// safe here (no dictionary to attack) and keeps the per-request key check to one indexed lookup.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyHash([u8; 32]);

impl KeyHash {
    /// Hashes a full key value as presented.
    pub fn of(value: &str) -> Self {
        Self(Sha256::digest(value.as_bytes()).into())
    }

    /// Rebuilds a hash read back from storage.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The raw 32-byte digest, for storage.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "abcdefghijklmnopqrstuvwxyz";

    #[test]
    fn prefix_table_of_spec_2_1() {
        let table = [
            (KeyType::Public, Mode::Test, "pub_test_"),
            (KeyType::Public, Mode::Live, "pub_"),
            (KeyType::Private, Mode::Test, "priv_test_"),
            (KeyType::Private, Mode::Live, "priv_"),
        ];
        for (key_type, mode, prefix) in table {
            assert_eq!(KeyValue::prefix_for(key_type, mode), prefix);
            let value = KeyValue::generate(key_type, mode, SECRET).unwrap();
            assert_eq!(value.expose(), format!("{prefix}{SECRET}"));
            let parsed = KeyValue::parse(value.expose()).unwrap();
            assert_eq!(
                (parsed.key_type(), parsed.mode()),
                (key_type, mode),
                "{prefix}"
            );
        }
    }

    #[test]
    fn identifier_must_be_exactly_26_alphanumerics() {
        let cases = [
            (format!("priv_test_{SECRET}"), true),
            (format!("priv_test_{}", &SECRET[..25]), false),
            (format!("priv_test_{SECRET}a"), false),
            (format!("priv_test_{}-", &SECRET[..25]), false),
            (format!("priv_test_{}é", &SECRET[..24]), false),
            (format!("secret_{SECRET}"), false),
            (format!("PRIV_{SECRET}"), false),
            (format!("priv_{SECRET}"), true),
            (String::new(), false),
        ];
        for (raw, ok) in cases {
            assert_eq!(KeyValue::parse(&raw).is_ok(), ok, "{raw:?}");
        }
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let value = KeyValue::generate(KeyType::Private, Mode::Live, SECRET).unwrap();
        let shown = format!("{value:?}");
        assert!(!shown.contains(SECRET), "{shown}");
        assert!(shown.contains("wxyz"));
    }

    #[test]
    fn hash_and_last4() {
        let value = KeyValue::generate(KeyType::Public, Mode::Test, SECRET).unwrap();
        assert_eq!(value.last4(), "wxyz");
        assert_eq!(value.hash(), KeyHash::of(&format!("pub_test_{SECRET}")));
        assert_ne!(value.hash(), KeyHash::of(&format!("pub_{SECRET}")));
    }
}
