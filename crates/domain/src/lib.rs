#![warn(missing_docs)]
#![doc = include_str!("../README.md")]

/// Declares one of the domain's word enums: a value the API and storage spell as a word, with
/// strum's parsing and spelling (its `#[strum]` attributes say how), every value in declaration
/// order (`ALL`) and the word for a value (`as_str`). Defined here, before the modules, so each module can call it.
macro_rules! words {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($body:tt)* }) => {
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            strum::EnumString,
            strum::IntoStaticStr,
            strum::VariantArray,
        )]
        $(#[$meta])*
        $vis enum $name { $($body)* }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = <$name as strum::VariantArray>::VARIANTS;

            /// The word the API and storage use for this value.
            pub fn as_str(self) -> &'static str {
                self.into()
            }

            /// `raw` as one of these words, or refused under `field` listing them (never
            /// repeating what was sent).
            pub fn from_word(field: &'static str, raw: &str) -> Result<Self, $crate::Invalid> {
                raw.parse().map_err(|_| {
                    let words: Vec<&str> = Self::ALL.iter().map(|w| w.as_str()).collect();
                    $crate::Invalid::new(field, format!("must be one of {}", words.join(", ")))
                })
            }
        }

        /// Written as its word.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        #[cfg(feature = "openapi")]
        $crate::schema::schema_of!(
            $name,
            $crate::schema::one_of_words($name::ALL.iter().map(|w| w.as_str()))
        );
    };
}
pub(crate) use words;

pub mod api_key;
pub mod audit;
pub mod auth;
pub mod boarding;
pub mod compliance;
pub mod dashboard;
pub mod idempotency;
pub mod ids;
pub mod instant;
pub mod ledger;
pub mod loan;
pub mod merchant;
pub mod metadata;
pub mod mode;
pub mod money;
pub mod page;
pub mod payment;
pub mod payout;
pub mod platform;
pub mod ports;
#[cfg(feature = "openapi")]
pub mod schema;
pub mod scope;
pub mod services;
mod text;
pub mod user;
pub mod webhook;

/// A field-level validation failure: which field, and what rule it broke.
///
/// Adapters turn it into a 400 that names `field` (the API's camelCase name).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct Invalid {
    /// The offending field, by its camelCase API name.
    pub field: &'static str,
    /// The rule the value broke, in words fit to show the caller.
    pub message: String,
}

impl Invalid {
    /// A failure of `field` described by `message`.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}
