//! The schemas of the values a client sends, each stating the rule the domain enforces on it.
//!
//! A pattern here may be stricter than its rule, never looser: every string it allows, the
//! domain accepts (the tests below generate strings from each pattern and parse them), so a
//! generated client that checks the pattern never sends what the server refuses. What a pattern
//! cannot say (a Luhn check digit, a date not past, a length counted in user-perceived
//! characters) its description says.
//!
//! Patterns use only what ECMA-262, Python's `re` and Rust's `regex` read alike: character
//! classes with `\uXXXX` escapes, groups, alternation and bounded repetition.

use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};

/// Control characters: category Cc.
const CONTROL: &str = r"\u0000-\u001f\u007f-\u009f";
/// Format characters (category Cf) of the Basic Multilingual Plane. Those above it (musical
/// symbols, tags, a few scripts') are refused too, as the description says.
const FORMAT: &str = r"\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb";
/// White space outside the control characters, which a name is trimmed of.
const SPACE: &str = r"\u0020\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";

fn string(pattern: String, min: usize, max: usize, description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
        .min_length(Some(min))
        .max_length(Some(max))
        .description(Some(description))
}

/// The pattern of a free-text name: no control or invisible character, and none but
/// visible ones at either end.
pub fn name_pattern() -> String {
    format!("^[^{CONTROL}{FORMAT}{SPACE}]([^{CONTROL}{FORMAT}]*[^{CONTROL}{FORMAT}{SPACE}])?$")
}

/// A free-text name of 1 to `max` characters (`text::bounded_text`).
pub fn name(max: usize) -> RefOr<Schema> {
    string(
        name_pattern(),
        1,
        max,
        &format!(
            "1 to {max} characters as a reader counts them (an accented letter or an emoji is \
             one), stored in Unicode NFC; surrounding white space is trimmed; no control \
             character and no invisible or direction-changing one (zero-width spaces, \
             bidirectional overrides), but for the joiners and tags that build an emoji."
        ),
    )
    .into()
}

/// The pattern of an email address: visible ASCII, one `@`, a domain of two labels or more.
pub const EMAIL_PATTERN: &str = r"^[!-?A-~]+@[!-\-/-?A-~]+(\.[!-\-/-?A-~]+)+$";

/// An email address (`user::Email`).
pub fn email() -> RefOr<Schema> {
    string(
        EMAIL_PATTERN.to_owned(),
        3,
        254,
        "An email address like name@example.com: at most 254 bytes, no white space or control \
         character, one `@`, a domain with a dot and no empty label. The domain is stored in \
         lower case. (Non-ASCII addresses are accepted too; the pattern describes ASCII ones.)",
    )
    .into()
}

/// The most an amount may be, in minor units (`payment::amount::Amount`).
pub const AMOUNT_MAX: i64 = 99_999_999;

/// An amount in minor units.
pub fn amount() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
            utoipa::openapi::KnownFormat::Int64,
        )))
        .minimum(Some(1))
        .maximum(Some(AMOUNT_MAX))
        .description(Some(
            "In the currency's minor units (cents for USD, yen for JPY): 1 to 99999999.",
        ))
        .into()
}

/// The pattern of a card number; the Luhn check is in the description.
pub const CARD_NUMBER_PATTERN: &str = "^[0-9]{12,19}$";

/// A card number (`payment::card::CardNumber`).
pub fn card_number() -> RefOr<Schema> {
    string(
        CARD_NUMBER_PATTERN.to_owned(),
        12,
        19,
        "12 to 19 digits, no spaces, whose last digit is the Luhn check digit.",
    )
    .into()
}

/// The pattern of a card verification code.
pub const CVV_PATTERN: &str = "^[0-9]{3,4}$";

/// A card verification code, never stored.
pub fn cvv() -> RefOr<Schema> {
    string(
        CVV_PATTERN.to_owned(),
        3,
        4,
        "3 or 4 digits, whatever the brand; sent to the processor, never stored.",
    )
    .into()
}

/// The pattern of an expiration date, `MMYY`.
pub const EXPIRATION_PATTERN: &str = "^(0[1-9]|1[0-2])[0-9]{2}$";

