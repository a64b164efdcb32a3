//! The rule shared by every free-text name.
//!
//! A name is read by people in lists, emails and dashboards, so it must look like what it is:
//! stored in NFC (the same name is always the same bytes), with no control character and no
//! invisible format character (zero-width spaces, bidirectional overrides that make
//! `"Shop \u{202e}gnp.exe"` display as `Shop exe.png`). The two format characters that emoji
//! need are let through where they build an emoji: the zero-width joiner between two emoji
//! (👩‍💻) and the tag characters of a subdivision flag. Length is counted in what a reader sees
//! as one character (an extended grapheme cluster), so `é` and 👩‍💻 count one each.

use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeEmoji, UnicodeGeneralCategory};
use unicode_segmentation::UnicodeSegmentation;

use crate::Invalid;

const ZWJ: char = '\u{200d}';
const BLACK_FLAG: char = '\u{1f3f4}';

/// Normalises to NFC and trims surrounding whitespace, then requires `min..=max` user-perceived
/// characters and nothing invisible. Returns the normalised text, which is what is stored.
pub(crate) fn bounded_text(
    field: &'static str,
    raw: &str,
    min: usize,
    max: usize,
) -> Result<String, Invalid> {
    let normalised: String = raw.nfc().collect();
    let trimmed = normalised.trim();
    if trimmed.chars().any(char::is_control) {
        return Err(Invalid::new(field, "must not contain control characters"));
    }
    if !trimmed.graphemes(true).all(visible_cluster) {
        return Err(Invalid::new(
            field,
            "must not contain invisible or direction-changing characters",
        ));
    }
    let n = trimmed.graphemes(true).count();
    if n < min || n > max {
        return Err(Invalid::new(
            field,
            format!("must be {min} to {max} characters long (got {n})"),
        ));
    }
    Ok(trimmed.to_owned())
}

/// Whether every format character of one grapheme cluster is one an emoji needs there.
fn visible_cluster(cluster: &str) -> bool {
    let chars: Vec<char> = cluster.chars().collect();
    chars.iter().enumerate().all(|(i, &c)| {
        if c.general_category() != GeneralCategory::Format {
            return true;
        }
        let joins_emoji = c == ZWJ
            && chars[0].is_emoji_char()
            && !chars[0].is_ascii()
            && chars.get(i + 1).is_some_and(|next| next.is_emoji_char());
        let flag_tag = unicode_properties::emoji::is_tag_character(c) && chars[0] == BLACK_FLAG;
        joins_emoji || flag_tag
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(raw: &str) -> Result<String, Invalid> {
        bounded_text("name", raw, 3, 25)
    }

    #[test]
    fn invisible_and_direction_changing_characters_are_refused() {
        let refused = [
            "\u{200b}\u{200b}\u{200b}",
            "Shop\u{200b}",
            "Shop \u{202e}gnp.exe",
            "Shop \u{2066}x\u{2069}",
            "ab\u{feff}c",
            "Shop\u{ad}",
            "a\u{200d}bc",
            "1\u{200d}2x",
            "Shop\u{7}",
            "Sh\u{85}op",
            "abc\u{200d}",
        ];
        for raw in refused {
            assert!(check(raw).is_err(), "{raw:?}");
        }
    }

    #[test]
    fn emoji_sequences_and_accents_are_names() {
        let accepted = [
            "👩\u{200d}💻 dev",
            "👨\u{200d}👩\u{200d}👧\u{200d}👦 family",
            "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} Scots",
            "Crème brûlée",
            "東京ショップ",
            "متجر عربي",
        ];
        for raw in accepted {
            assert!(check(raw).is_ok(), "{raw:?}");
        }
    }

    #[test]
    fn length_counts_what_a_reader_sees() {
        let cases = [
            ("é".repeat(25), true),
            ("é".repeat(26), false),
            ("e\u{301}".repeat(25), true),
            ("e\u{301}".repeat(26), false),
            ("😀".repeat(25), true),
            ("😀".repeat(26), false),
            ("👩\u{200d}💻".repeat(25), true),
            ("👩\u{200d}💻".repeat(26), false),
            ("🇫🇷".repeat(25), true),
            ("ab".into(), false),
        ];
        for (raw, ok) in cases {
            assert_eq!(check(&raw).is_ok(), ok, "{raw:?}");
        }
    }

    #[test]
    fn names_are_stored_in_nfc() {
        assert_eq!(check("Cafe\u{301}").unwrap(), "Café");
        assert_eq!(check("  Café  ").unwrap(), "Café");
    }
}
