//! Tokens built the way Google builds them, with keys of our own, and every way one can be
//! wrong.

use p256::ecdsa::SigningKey;
use rand_core::OsRng;
use serde_json::{Value, json};
use time::Duration;
use time::macros::datetime;

use super::testing::{Issuer, PAN, Twist, payload};
use super::*;

const NOW: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);

#[test]
fn a_pan_only_and_a_cryptogram_token_open_to_their_card() {
    let google = Issuer::at(NOW);
    let card = open(&google.token(&Twist::default()), &google.keys(), NOW).unwrap();
    assert_eq!(card.merchant_hint.as_deref(), Some("mid_01SHOP"));
    assert_eq!(card.number.expose(), PAN);
    assert_eq!(card.expiration.to_mmyy(), "1230");
    assert_eq!(card.proof.kind, WalletKind::GooglePay);
    assert_eq!(card.proof.cryptogram, None);

    let device = Twist {
        payload: Some(payload("CRYPTOGRAM_3DS", "mid_01SHOP", NOW)),
        ..Twist::default()
    };
    let card = open(&google.token(&device), &google.keys(), NOW).unwrap();
    assert_eq!(
        card.proof.cryptogram.as_deref(),
        Some("AgAAAAAABk4DWZ4C28yUQAAAAAA=")
    );
    assert_eq!(card.proof.eci.as_deref(), Some("05"));
    let shown = format!("{card:?}");
    assert!(
        !shown.contains(PAN) && !shown.contains("AgAAAA"),
        "Debug redacts: {shown}"
    );
}

/// A label, a change to a good token, and the kind of refusal it must get.
type Case = (&'static str, Twist, fn(&WalletError) -> bool);

fn assert_refused(cases: Vec<Case>) {
    let google = Issuer::at(NOW);
    for (label, twist, expected) in cases {
        let err = open(&google.token(&twist), &google.keys(), NOW).unwrap_err();
        assert!(expected(&err), "{label}: {err:?}");
        assert!(
            !err.to_string().contains(PAN),
            "{label}: the error repeats the card"
        );
    }
}

fn with_payload(change: &dyn Fn(&mut Value)) -> Twist {
    let mut value = payload("PAN_ONLY", "mid_01SHOP", NOW);
    change(&mut value);
    Twist {
        payload: Some(value),
        ..Twist::default()
    }
}

#[test]
fn keys_and_signatures_are_checked() {
    assert_refused(vec![
        (
            "a root we do not trust",
            Twist {
                root: Some(SigningKey::random(&mut OsRng)),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Signature(_)),
        ),
        (
            "an expired intermediate key",
            Twist {
                key_expires: Some(NOW),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Expired(_)),
        ),
        (
            "signed for another gateway",
            Twist {
                recipient_id: Some("gateway:other"),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Signature(_)),
        ),
        (
            "ECv1",
            Twist {
                protocol: Some("ECv1"),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Malformed(_)),
        ),
    ]);
}

#[test]
fn the_message_opens_only_for_us_unaltered_and_in_time() {
    assert_refused(vec![
        (
            "encrypted for another gateway's key",
            Twist {
                encrypt_to: Some(SecretKey::random(&mut OsRng)),
                ..Twist::default()
            },
            |e| *e == WalletError::Decryption,
        ),
        (
            "a changed ciphertext",
            Twist {
                flip_ciphertext: true,
                ..Twist::default()
            },
            |e| *e == WalletError::Decryption,
        ),
        (
            "a changed tag",
            Twist {
                flip_tag: true,
                ..Twist::default()
            },
            |e| *e == WalletError::Decryption,
        ),
        (
            "an expired message",
            Twist {
                message_expires: Some(NOW - Duration::seconds(1)),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Expired(_)),
        ),
    ]);
}

#[test]
fn the_payload_must_hold_a_usable_card() {
    let not_a_card: fn(&WalletError) -> bool = |e| matches!(e, WalletError::NotACard(_));
    assert_refused(vec![
        (
            "not a card",
            with_payload(&|v| v["paymentMethod"] = json!("BANK")),
            not_a_card,
        ),
        (
            "a number failing Luhn",
            with_payload(&|v| v["paymentMethodDetails"]["pan"] = json!("4111111111111112")),
            not_a_card,
        ),
        (
            "a device token without its cryptogram",
            with_payload(&|v| v["paymentMethodDetails"]["authMethod"] = json!("CRYPTOGRAM_3DS")),
            not_a_card,
        ),
        (
            "no expiration",
            with_payload(&|v| {
                v["paymentMethodDetails"]
                    .as_object_mut()
                    .unwrap()
                    .remove("expirationMonth");
            }),
            not_a_card,
        ),
    ]);
    let keys = Issuer::at(NOW).keys();
    for garbage in ["", "{}", "[]", "not json", r#"{"protocolVersion": "ECv2"}"#] {
        assert!(
            matches!(open(garbage, &keys, NOW), Err(WalletError::Malformed(_))),
            "{garbage}"
        );
    }
}

#[test]
fn signed_strings_are_length_prefixed_little_endian() {
    assert_eq!(
        signed_bytes(&["Google", "ECv2"]),
        [&[6, 0, 0, 0][..], b"Google", &[4, 0, 0, 0], b"ECv2"].concat()
    );
}
