//! Who accepted a loan's offer, when and from where: the merchant on its hosted page, or the
//! platform on its behalf with the merchant's consent on record (docs/loans.md).

use serde::Serialize;
use time::OffsetDateTime;

use crate::Invalid;

crate::words! {
    /// Who accepted.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum AcceptedBy {
        /// The merchant, on the offer's hosted page.
        Merchant,
        /// The platform, through the API, with the merchant's recorded consent.
        Platform,
    }
}

/// The longest a name or a consent reference may be.
pub const MAX_TEXT: usize = 200;

/// An acceptance, as recorded. Its `Serialize` is the API's shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Acceptance {
    /// The merchant on its page, or the platform for it.
    pub by: AcceptedBy,
    /// The name of the person who accepted (typed on the page, or the one the platform's
    /// consent names).
    pub name: String,
    /// The platform's reference to the merchant's consent it holds (a signed document's id);
    /// `None` when the merchant accepted on its page.
    pub consent_reference: Option<String>,
    /// The address the acceptance came from.
    pub address: String,
    /// When.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub accepted_on: OffsetDateTime,
}

/// `raw` as a name or reference under `field`: the rule of every free-text name
/// (`text::bounded_text`: NFC, trimmed, no control, invisible or direction-changing
/// character), 1 to `MAX_TEXT` characters.
pub fn accepted_text(field: &'static str, raw: &str) -> Result<String, Invalid> {
    crate::text::bounded_text(field, raw, 1, MAX_TEXT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_references_follow_the_rule_of_names() {
        assert_eq!(
            accepted_text("name", "  Ada Lovelace ").unwrap(),
            "Ada Lovelace"
        );
        let bad = [
            "",
            "   ",
            "a\u{0}b",
            "line\nbreak",
            "Ada \u{202e}ecalevoL",
            "Ada\u{200b}Lovelace",
        ];
        for raw in bad
            .iter()
            .map(|b| (*b).to_owned())
            .chain(["x".repeat(MAX_TEXT + 1)])
        {
            let refused = accepted_text("name", &raw).unwrap_err();
            assert_eq!(refused.field, "name");
            assert!(
                raw.trim().is_empty() || !refused.message.contains(raw.trim()),
                "{raw:?}"
            );
        }
        assert!(accepted_text("name", &"é".repeat(MAX_TEXT)).is_ok());
    }
}