/// A card's expiration date.
pub fn expiration() -> RefOr<Schema> {
    string(
        EXPIRATION_PATTERN.to_owned(),
        4,
        4,
        "MMYY (month 01 to 12, year 20YY), not before the current month in UTC.",
    )
    .into()
}

/// The pattern of an endpoint URL: `http` or `https`, a host of DNS labels, a port, and a path
/// and query of RFC 3986's characters.
pub fn endpoint_url_pattern() -> String {
    let port =
        "(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})";
    let tail = r"([A-Za-z0-9\-._~:/?@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*";
    format!(
        "^[Hh][Tt][Tt][Pp]([Ss])?://[A-Za-z0-9\\-]+(\\.[A-Za-z0-9\\-]+)*(:{port})?([/?]{tail})?$"
    )
}

/// A webhook endpoint (`webhook::EndpointUrl`).
pub fn endpoint_url() -> RefOr<Schema> {
    string(
        endpoint_url_pattern(),
        8,
        2048,
        "An absolute http:// or https:// URL of at most 2048 characters: RFC 3986's characters \
         only (percent-encode any other, a non-ASCII host in punycode), no user name or \
         password, no fragment, a port from 1 to 65535 if any. A bracketed IPv6 host is \
         accepted too. Where it may point is checked when a notification is sent (no private or \
         loopback address unless the operator allows it).",
    )
    .into()
}

/// What a header name may be made of: RFC 9110's token characters.
pub const HEADER_NAME_PATTERN: &str = r"^[A-Za-z0-9!#$%&'*+.^_`|~\-]{1,64}$";

