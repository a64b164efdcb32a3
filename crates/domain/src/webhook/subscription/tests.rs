//! The rules of `subscription`, row by row.

use super::*;
use time::macros::datetime;

const NOON: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);

fn subscription(secret: &str) -> Subscription {
    Subscription {
        id: WebhookId::from_suffix("1"),
        platform_id: PlatformId::from_suffix("1"),
        mode: Mode::Test,
        endpoint_url: EndpointUrl::parse("https://example.com/h").unwrap(),
        events: EventList::parse(&["transaction.created"]).unwrap(),
        description: None,
        custom_header: None,
        active: true,
        secret: secret.into(),
        previous_secret: None,
        creator: UserId::from_suffix("1"),
        consecutive_failures: 0,
        created_on: NOON,
        updated_on: NOON,
        metadata: crate::metadata::Metadata::default(),
    }
}

/// The rotated-out secret signs beside the new one for the overlap, then never; a second
/// rotation drops the first secret at once.
#[test]
fn a_rotated_secret_signs_for_the_overlap_only() {
    let day = SECRET_OVERLAP;
    let first = subscription("whsec_a");
    assert_eq!(first.signing_secrets(NOON), ["whsec_a"]);
    let second = first.rotated("whsec_b".into(), NOON, day);
    assert_eq!(second.updated_on, NOON);
    let table = [
        (NOON, vec!["whsec_b", "whsec_a"]),
        (
            NOON + day - time::Duration::SECOND,
            vec!["whsec_b", "whsec_a"],
        ),
        (NOON + day, vec!["whsec_b"]),
        (NOON + day * 2, vec!["whsec_b"]),
    ];
    for (at, want) in table {
        assert_eq!(second.signing_secrets(at), want, "at {at}");
    }
    let later = NOON + time::Duration::hours(1);
    let third = second.rotated("whsec_c".into(), later, day);
    assert_eq!(third.signing_secrets(later), ["whsec_c", "whsec_b"]);
    assert!(
        !format!("{third:?}").contains("whsec_"),
        "secrets stay out of Debug"
    );
}

#[test]
fn endpoint_urls() {
    let cases = [
        ("https://example.com/hooks", true),
        ("http://127.0.0.1:8080/x?y=1", true),
        ("HTTPS://Example.COM", true),
        ("https://[::1]:9000/h", true),
        ("https://a-b.example.com:443", true),
        ("ftp://example.com", false),
        ("example.com/hooks", false),
        ("https://", false),
        ("https://user:pw@example.com", false),
        ("https://example.com:0/", false),
        ("https://example.com:99999/", false),
        ("https://exa mple.com", false),
        ("https://example..com", false),
        ("https://example.com/#frag", false),
        ("https://[zz]/", false),
        ("https://example.com/a%20b?q=%E2%82%AC", true),
        ("https://example.com/a\"b", false),
        ("https://example.com/<x>", false),
        ("https://example.com/\u{85}", false),
        ("https://example.com/\u{feff}", false),
        ("https://exämple.com/", false),
        ("https://example.com/{x}", false),
        ("https://example.com/a|b", false),
        ("https://example.com/a\\b", false),
        ("https://example.com/100%", false),
        ("https://example.com/%zz", false),
        ("https://example.com/a[1]", false),
    ];
    for (raw, ok) in cases {
        assert_eq!(EndpointUrl::parse(raw).is_ok(), ok, "{raw}");
    }
    let long = format!("https://example.com/{}", "a".repeat(2048));
    assert!(EndpointUrl::parse(&long).is_err());
}

#[test]
fn custom_headers() {
    assert!(CustomHeader::parse("X-Gateway-Token", "abc 123").is_ok());
    for reserved in [
        "Content-Type",
        "host",
        "CONTENT-LENGTH",
        "webhook-signature",
        "Webhook-Id",
        "proxy-authorization",
    ] {
        let err = CustomHeader::parse(reserved, "x").unwrap_err();
        assert_eq!(err.field, "customHeader.name", "{reserved}");
    }
    assert_eq!(
        CustomHeader::parse("bad name", "x").unwrap_err().field,
        "customHeader.name"
    );
    assert_eq!(
        CustomHeader::parse("", "x").unwrap_err().field,
        "customHeader.name"
    );
    assert_eq!(
        CustomHeader::parse("X-A", "line\nbreak").unwrap_err().field,
        "customHeader.value"
    );
    for refused in ["", "\t", " ", " x", "x ", "a\tb", "é"] {
        assert_eq!(
            CustomHeader::parse("X-A", refused).unwrap_err().field,
            "customHeader.value",
            "{refused:?}"
        );
    }
    assert!(CustomHeader::parse("X-A", "Bearer a b").is_ok());
}

#[test]
fn event_lists_are_non_empty_known_and_distinct() {
    assert!(EventList::parse::<&str>(&[]).is_err());
    assert!(EventList::parse(&["merchant.created", "nope"]).is_err());
    let list = EventList::parse(&[
        "merchant.created",
        "transaction.created",
        "merchant.created",
    ])
    .unwrap();
    assert_eq!(
        list.types(),
        &[EventType::TransactionCreated, EventType::MerchantCreated]
    );
}

#[test]
fn the_twenty_fifth_failure_disables() {
    assert!(!failure_disables(24));
    assert!(failure_disables(25));
    assert!(
        failure_disables(26),
        "re-enabled by PATCH at 25: the next failure disables again"
    );
}

/// What a field's parse came to, its value dropped.
type Parsed = Result<(), Invalid>;

/// The field limits of docs/decisions.md, each at its edge: the longest accepted, one more
/// refused, under the field's own name.
#[test]
fn field_limits_hold_at_their_edges() {
    let url = |len: usize| {
        let base = "https://example.com/";
        format!("{base}{}", "a".repeat(len - base.len()))
    };
    let cases: [(&str, usize, Parsed, Parsed); 4] = [
        (
            "endpointUrl",
            EndpointUrl::MAX_LEN,
            EndpointUrl::parse(&url(2048)).map(drop),
            EndpointUrl::parse(&url(2049)).map(drop),
        ),
        (
            "description",
            500,
            Description::parse(&"d".repeat(500)).map(drop),
            Description::parse(&"d".repeat(501)).map(drop),
        ),
        (
            "customHeader.name",
            64,
            CustomHeader::parse(&"n".repeat(64), "v").map(drop),
            CustomHeader::parse(&"n".repeat(65), "v").map(drop),
        ),
        (
            "customHeader.value",
            1024,
            CustomHeader::parse("X-A", &"v".repeat(1024)).map(drop),
            CustomHeader::parse("X-A", &"v".repeat(1025)).map(drop),
        ),
    ];
    for (field, longest, at_edge, past_edge) in cases {
        assert!(at_edge.is_ok(), "{field}: {longest} characters refused");
        assert_eq!(
            past_edge.map_err(|e| e.field),
            Err(field),
            "{field}: {} characters accepted",
            longest + 1
        );
    }
}
