//! Every parser of outside input, fed arbitrary text and the extremes: never a panic, always a
//! value that keeps its rule or a refusal that names its field and repeats nothing it was sent.
use holdfast_domain::Invalid;
use holdfast_domain::api_key::KeyName;
use holdfast_domain::dashboard::Password;
use holdfast_domain::idempotency::IdempotencyKey;
use holdfast_domain::ids::{MerchantId, TxnId, has_id_shape};
use holdfast_domain::merchant::{Currency, MerchantName};
use holdfast_domain::page::PageRequest;
use holdfast_domain::payment::amount::Amount;
use holdfast_domain::payment::card::{CardNumber, Cvv, Expiration};
use holdfast_domain::user::Email;
use holdfast_domain::webhook::{CustomHeader, Description, EndpointUrl};
use proptest::prelude::*;
use time::macros::datetime;

/// Text a hostile client sends: anything, or the shapes that break parsers.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[0-9]{0,40}",
        "-?[0-9]{1,40}",
        "(mid|txn|tkn|wh|pfm)_[A-Za-z0-9%\u{0}\u{202e}]{0,40}",
        Just("9999-12-31".to_owned()),
        Just("0000-01-01".to_owned()),
        Just("1000000000000000000000000000000".to_owned()),
        Just("\u{0}".to_owned()),
        Just("a".repeat(10_000)),
        Just("\u{1f511}".repeat(3_000)),
    ]
}

/// A refusal names a field and does not repeat what was sent (text long enough that our own
/// words, such as an id prefix, cannot hold it by chance).
fn refusal_is_clean(refused: &Invalid, sent: &str) -> Result<(), TestCaseError> {
    prop_assert!(!refused.field.is_empty());
    if sent.chars().count() >= 8 {
        prop_assert!(
            !refused.message.contains(sent),
            "{} repeats {sent:?}",
            refused.field
        );
    }
    Ok(())
}

macro_rules! parsed_or_refused {
    ($raw:expr, $parse:expr) => {{
        let raw: &str = $raw;
        if let Err(refused) = $parse(raw) {
            refusal_is_clean(&refused, raw)?;
        }
    }};
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn text_fields_are_a_value_or_a_clean_refusal(raw in hostile_text()) {
        parsed_or_refused!(&raw, |r| MerchantId::parse("merchantId", r));
        parsed_or_refused!(&raw, |r| TxnId::parse("startingAfter", r));
        parsed_or_refused!(&raw, IdempotencyKey::parse);
        parsed_or_refused!(&raw, MerchantName::parse);
        parsed_or_refused!(&raw, Currency::parse);
        parsed_or_refused!(&raw, KeyName::parse);
        parsed_or_refused!(&raw, Email::parse);
        parsed_or_refused!(&raw, Password::parse);
        parsed_or_refused!(&raw, CardNumber::parse);
        parsed_or_refused!(&raw, Cvv::parse);
        parsed_or_refused!(&raw, |r| Expiration::parse(r, datetime!(2026-12-05 0:00 UTC)));
        parsed_or_refused!(&raw, EndpointUrl::parse);
        parsed_or_refused!(&raw, Description::parse);
        parsed_or_refused!(&raw, |r| CustomHeader::parse("X-Gateway", r));
        parsed_or_refused!(&raw, |r| CustomHeader::parse(r, "value"));
        let _ = has_id_shape(&raw, "mid_");
    }

    /// Page sizes and amounts at and past every edge.
    #[test]
    fn numbers_are_a_value_in_range_or_refused(
        n in prop_oneof![any::<i64>(), Just(i64::MIN), Just(i64::MAX), -2..=2i64, 98..=102i64],
        cursor in prop::option::of(hostile_text()),
    ) {
        match PageRequest::new(Some(n), cursor) {
            Ok(page) => prop_assert!((1..=100).contains(&page.limit)),
            Err(refused) => prop_assert!(!refused.field.is_empty()),
        }
        match Amount::new("amount", n) {
            Ok(amount) => prop_assert!(amount.minor_units() > 0),
            Err(refused) => prop_assert_eq!(refused.field, "amount"),
        }
    }
}

#[test]
fn the_edges_of_the_page_size_and_the_amount() {
    assert!(PageRequest::new(Some(0), None).is_err());
    assert!(PageRequest::new(Some(1), None).is_ok());
    assert!(PageRequest::new(Some(100), None).is_ok());
    assert!(PageRequest::new(Some(101), None).is_err());
    assert!(Amount::new("amount", 0).is_err());
    assert!(Amount::new("amount", -1).is_err());
    assert!(Amount::new("amount", 1).is_ok());
    assert!(Amount::new("amount", i64::MAX).is_err());
    assert!(MerchantId::parse("merchantId", "txn_x").is_err());
}
