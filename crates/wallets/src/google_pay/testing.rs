//! Google Pay tokens made the way Google makes them, with keys of our own: for this crate's
//! tests and for end-to-end tests that stand in for Google (`test-support` feature).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "test support: keys it made itself always encode; a panic is the failure report"
)]

use p256::ecdsa::SigningKey;
use p256::ecdsa::signature::Signer;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::pkcs8::{EncodePrivateKey, EncodePublicKey};
use rand_core::OsRng;
use serde_json::{Value, json};
use time::Duration;

use super::{
    Aes256Ctr, GooglePayKeys, Hmac, KeyIvInit, Mac, OffsetDateTime, PROTOCOL, SENDER_ID, STANDARD,
    SecretKey, Sha256, Signature, StreamCipher, VerifyingKey, derive_keys, signed_bytes,
};
use base64::Engine;

/// A fresh message id, as Google gives each payment.
pub(crate) fn random_id() -> String {
    let mut bytes = [0u8; 16];
    rand_core::RngCore::fill_bytes(&mut OsRng, &mut bytes);
    base16ct::lower::encode_string(&bytes)
}

/// The card every token holds unless a test says otherwise.
pub const PAN: &str = "4111111111111111";

pub(crate) fn ms(at: OffsetDateTime) -> String {
    (at.unix_timestamp_nanos() / 1_000_000).to_string()
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

fn sign(key: &SigningKey, message: &[u8]) -> String {
    let signature: Signature = key.sign(message);
    b64(signature.to_der().as_bytes())
}

fn spki(key: &VerifyingKey) -> String {
    b64(key.to_public_key_der().unwrap().as_bytes())
}

/// Google's side: the root and intermediate signing keys, the gateway's key, and the time
/// the tokens are made at.
#[derive(Debug)]
pub struct Issuer {
    root: SigningKey,
    intermediate: SigningKey,
    recipient: SecretKey,
    now: OffsetDateTime,
}

/// What a test changes in an otherwise good token.
#[derive(Debug, Default, Clone)]
pub struct Twist {
    /// When the intermediate key expires (a week after `now` otherwise).
    pub key_expires: Option<OffsetDateTime>,
    /// When the message expires (an hour after `now` otherwise).
    pub message_expires: Option<OffsetDateTime>,
    /// The recipient the message is signed for (`gateway:holdfast` otherwise).
    pub recipient_id: Option<&'static str>,
    /// The protocol version (`ECv2` otherwise).
    pub protocol: Option<&'static str>,
    /// A root key that signs the intermediate key instead of the issuer's.
    pub root: Option<SigningKey>,
    /// A key the message is encrypted to instead of the gateway's.
    pub encrypt_to: Option<SecretKey>,
    /// The plaintext (`payload(PAN_ONLY)` otherwise).
    pub payload: Option<Value>,
    /// Flip a bit of the ciphertext after the tag is computed.
    pub flip_ciphertext: bool,
    /// Flip a bit of the tag.
    pub flip_tag: bool,
}

/// A plaintext for `auth` (`PAN_ONLY` or `CRYPTOGRAM_3DS`), requested for `merchant`,
/// expiring an hour after `now`.
pub fn payload(auth: &str, merchant: &str, now: OffsetDateTime) -> Value {
    let mut details = json!({
        "pan": PAN, "expirationMonth": 12, "expirationYear": 2030, "authMethod": auth,
    });
    if auth == "CRYPTOGRAM_3DS" {
        details["cryptogram"] = json!("AgAAAAAABk4DWZ4C28yUQAAAAAA=");
        details["eciIndicator"] = json!("05");
    }
    json!({
        "gatewayMerchantId": merchant,
        "messageExpiration": ms(now + Duration::hours(1)),
        "messageId": random_id(),
        "paymentMethod": "CARD",
        "paymentMethodDetails": details,
    })
}

impl Issuer {
    /// New keys, making tokens as of `now`.
    pub fn at(now: OffsetDateTime) -> Self {
        Self {
            root: SigningKey::random(&mut OsRng),
            intermediate: SigningKey::random(&mut OsRng),
            recipient: SecretKey::random(&mut OsRng),
            now,
        }
    }

    /// The gateway's private key, as configured: base64 of its PKCS#8 DER.
    pub fn private_key_base64(&self) -> String {
        b64(self.recipient.to_pkcs8_der().unwrap().as_bytes())
    }

    /// The root signing key, as configured: base64 of its `SubjectPublicKeyInfo` DER.
    pub fn root_key_base64(&self) -> String {
        spki(self.root.verifying_key())
    }

    /// The keys that open this issuer's tokens.
    pub fn keys(&self) -> GooglePayKeys {
        GooglePayKeys::from_base64(&self.private_key_base64(), &[&self.root_key_base64()]).unwrap()
    }

    /// A token for `merchant` (`PAN_ONLY`, card `PAN`).
    pub fn token_for(&self, merchant: &str) -> String {
        self.token(&Twist {
            payload: Some(payload("PAN_ONLY", merchant, self.now)),
            ..Twist::default()
        })
    }

    /// A token as Google would make it, changed by `twist`.
    pub fn token(&self, twist: &Twist) -> String {
        let now = self.now;
        let protocol = twist.protocol.unwrap_or(PROTOCOL);
        let signed_key = json!({
            "keyValue": spki(self.intermediate.verifying_key()),
            "keyExpiration": ms(twist.key_expires.unwrap_or(now + Duration::days(7))),
        })
        .to_string();
        let root = twist.root.as_ref().unwrap_or(&self.root);
        let key_signature = sign(root, &signed_bytes(&[SENDER_ID, protocol, &signed_key]));

        let mut plaintext = twist
            .payload
            .clone()
            .unwrap_or_else(|| payload("PAN_ONLY", "mid_01SHOP", now));
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
