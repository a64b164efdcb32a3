//! Tokens built the way Google builds them, with keys of our own, and every way one can be
//! wrong.

use p256::ecdsa::SigningKey;
use p256::ecdsa::signature::Signer;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{EncodePrivateKey, EncodePublicKey};
use rand_core::OsRng;
use serde_json::{Value, json};
use time::Duration;
use time::macros::datetime;

use super::*;

const NOW: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);
const PAN: &str = "4111111111111111";

fn ms(at: OffsetDateTime) -> String {
    (at.unix_timestamp_nanos() / 1_000_000).to_string()
}

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

fn sign(key: &SigningKey, message: &[u8]) -> String {
    let signature: Signature = key.sign(message);
    b64(signature.to_der().as_bytes())
}

fn spki(key: &VerifyingKey) -> String {
    b64(key.to_public_key_der().unwrap().as_bytes())
}

/// Google's side: the root and intermediate signing keys, and the merchant's gateway key.
struct Google {
    root: SigningKey,
    intermediate: SigningKey,
    recipient: SecretKey,
}

/// What a test changes in an otherwise good token.
#[derive(Default, Clone)]
struct Twist {
    key_expires: Option<OffsetDateTime>,
    message_expires: Option<OffsetDateTime>,
    recipient_id: Option<&'static str>,
    protocol: Option<&'static str>,
    root: Option<SigningKey>,
    encrypt_to: Option<SecretKey>,
    payload: Option<Value>,
    flip_ciphertext: bool,
    flip_tag: bool,
}

fn payload(auth: &str) -> Value {
    let mut details = json!({
        "pan": PAN, "expirationMonth": 12, "expirationYear": 2030, "authMethod": auth,
    });
    if auth == "CRYPTOGRAM_3DS" {
        details["cryptogram"] = json!("AgAAAAAABk4DWZ4C28yUQAAAAAA=");
        details["eciIndicator"] = json!("05");
    }
    json!({
        "gatewayMerchantId": "mid_01SHOP",
        "messageExpiration": ms(NOW + Duration::hours(1)),
        "messageId": "AH2Ejtc",
        "paymentMethod": "CARD",
        "paymentMethodDetails": details,
    })
}

impl Google {
    fn new() -> Self {
        Self {
            root: SigningKey::random(&mut OsRng),
            intermediate: SigningKey::random(&mut OsRng),
            recipient: SecretKey::random(&mut OsRng),
        }
    }

    fn keys(&self) -> GooglePayKeys {
        let private = b64(self.recipient.to_pkcs8_der().unwrap().as_bytes());
        GooglePayKeys::from_base64(&private, &[&spki(self.root.verifying_key())]).unwrap()
    }

    fn token(&self, twist: &Twist) -> String {
        let protocol = twist.protocol.unwrap_or(PROTOCOL);
        let signed_key = json!({
            "keyValue": spki(self.intermediate.verifying_key()),
            "keyExpiration": ms(twist.key_expires.unwrap_or(NOW + Duration::days(7))),
        })
        .to_string();
        let root = twist.root.as_ref().unwrap_or(&self.root);
        let key_signature = sign(root, &signed_bytes(&[SENDER_ID, protocol, &signed_key]));

        let mut plaintext = twist.payload.clone().unwrap_or_else(|| payload("PAN_ONLY"));
        if let Some(at) = twist.message_expires {
            plaintext["messageExpiration"] = json!(ms(at));
        }
        let recipient = twist.encrypt_to.as_ref().unwrap_or(&self.recipient);
        let ephemeral = SecretKey::random(&mut OsRng);
        let ephemeral_point = ephemeral.public_key().to_encoded_point(false);
        let shared = p256::ecdh::diffie_hellman(
            ephemeral.to_nonzero_scalar(),
            recipient.public_key().as_affine(),
        );
        let (encryption_key, mac_key) =
            derive_keys(ephemeral_point.as_bytes(), shared.raw_secret_bytes());
        let mut ciphertext = plaintext.to_string().into_bytes();
        Aes256Ctr::new(&encryption_key.into(), &[0u8; 16].into()).apply_keystream(&mut ciphertext);
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&mac_key).unwrap();
        mac.update(&ciphertext);
        let mut tag = mac.finalize().into_bytes().to_vec();
        if twist.flip_ciphertext {
            ciphertext[0] ^= 1;
        }
        if twist.flip_tag {
            tag[0] ^= 1;
        }
        let signed_message = json!({
            "encryptedMessage": b64(&ciphertext),
            "ephemeralPublicKey": b64(ephemeral_point.as_bytes()),
            "tag": b64(&tag),
        })
        .to_string();
        let recipient_id = twist.recipient_id.unwrap_or("gateway:holdfast");
        let message_signature = sign(
            &self.intermediate,
            &signed_bytes(&[SENDER_ID, recipient_id, protocol, &signed_message]),
        );
        json!({
            "protocolVersion": protocol,
            "signature": message_signature,
            "intermediateSigningKey": {"signedKey": signed_key, "signatures": [key_signature]},
            "signedMessage": signed_message,
        })
        .to_string()
    }
}

#[test]
fn a_pan_only_and_a_cryptogram_token_open_to_their_card() {
    let google = Google::new();
    let opened = open(&google.token(&Twist::default()), &google.keys(), NOW).unwrap();
    assert_eq!(opened.gateway_merchant_id, "mid_01SHOP");
    assert_eq!(opened.card.number.expose(), PAN);
    assert_eq!(opened.card.expiration.to_mmyy(), "1230");
    assert_eq!(opened.card.auth_method, AuthMethod::PanOnly);
    assert_eq!(opened.card.cryptogram, None);

    let device = Twist {
        payload: Some(payload("CRYPTOGRAM_3DS")),
        ..Twist::default()
    };
    let opened = open(&google.token(&device), &google.keys(), NOW).unwrap();
    assert_eq!(opened.card.auth_method, AuthMethod::Cryptogram3ds);
    assert_eq!(
        opened.card.cryptogram.as_deref(),
        Some("AgAAAAAABk4DWZ4C28yUQAAAAAA=")
    );
    assert_eq!(opened.card.eci.as_deref(), Some("05"));
    assert!(!format!("{:?}", opened.card).contains(PAN), "Debug redacts");
}

/// A label, a change to a good token, and the kind of refusal it must get.
type Case = (&'static str, Twist, fn(&WalletError) -> bool);

fn assert_refused(cases: Vec<Case>) {
    let google = Google::new();
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
    let mut value = payload("PAN_ONLY");
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
    let keys = Google::new().keys();
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
