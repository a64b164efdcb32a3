//! What a merchant attaches to a transaction for its own books: its `reference` (an order
//! number) and [`Metadata`]. Both are stored in clear and shown wherever the transaction is, in
//! its events too, so neither may hold a card number.

use serde::Serialize;

use crate::Invalid;
use crate::metadata::Metadata;
use crate::payment::card::could_be_card_number;
use crate::text::bounded_text;

/// A transaction's reference and metadata, as asked for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// The merchant's own reference, if it gave one.
    pub reference: Option<Reference>,
    /// Its key/value pairs; empty when it gave none.
    pub metadata: Metadata,
}

/// A merchant's own reference for a transaction: 1 to 128 characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Reference(String);

impl Reference {
    /// The longest reference, in characters.
    pub const MAX_CHARS: usize = 128;

    /// Checks a reference as a client sent it, under `field`.
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
        let text = bounded_text(field, raw, 1, Self::MAX_CHARS)?;
        if could_be_card_number(&text) {
            return Err(Invalid::new(field, "must not hold a card number"));
        }
        Ok(Self(text))
    }

    /// Rebuilds a reference read back from storage, where it was checked on the way in.
    pub fn from_trusted(raw: String) -> Self {
        Self(raw)
    }

    /// The reference as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_is_a_name_that_holds_no_card_number() {
        assert_eq!(
            Reference::parse("reference", " order-42 ")
                .unwrap()
                .as_str(),
            "order-42"
        );
        assert!(Reference::parse("reference", "Commande n°42").is_ok());
        assert!(
            Reference::parse("reference", "100000123456").is_ok(),
            "a long order number"
        );
        for bad in [
            "",
            "   ",
            "a\u{7}b",
            "4111 1111 1111 1111",
            "card:4111111111111111",
        ] {
            assert!(Reference::parse("reference", bad).is_err(), "{bad:?}");
        }
        assert!(Reference::parse("reference", &"x".repeat(129)).is_err());
    }
}

#[cfg(feature = "openapi")]
crate::schema::schema_of!(Reference, {
    let mut schema = crate::schema::rules::name(Reference::MAX_CHARS);
    if let utoipa::openapi::RefOr::T(utoipa::openapi::Schema::Object(object)) = &mut schema {
        object.description = Some(
            "The merchant's own reference (an order number): 1 to 128 characters, the rule of \
             names, holding no card number. Transactions are listed by it (`reference=`)."
                .to_owned(),
        );
    }
    schema
});
