use super::*;
use time::macros::datetime;

const NOW: OffsetDateTime = datetime!(2026-11-22 12:00 UTC);

#[test]
fn text_that_could_hold_a_card_number_is_told() {
    for holds in [
        "4111111111111111",
        "4111 1111 1111 1111",
        "my card 4111-1111-1111-1111 thanks",
        "5555555555554444",
        "1234567890123456789012",
        "4111 1111 1111 1111 123",
        "4111.1111.1111.1111",
        "4111\t1111\t1111\t1111",
        "4111111111111112",
    ] {
        assert!(could_hold_card_number(holds), "{holds}");
    }
    for clean in [
        "Corner Shop LLC",
        "12345678901",
        "+1 415 555 0100",
        "98-7654321",
        "",
    ] {
        assert!(!could_hold_card_number(clean), "{clean}");
    }
}

#[test]
fn luhn_and_length() {
    let cases = [
        ("4111111111111111", true),
        ("4111111111111112", false),
        ("5555555555554444", true),
        ("378282246310005", true),
        ("41111111111", false),
        ("41111111111111111111", false),
        ("4111 1111 1111 1111", false),
        ("", false),
    ];
    for (raw, ok) in cases {
        let got = CardNumber::parse(raw);
        assert_eq!(got.is_ok(), ok, "{raw:?}");
        if let Err(e) = got {
            assert_eq!(e.field, "payment.number");
        }
    }
}

#[test]
fn bin_last4_and_redaction() {
    let pan = CardNumber::parse("4111111111111111").unwrap();
    assert_eq!((pan.bin(), pan.last4()), ("411111", "1111"));
    assert_eq!(format!("{pan:?}"), "CardNumber(411111…1111)");
    assert_eq!(format!("{:?}", Cvv::parse("123").unwrap()), "Cvv(***)");
}

#[test]
fn cvv_is_three_or_four_digits() {
    for (raw, ok) in [
        ("12", false),
        ("123", true),
        ("1234", true),
        ("12345", false),
        ("12a", false),
    ] {
        assert_eq!(Cvv::parse(raw).is_ok(), ok, "{raw:?}");
    }
}

#[test]
fn expiration_is_mmyy_valid_through_its_month() {
    let cases = [
        ("1126", true),
        ("1026", false),
        ("1225", false),
        ("0127", true),
        ("1326", false),
        ("0026", false),
        ("126", false),
        ("11/26", false),
    ];
    for (raw, ok) in cases {
        assert_eq!(Expiration::parse(raw, NOW).is_ok(), ok, "{raw:?}");
    }
    let last_day = datetime!(2026-11-30 23:59:59 UTC);
    assert!(!Expiration::parse("1126", NOW).unwrap().is_past(last_day));
    assert!(
        Expiration::parse("1126", NOW)
            .unwrap()
            .is_past(datetime!(2026-12-01 0:00 UTC))
    );
}

/// Each field missing or wrong is named, in the order number, cvv, expiration; a missing
/// CVV is refused for a payment and accepted for a token.
#[test]
fn check_names_the_first_field_missing_or_wrong() {
    let input = |number: Option<&str>, cvv: Option<&str>, expiration: Option<&str>| CardInput {
        number: number.map(Into::into),
        cvv: cvv.map(Into::into),
        expiration: expiration.map(Into::into),
        name: None,
    };
    let good = (Some("4111111111111111"), Some("123"), Some("1230"));
    let rows = [
        (good, CvvRule::Required, None),
        (
            (None, good.1, good.2),
            CvvRule::Required,
            Some("payment.number"),
        ),
        (
            (Some("4111111111111112"), good.1, good.2),
            CvvRule::Required,
            Some("payment.number"),
        ),
        (
            (good.0, None, good.2),
            CvvRule::Required,
            Some("payment.cvv"),
        ),
        ((good.0, None, good.2), CvvRule::Optional, None),
        (
            (good.0, Some("12"), good.2),
            CvvRule::Optional,
            Some("payment.cvv"),
        ),
        (
            (good.0, good.1, None),
            CvvRule::Required,
            Some("payment.expiration"),
        ),
        (
            (good.0, good.1, Some("1026")),
            CvvRule::Required,
            Some("payment.expiration"),
        ),
        (
            (None, None, None),
            CvvRule::Required,
            Some("payment.number"),
        ),
    ];
    for ((number, cvv, expiration), rule, refused) in rows {
        let got = input(number, cvv, expiration).check(NOW, rule);
        assert_eq!(
            got.err().map(|e| e.field),
            refused,
            "{number:?} {cvv:?} {expiration:?} {rule:?}"
        );
    }
}

/// The name on the card is optional; sent, it follows the rule of every free-text name.
#[test]
fn a_name_on_the_card_is_plain_text() {
    let long = "n".repeat(CardholderName::MAX_CHARS + 1);
    let cases = [
        (None, None),
        (Some("Ann O'Neil"), None),
        (Some("  José Álvarez  "), None),
        (Some(""), Some("payment.name")),
        (Some("   "), Some("payment.name")),
        (Some("Ann\u{0}"), Some("payment.name")),
        (Some("Ann \u{202e}lieN"), Some("payment.name")),
        (Some(long.as_str()), Some("payment.name")),
    ];
    for (name, refused) in cases {
        let input = CardInput {
            number: Some("4111111111111111".into()),
            cvv: None,
            expiration: Some("1230".into()),
            name: name.map(Into::into),
        };
        let got = input.check(NOW, CvvRule::Optional);
        assert_eq!(got.as_ref().err().map(|e| e.field), refused, "{name:?}");
        if let Ok(card) = got {
            assert_eq!(
                card.name.as_ref().map(CardholderName::expose),
                name.map(str::trim)
            );
        }
    }
    assert_eq!(
        format!("{:?}", CardholderName::parse("Ann").unwrap()),
        "CardholderName(…)"
    );
}
