//! What a subscription may hold, the sender can send: every endpoint URL the domain accepts is a
//! URI hyper takes, and every custom header a header value it takes. A subscription that passes
//! one and fails the other is accepted with 201 and then fails every delivery.

use holdfast_domain::webhook::{CustomHeader, EndpointUrl};
use hyper::Uri;
use hyper::header::HeaderValue;
use proptest::prelude::*;

/// Any character a client might put in a URL's path or query: all of ASCII, and some beyond.
fn any_char() -> impl Strategy<Value = char> {
    prop_oneof![
        (0u8..=0x7f).prop_map(char::from),
        prop::sample::select(vec!['\u{85}', '\u{a0}', '\u{feff}', 'é', '€', '\u{202e}']),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn an_accepted_endpoint_url_is_a_uri_hyper_takes(
        scheme in prop::sample::select(vec!["http", "https", "HTTPS"]),
        host in prop::sample::select(vec!["example.com", "127.0.0.1", "[::1]", "a-b.example"]),
        port in prop::option::of(1u16..),
        tail in prop::collection::vec(any_char(), 0..40),
    ) {
        let port = port.map(|p| format!(":{p}")).unwrap_or_default();
        let tail: String = tail.into_iter().collect();
        let raw = format!("{scheme}://{host}{port}/{tail}");
        if EndpointUrl::parse(&raw).is_ok() {
            prop_assert!(raw.parse::<Uri>().is_ok(), "accepted but unsendable: {raw:?}");
        }
    }

    #[test]
    fn an_accepted_header_value_is_one_hyper_sends(
        value in prop::collection::vec(any_char(), 0..20),
    ) {
        let value: String = value.into_iter().collect();
        if CustomHeader::parse("X-Gateway", &value).is_ok() {
            prop_assert!(HeaderValue::from_str(&value).is_ok(), "{value:?}");
            prop_assert_eq!(value.trim(), value.as_str());
        }
    }
}
