//! Google Pay `ECv2` payment method tokens (`PAYMENT_GATEWAY` tokenization, gateway
//! `holdfast`), per Google's published "payment data cryptography":
//!
//! 1. the intermediate signing key is signed by one of Google's root signing keys and has not
//!    expired;
//! 2. the signed message is signed by that intermediate key, for our recipient id;
//! 3. the message opens with our private key: ECDH with the ephemeral key, HKDF-SHA256 (salt
//!    zeros, info `Google`) to a 256-bit AES-CTR key and a 256-bit HMAC key, the HMAC-SHA256
//!    tag checked before anything is decrypted;
//! 4. the plaintext has not expired and holds a card.
//!
//! Google's servers are not reachable from here: the root keys come from configuration (the
//! test environment's or production's, as Google publishes them), and the tests build tokens
//! with keys of their own through the same format (`tests.rs`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ctr::cipher::{KeyIvInit, StreamCipher};
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey;
use p256::{PublicKey, SecretKey};
use serde::Deserialize;
use sha2::Sha256;
use time::OffsetDateTime;

use holdfast_domain::payment::card::{CardNumber, Expiration};
use holdfast_domain::payment::wallet::{WalletCard, WalletKind, WalletProof};

use crate::WalletError;

/// The protocol this module speaks.
pub const PROTOCOL: &str = "ECv2";
/// Who signs every token.
const SENDER_ID: &str = "Google";
/// The HKDF info string.
const HKDF_INFO: &[u8] = b"Google";

/// The gateway id merchants put in their `PaymentDataRequest`'s tokenization parameters.
pub const GATEWAY: &str = "holdfast";

/// What opens tokens addressed to us.
pub struct GooglePayKeys {
    /// `gateway:holdfast`: the recipient every token must be signed for.
    pub recipient_id: String,
    /// Our private key; its public half is what Google encrypts to.
    pub private_key: SecretKey,
    /// Google's root signing keys for `ECv2`, of the environment (test or production).
    pub root_keys: Vec<VerifyingKey>,
}

impl std::fmt::Debug for GooglePayKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GooglePayKeys")
            .field("recipient_id", &self.recipient_id)
            .field("root_keys", &self.root_keys.len())
            .finish_non_exhaustive()
    }
}

