//! What a platform attaches to its merchants, transactions, tokens and webhook subscriptions
//! for its own books: up to 50 key/value pairs, Stripe's limits. Stored in clear and shown
//! wherever the object is (in its events too, never to a public key), so no value may hold a
//! card number.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::Invalid;
use crate::payment::card::could_be_card_number;
use crate::text::bounded_text;

/// A platform's key/value pairs on one of its objects.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Metadata(BTreeMap<String, String>);

impl Metadata {
    /// The most keys.
    pub const MAX_KEYS: usize = 50;
    /// The longest key, in characters.
    pub const MAX_KEY_CHARS: usize = 40;
    /// The longest value, in characters.
    pub const MAX_VALUE_CHARS: usize = 500;

    /// Checks pairs as a client sent them: up to 50 keys of 1 to 40 letters, digits, `_`, `-`,
    /// `.` or `:`, each value 1 to 500 characters that hold no card number.
    pub fn parse(entries: BTreeMap<String, String>) -> Result<Self, Invalid> {
        const FIELD: &str = "metadata";
        if entries.len() > Self::MAX_KEYS {
            return Err(Invalid::new(FIELD, "may have at most 50 keys"));
        }
        let mut checked = BTreeMap::new();
        for (key, value) in entries {
            let key_fits = (1..=Self::MAX_KEY_CHARS).contains(&key.len())
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'));
            if !key_fits {
                return Err(Invalid::new(
                    FIELD,
                    "has a key that is not 1 to 40 letters, digits, '_', '-', '.' or ':'",
                ));
            }
            let value = bounded_text(FIELD, &value, 1, Self::MAX_VALUE_CHARS)
                .map_err(|e| Invalid::new(FIELD, format!("{key}: {}", e.message)))?;
            if could_be_card_number(&value) {
                return Err(Invalid::new(
                    FIELD,
                    format!("{key}: must not hold a card number"),
                ));
            }
            checked.insert(key, value);
        }
        Ok(Self(checked))
    }

    /// Rebuilds pairs read back from storage, where they were checked on the way in.
    pub fn from_trusted(entries: BTreeMap<String, String>) -> Self {
        Self(entries)
    }

    /// The pairs, by key.
    pub fn entries(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// Whether it has no pair.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value of `key`, if it has one.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn metadata_keeps_stripes_limits() {
        let ok = Metadata::parse(pairs(&[("order_id", "42"), ("customer.tier", "gold")])).unwrap();
        assert_eq!(ok.get("order_id"), Some("42"));
        let fifty: BTreeMap<String, String> =
            (0..50).map(|i| (format!("k{i}"), "v".to_owned())).collect();
        assert!(Metadata::parse(fifty.clone()).is_ok());
        let mut fifty_one = fifty;
        fifty_one.insert("k50".into(), "v".into());
        assert!(Metadata::parse(fifty_one).is_err());
        let long_key = "k".repeat(41);
        let long_value = "v".repeat(501);
        for bad in [
            pairs(&[(long_key.as_str(), "v")]),
            pairs(&[("", "v")]),
            pairs(&[("white space", "v")]),
            pairs(&[("k", long_value.as_str())]),
            pairs(&[("k", "")]),
            pairs(&[("k", "tab\tinside")]),
            pairs(&[("card", "5555-5555-5555-4444")]),
        ] {
            assert!(Metadata::parse(bad.clone()).is_err(), "{bad:?}");
        }
        // A refusal never repeats the value.
        let refused = Metadata::parse(pairs(&[("card", "5555555555554444")])).unwrap_err();
        assert!(!refused.message.contains("5555"), "{}", refused.message);
    }
}

#[cfg(feature = "openapi")]
crate::schema::schema_of!(
    Metadata,
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Object)
        .description(Some(
            "Your own key/value pairs: up to 50 keys of 1 to 40 letters, digits, `_`, `-`, `.` \
             or `:`, each value 1 to 500 characters (the rule of names) holding no card \
             number. Shown wherever the object is, in its events too, never to a public key."
        ))
        .max_properties(Some(Metadata::MAX_KEYS))
        .property_names(Some(
            utoipa::openapi::schema::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .pattern(Some("^[A-Za-z0-9_.:\\-]{1,40}$"))
        ))
        .additional_properties(Some(
            utoipa::openapi::schema::ObjectBuilder::new()
                .schema_type(utoipa::openapi::schema::Type::String)
                .pattern(Some(crate::schema::rules::name_pattern()))
                .min_length(Some(1))
                .max_length(Some(Metadata::MAX_VALUE_CHARS))
        ))
        .into()
);