/// `word` matched whatever its case, in a pattern.
fn any_case(word: &str) -> String {
    word.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// The header names a subscription cannot set, whatever their case.
pub fn reserved_header_pattern(reserved: &[&str]) -> String {
    let words: Vec<String> = reserved.iter().map(|w| any_case(w)).collect();
    format!("^(({})$|{})", words.join("|"), any_case("proxy-"))
}

/// What JSON Schema's `not` holds, carried by an extension: utoipa has no `not`, and the HTTP
/// door's document turns `x-not` into it.
pub const NOT_EXTENSION: &str = "x-not";

/// A custom header's name.
pub fn header_name(reserved: &[&str]) -> RefOr<Schema> {
    let not = serde_json::json!({
        "type": "string",
        "pattern": reserved_header_pattern(reserved),
        "description": "The headers Holdfast sets itself.",
    });
    string(
        HEADER_NAME_PATTERN.to_owned(),
        1,
        64,
        &format!(
            "A header name of 1 to 64 letters, digits or !#$%&'*+-.^_`|~; not one Holdfast sets \
             itself ({}, or any proxy-…), whatever its case.",
            reserved.join(", ")
        ),
    )
    .extensions(Some(
        utoipa::openapi::extensions::ExtensionsBuilder::new()
            .add(NOT_EXTENSION, not)
            .build(),
    ))
    .into()
}

/// The pattern of a header value: visible ASCII, spaces inside only.
pub const HEADER_VALUE_PATTERN: &str = "^[!-~]([ -~]{0,1022}[!-~])?$";

/// A custom header's value.
pub fn header_value() -> RefOr<Schema> {
    string(
        HEADER_VALUE_PATTERN.to_owned(),
        1,
        1024,
        "1 to 1024 visible ASCII characters; spaces inside only.",
    )
    .into()
}

/// An ASCII string of `pattern`, `min` to `max` long, described by `description`.
pub fn ascii(pattern: &str, min: usize, max: usize, description: &str) -> RefOr<Schema> {
    string(pattern.to_owned(), min, max, description).into()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::string::string_regex;

    use super::*;
    use crate::payment::card::{CardNumber, Cvv, Expiration};
    use crate::text::bounded_text;
    use crate::user::Email;
    use crate::webhook::{CustomHeader, EndpointUrl};

    /// The format characters above the Basic Multilingual Plane, which the pattern's escapes
    /// cannot name (its description does).
    fn astral_format(text: &str) -> bool {
        use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};
        text.chars()
            .any(|c| u32::from(c) > 0xffff && c.general_category() == GeneralCategory::Format)
    }

    /// The strings a whole-string pattern (`^…$`) matches.
    fn strings(pattern: &str) -> impl Strategy<Value = String> {
        let inner = pattern
            .strip_prefix('^')
            .and_then(|p| p.strip_suffix('$'))
            .unwrap();
        string_regex(inner).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn a_name_the_pattern_allows_is_accepted(raw in strings(&name_pattern())) {
            if raw.chars().count() <= 100 && !astral_format(&raw) {
                prop_assert!(bounded_text("name", &raw, 1, 100).is_ok(), "{:?}", raw);
            }
        }

        #[test]
        fn an_email_the_pattern_allows_is_accepted(raw in strings(EMAIL_PATTERN)) {
            // Within the length the schema gives too (`maxLength`).
            if raw.len() <= 254 {
                prop_assert!(Email::parse(&raw).is_ok(), "{:?}", raw);
            }
        }

        #[test]
        fn card_fields_the_patterns_allow_are_accepted(
            number in strings(CARD_NUMBER_PATTERN),
            cvv in strings(CVV_PATTERN),
            expiration in strings(EXPIRATION_PATTERN),
        ) {
            // The check digit is the description's; the pattern gives the rest.
            let body = &number[..number.len() - 1];
            let number = (0..10)
                .map(|d| format!("{body}{d}"))
                .find(|n| crate::payment::card::luhn_valid(n))
                .unwrap();
            prop_assert!(CardNumber::parse(&number).is_ok(), "{}", number);
            prop_assert!(Cvv::parse(&cvv).is_ok());
            prop_assert!(Expiration::parse_mmyy(&expiration).is_ok(), "{}", expiration);
        }

        #[test]
        fn an_endpoint_the_pattern_allows_is_accepted(raw in strings(&endpoint_url_pattern())) {
            if raw.len() <= EndpointUrl::MAX_LEN {
                prop_assert!(EndpointUrl::parse(&raw).is_ok(), "{:?}", raw);
            }
        }

        #[test]
        fn a_header_the_patterns_allow_is_accepted(
            name in strings(HEADER_NAME_PATTERN),
            value in strings(HEADER_VALUE_PATTERN),
        ) {
            let reserved = regex::Regex::new(&reserved_header_pattern(&CustomHeader::RESERVED)).unwrap();
            prop_assume!(!reserved.is_match(&name));
            prop_assert!(CustomHeader::parse(&name, &value).is_ok(), "{:?}: {:?}", name, value);
        }
    }

    /// The reserved names are refused whatever their case, and only they.
    #[test]
    fn the_reserved_pattern_names_exactly_the_reserved_headers() {
        let reserved =
            regex::Regex::new(&reserved_header_pattern(&CustomHeader::RESERVED)).unwrap();
        for name in CustomHeader::RESERVED {
            assert!(reserved.is_match(name) && reserved.is_match(&name.to_ascii_uppercase()));
            assert!(CustomHeader::parse(name, "x").is_err());
        }
        assert!(reserved.is_match("Proxy-Authorization"));
        for allowed in ["x-te", "hosted", "authorization", "x-proxy-id"] {
            assert!(!reserved.is_match(allowed), "{allowed}");
            assert!(CustomHeader::parse(allowed, "x").is_ok(), "{allowed}");
        }
    }

    /// The name pattern refuses what the rule refuses (control, invisible and direction-changing
    /// characters), and what the rule would trim (a client checking the pattern sends the name
    /// as it is stored); a plain name with accents and emoji passes both.
    #[test]
    fn the_name_pattern_refuses_what_the_rule_refuses() {
        let pattern = regex::Regex::new(&name_pattern()).unwrap();
        for refused in [
            "Ac\u{0007}me",
            "Ac\u{202e}me",
            "\u{200b}",
            "a\u{feff}",
            "a\u{00ad}b",
        ] {
            assert!(!pattern.is_match(refused), "{refused:?}");
            assert!(
                bounded_text("name", refused, 1, 100).is_err(),
                "{refused:?}"
            );
        }
        for trimmed in [" Acme", "Acme ", "\u{3000}Acme", "Acme\u{00a0}"] {
            assert!(!pattern.is_match(trimmed), "{trimmed:?}");
            assert_eq!(bounded_text("name", trimmed, 1, 100).unwrap(), "Acme");
        }
        assert!(pattern.is_match("Café ☕ Ünïcode 東京"));
    }
}