impl GooglePayKeys {
    /// Keys for gateway `holdfast`: our PKCS#8 private key and Google's root keys, each as
    /// base64 of its DER (the form Google publishes them in).
    pub fn from_base64(private_key: &str, root_keys: &[&str]) -> Result<Self, WalletError> {
        let der = STANDARD
            .decode(private_key.trim())
            .map_err(|_| WalletError::Malformed("the private key is not base64"))?;
        let private_key = p256::pkcs8::DecodePrivateKey::from_pkcs8_der(&der)
            .map_err(|_| WalletError::Malformed("the private key is not a PKCS#8 P-256 key"))?;
        let root_keys = root_keys
            .iter()
            .map(|key| public_key(key))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            recipient_id: format!("gateway:{GATEWAY}"),
            private_key,
            root_keys,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Token {
    protocol_version: String,
    signature: String,
    intermediate_signing_key: IntermediateSigningKey,
    signed_message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IntermediateSigningKey {
    signed_key: String,
    signatures: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SignedKey {
    key_value: String,
    key_expiration: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SignedMessage {
    encrypted_message: String,
    ephemeral_public_key: String,
    tag: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plaintext {
    gateway_merchant_id: Option<String>,
    message_expiration: String,
    message_id: String,
    payment_method: String,
    payment_method_details: Details,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Details {
    pan: Option<String>,
    expiration_month: Option<u8>,
    expiration_year: Option<i32>,
    auth_method: Option<String>,
    cryptogram: Option<String>,
    eci_indicator: Option<String>,
}

/// Verifies and opens `token` (the `tokenizationData.token` string) as of `now`: the card,
/// with the `gatewayMerchantId` the page asked for as its merchant hint.
pub fn open(
    token: &str,
    keys: &GooglePayKeys,
    now: OffsetDateTime,
) -> Result<WalletCard, WalletError> {
    let token: Token = serde_json::from_str(token)
        .map_err(|_| WalletError::Malformed("not a Google Pay token"))?;
    if token.protocol_version != PROTOCOL {
        return Err(WalletError::Malformed("only protocolVersion ECv2 is taken"));
    }
    let intermediate = verify_intermediate_key(&token.intermediate_signing_key, keys, now)?;
    let signed = signed_bytes(&[
        SENDER_ID,
        &keys.recipient_id,
        PROTOCOL,
        &token.signed_message,
    ]);
    let signature = signature(&token.signature)?;
    intermediate
        .verify(&signed, &signature)
        .map_err(|_| WalletError::Signature("the message is not signed by the intermediate key"))?;
    let message: SignedMessage = serde_json::from_str(&token.signed_message)
        .map_err(|_| WalletError::Malformed("signedMessage"))?;
    let plaintext = decrypt(&message, &keys.private_key)?;
    let plaintext: Plaintext = serde_json::from_slice(&plaintext)
        .map_err(|_| WalletError::NotACard("the message is not the published payload"))?;
    if millis(&plaintext.message_expiration)? <= now {
        return Err(WalletError::Expired("the message"));
    }
    card(&plaintext)
}

fn verify_intermediate_key(
    key: &IntermediateSigningKey,
    keys: &GooglePayKeys,
    now: OffsetDateTime,
) -> Result<VerifyingKey, WalletError> {
    let signed = signed_bytes(&[SENDER_ID, PROTOCOL, &key.signed_key]);
    let by_a_root = key.signatures.iter().any(|raw| {
        signature(raw).is_ok_and(|signature| {
            keys.root_keys
                .iter()
                .any(|root| root.verify(&signed, &signature).is_ok())
        })
    });
    if !by_a_root {
        return Err(WalletError::Signature(
            "the intermediate key is not signed by a root key we trust",
        ));
    }
    let signed_key: SignedKey = serde_json::from_str(&key.signed_key)
        .map_err(|_| WalletError::Malformed("intermediateSigningKey.signedKey"))?;
    if millis(&signed_key.key_expiration)? <= now {
        return Err(WalletError::Expired("the intermediate signing key"));
    }
    public_key(&signed_key.key_value)
}

/// Each part as its length (4 bytes, little-endian) then its bytes: Google's signed strings.
fn signed_bytes(parts: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for part in parts {
        let length = u32::try_from(part.len()).unwrap_or(u32::MAX);
        out.extend_from_slice(&length.to_le_bytes());
        out.extend_from_slice(part.as_bytes());
    }
    out
}

fn signature(raw: &str) -> Result<Signature, WalletError> {
    let der = STANDARD
        .decode(raw)
        .map_err(|_| WalletError::Malformed("a signature is not base64"))?;
    Signature::from_der(&der).map_err(|_| WalletError::Malformed("a signature is not DER ECDSA"))
}

fn public_key(raw: &str) -> Result<VerifyingKey, WalletError> {
    let der = STANDARD
        .decode(raw.trim())
        .map_err(|_| WalletError::Malformed("a public key is not base64"))?;
    VerifyingKey::from_public_key_der(&der)
        .map_err(|_| WalletError::Malformed("a public key is not a P-256 key"))
}

/// An instant given as milliseconds since the epoch, in a string.
fn millis(raw: &str) -> Result<OffsetDateTime, WalletError> {
    raw.parse::<i128>()
        .ok()
        .and_then(|ms| ms.checked_mul(1_000_000))
        .and_then(|nanos| OffsetDateTime::from_unix_timestamp_nanos(nanos).ok())
        .ok_or(WalletError::Malformed("an expiration is not milliseconds"))
}

type Aes256Ctr = ctr::Ctr128BE<aes::Aes256>;

fn decrypt(message: &SignedMessage, private_key: &SecretKey) -> Result<Vec<u8>, WalletError> {
    let decode = |raw: &str, what| {
        STANDARD
            .decode(raw)
            .map_err(|_| WalletError::Malformed(what))
    };
    let ephemeral = decode(&message.ephemeral_public_key, "ephemeralPublicKey")?;
    let ciphertext = decode(&message.encrypted_message, "encryptedMessage")?;
    let tag = decode(&message.tag, "tag")?;
    let their = PublicKey::from_sec1_bytes(&ephemeral)
        .map_err(|_| WalletError::Malformed("ephemeralPublicKey"))?;
    let shared = p256::ecdh::diffie_hellman(private_key.to_nonzero_scalar(), their.as_affine());
    let (encryption_key, mac_key) = derive_keys(&ephemeral, shared.raw_secret_bytes());
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(&mac_key).map_err(|_| WalletError::Decryption)?;
    mac.update(&ciphertext);
    // Checked in constant time, and before a byte is decrypted.
    mac.verify_slice(&tag)
        .map_err(|_| WalletError::Decryption)?;
    let mut plaintext = ciphertext;
    let mut cipher = Aes256Ctr::new(&encryption_key.into(), &[0u8; 16].into());
    cipher.apply_keystream(&mut plaintext);
    Ok(plaintext)
}

/// HKDF-SHA256 over `ephemeral || shared` (salt zeros, info `Google`) to 512 bits: the AES
/// key, then the HMAC key.
#[expect(
    clippy::expect_used,
    reason = "64 bytes is within HKDF-SHA256's output limit (8,160)"
)]
fn derive_keys(ephemeral: &[u8], shared: &[u8]) -> ([u8; 32], [u8; 32]) {
    let mut ikm = Vec::with_capacity(ephemeral.len().saturating_add(shared.len()));
    ikm.extend_from_slice(ephemeral);
    ikm.extend_from_slice(shared);
    let mut okm = [0u8; 64];
    Hkdf::<Sha256>::new(None, &ikm)
        .expand(HKDF_INFO, &mut okm)
        .expect("64 bytes is a valid HKDF-SHA256 length");
    let mut encryption = [0u8; 32];
    let mut mac = [0u8; 32];
    encryption.copy_from_slice(&okm[..32]);
    mac.copy_from_slice(&okm[32..]);
    (encryption, mac)
}

fn card(plaintext: &Plaintext) -> Result<WalletCard, WalletError> {
    if plaintext.payment_method != "CARD" {
        return Err(WalletError::NotACard("the payment method is not CARD"));
    }
    let details = &plaintext.payment_method_details;
    let device_token = match details.auth_method.as_deref() {
        Some("PAN_ONLY") => false,
        Some("CRYPTOGRAM_3DS") => true,
        _ => {
            return Err(WalletError::NotACard(
                "authMethod is neither PAN_ONLY nor CRYPTOGRAM_3DS",
            ));
        }
    };
    let number = details
        .pan
        .as_deref()
        .and_then(|pan| CardNumber::parse(pan).ok())
        .ok_or(WalletError::NotACard("no valid card number"))?;
    let (Some(month), Some(year)) = (details.expiration_month, details.expiration_year) else {
        return Err(WalletError::NotACard("no expiration"));
    };
    let expiration = Expiration::parse_mmyy(&format!("{month:02}{:02}", year.rem_euclid(100)))
        .ok()
        .filter(|_| (2000..2100).contains(&year))
        .ok_or(WalletError::NotACard("no valid expiration"))?;
    let cryptogram = match (&details.cryptogram, device_token) {
        (Some(c), true) if is_base64(c) => Some(c.clone()),
        (_, true) => {
            return Err(WalletError::NotACard(
                "a device token without a valid cryptogram",
            ));
        }
        (_, false) => None,
    };
    let eci = details
        .eci_indicator
        .clone()
        .filter(|e| !e.is_empty() && e.len() <= 2 && e.bytes().all(|b| b.is_ascii_digit()));
    Ok(WalletCard {
        number,
        expiration,
        proof: WalletProof {
            kind: WalletKind::GooglePay,
            cryptogram,
            eci,
        },
        merchant_hint: Some(
            plaintext
                .gateway_merchant_id
                .clone()
                .filter(|id| !id.is_empty())
                .ok_or(WalletError::NotACard("no gatewayMerchantId"))?,
        ),
        message_id: plaintext.message_id.clone(),
    })
}

/// A cryptogram is base64: it is sealed beside the number in a `|`-separated text.
pub(crate) fn is_base64(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
}

#[cfg(any(test, feature = "test-support"))]
pub mod testing;
#[cfg(test)]
mod tests;
