//! Tokens built the way Apple builds them, with a chain of our own, and every way one can be
//! wrong.

use time::macros::datetime;

use super::testing::{DPAN, Issuer, Twist, payload};
use super::*;

const NOW: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);

/// A label, a change to a good token, and the kind of refusal it must get.
type Case = (&'static str, Twist, fn(&WalletError) -> bool);

#[test]
fn a_good_token_opens_to_its_device_account_number_and_cryptogram() {
    let apple = Issuer::at(NOW);
    let token = apple.good_token();
    let card = open(&token, &apple.keys(), NOW).unwrap();
    assert_eq!(card.number.expose(), DPAN);
    assert_eq!(card.expiration.to_mmyy(), "1230");
    assert_eq!(card.proof.kind, WalletKind::ApplePay);
    assert_eq!(
        card.proof.cryptogram.as_deref(),
        Some("Af9x/QwAA/DjmU65oyc1MAABAAA=")
    );
    assert_eq!(card.proof.eci.as_deref(), Some("7"));
    // The same payment with its transaction id in upper case is the same payment, so its claim
    // (one wallet payment, one token) cannot be dodged by changing the case of the hex.
    let mut shouted: serde_json::Value = serde_json::from_str(&token).unwrap();
    let id = shouted["header"]["transactionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(id, id.to_ascii_uppercase(), "the id has letters");
    shouted["header"]["transactionId"] = id.to_ascii_uppercase().into();
    let again = open(&shouted.to_string(), &apple.keys(), NOW).unwrap();
    assert_eq!(again.message_id, card.message_id);
    assert_eq!(card.message_id, id.to_ascii_lowercase());
}

#[test]
fn every_way_a_token_can_be_wrong_is_refused_by_kind() {
    let apple = Issuer::at(NOW);
    let signature = |e: &WalletError| matches!(e, WalletError::Signature(_));
    let cases: Vec<Case> = vec![
        (
            "a leaf without Apple's marker",
            Twist {
                unmarked_leaf: true,
                ..Twist::default()
            },
            signature,
        ),
        (
            "signed by a key the leaf does not certify",
            Twist {
                foreign_signer: true,
                ..Twist::default()
            },
            signature,
        ),
        (
            "a chain to another root",
            Twist {
                foreign_root: true,
                ..Twist::default()
            },
            signature,
        ),
        (
            "data changed after signing",
            Twist {
                flip_data: true,
                ..Twist::default()
            },
            signature,
        ),
        (
            "signed an hour ago",
            Twist {
                signed_at: Some(NOW - Duration::hours(1)),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Expired(_)),
        ),
        (
            "encrypted for another merchant",
            Twist {
                merchant_id: Some("merchant.com.other"),
                ..Twist::default()
            },
            |e| *e == WalletError::Decryption,
        ),
        (
            "another version",
            Twist {
                version: Some("RSA_v1"),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::Malformed(_)),
        ),
        (
            "not a device account number",
            Twist {
                payload: Some(payload("4111111111111112")),
                ..Twist::default()
            },
            |e| matches!(e, WalletError::NotACard(_)),
        ),
    ];
    for (label, twist, expected) in cases {
        let err = open(&apple.token(&twist), &apple.keys(), NOW).unwrap_err();
        assert!(expected(&err), "{label}: {err:?}");
        assert!(
            !err.to_string().contains(DPAN),
            "{label}: the error repeats the card"
        );
    }
    // A token for another processing key.
    let other = Issuer::at(NOW);
    assert_eq!(
        open(&other.good_token(), &apple.keys(), NOW).unwrap_err(),
        WalletError::Decryption
    );
    // Certificates outside their validity.
    assert!(matches!(
        open(
            &apple.good_token(),
            &apple.keys(),
            NOW + Duration::days(400)
        ),
        Err(WalletError::Expired(_))
    ));
    for garbage in ["", "{}", "[]", r#"{"version": "EC_v1"}"#] {
        assert!(
            matches!(
                open(garbage, &apple.keys(), NOW),
                Err(WalletError::Malformed(_))
            ),
            "{garbage}"
        );
    }
}

#[test]
fn the_kdf_is_apples() {
    // SHA-256(00000001 ‖ Z ‖ 0D ‖ "id-aes256-GCM" ‖ "Apple" ‖ H), computed by hand.
    let z = [7u8; 32];
    let h = [9u8; 32];
    let mut expected = Sha256::new();
    expected.update([
        0, 0, 0, 1, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        7, 7, 7, 7, 7, 7,
    ]);
    expected.update(b"\x0did-aes256-GCMApple");
    expected.update(h);
    assert_eq!(derive_key(&z, &h), <[u8; 32]>::from(expected.finalize()));
    assert_eq!(hex_bytes("0aff"), Some(vec![10, 255]));
    assert_eq!(hex_bytes("0af"), None);
    assert_eq!(hex_bytes("zz"), None);
}

/// Apple's own bytes (a sandbox token, see `sandbox/README.md`): a BER signature with indefinite
/// lengths, Apple's real leaf and intermediate, chained to Apple Root CA - G3, over Apple's signed
/// attributes. Tokens we build ourselves share our reading of the format; this one does not.
#[test]
fn a_real_apple_sandbox_signature_verifies() {
    let token: PaymentData = serde_json::from_str(include_str!("sandbox/token.json")).unwrap();
    let b64 = |raw: &str| STANDARD.decode(raw).unwrap();
    let root = Certificate::from_der(&b64(include_str!("sandbox/apple_root_ca_g3.b64"))).unwrap();
    let signature = b64(&token.signature);
    assert_eq!(&signature[..2], [0x30, 0x80], "BER, indefinite length");
    let signed = signed_content(
        &b64(&token.header.ephemeral_public_key),
        &b64(&token.data),
        &token.header,
    )
    .unwrap();
    let signed_at = datetime!(2023-03-07 05:33:48 UTC);
    verify_signature(&signature, &signed, &root, signed_at).unwrap();
    // The same bytes fail every way they should.
    let later = verify_signature(&signature, &signed, &root, signed_at + Duration::minutes(6));
    assert!(matches!(later, Err(WalletError::Expired(_))), "{later:?}");
    let mut changed = signed.clone();
    changed[0] ^= 1;
    let changed = verify_signature(&signature, &changed, &root, signed_at);
    assert!(
        matches!(changed, Err(WalletError::Signature(_))),
        "{changed:?}"
    );
    let other_root = Certificate::from_der(&b64(&Issuer::at(signed_at).root_base64())).unwrap();
    let foreign = verify_signature(&signature, &signed, &other_root, signed_at);
    assert!(
        matches!(foreign, Err(WalletError::Signature(_))),
        "{foreign:?}"
    );
}
