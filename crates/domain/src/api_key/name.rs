use std::fmt;

use crate::Invalid;
use crate::text::bounded_text;

/// A key's display name: 3 to 25 characters (spec 2.1, 8).
///
/// Characters are counted as a reader sees them (extended grapheme clusters, after NFC), so
/// "Clé" is three characters, not four bytes, and 👩‍💻 is one. Leading and trailing whitespace
/// is removed before counting and is not stored: "  ab  " is a two-character name and is
/// refused. Control and invisible format characters are refused anywhere (see `text`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyName(String);

impl KeyName {
    /// Fewest characters a name may have after trimming (spec 8).
    pub const MIN_CHARS: usize = 3;
    /// Most characters a name may have after trimming (spec 8).
    pub const MAX_CHARS: usize = 25;

    /// Trims and checks a submitted name, refusing it under the field `name` when out of bounds.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        bounded_text("name", raw, Self::MIN_CHARS, Self::MAX_CHARS).map(Self)
    }

    /// The trimmed name as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for KeyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_bounds_in_user_perceived_characters() {
        let cases: [(&str, bool); 12] = [
            ("ab", false),
            ("abc", true),
            (&"a".repeat(25), true),
            (&"a".repeat(26), false),
            ("", false),
            // Multi-byte: three characters but six bytes.
            ("éàü", true),
            // Two characters even though four bytes each.
            ("😀😀", false),
            ("😀😀😀", true),
            (&"é".repeat(25), true),
            (&"é".repeat(26), false),
            ("   ", false),
            ("a\nb", false),
        ];
        for (raw, ok) in cases {
            assert_eq!(KeyName::parse(raw).is_ok(), ok, "{raw:?}");
        }
    }

    #[test]
    fn surrounding_whitespace_is_trimmed_before_counting() {
        assert_eq!(
            KeyName::parse("  Backend  ").map(|n| n.0),
            Ok("Backend".into())
        );
        assert!(KeyName::parse("  ab  ").is_err());
        let padded = format!(" {} ", "a".repeat(25));
        assert!(KeyName::parse(&padded).is_ok());
    }

    #[test]
    fn refusal_names_the_field() {
        let err = KeyName::parse("ab").unwrap_err();
        assert_eq!(err.field, "name");
        assert!(err.message.contains("3 to 25"), "{}", err.message);
    }
}
