//! Apple Pay `EC_v1` payment tokens, per Apple's "Payment token format reference":
//!
//! 1. the token is for our payment processing key (`header.publicKeyHash`);
//! 2. its detached CMS signature verifies: the leaf certificate carries Apple's leaf marker
//!    OID and signed the signed attributes, whose message digest is SHA-256 of
//!    `ephemeralPublicKey ‖ data ‖ transactionId ‖ applicationData`; the intermediate carries
//!    the intermediate marker OID and signed the leaf; the configured Apple Root CA - G3 signed
//!    the intermediate; every certificate is within its validity; the signing time is within
//!    minutes of now;
//! 3. `data` opens: ECDH P-256 of our key and the ephemeral key, Apple's KDF (NIST SP 800-56A,
//!    SHA-256, `id-aes256-GCM`, `Apple`, SHA-256 of the merchant identifier) to an AES-256-GCM
//!    key, with a 16-byte zero IV;
//! 4. the plaintext holds a device account number, its expiration and its cryptogram.
//!
//! Apple's servers are not reachable here: the root certificate comes from configuration, and
//! the tests build tokens with a root, intermediate and leaf of their own (`testing.rs`).

use aes_gcm::AesGcm;
use aes_gcm::aead::consts::U16;
use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::aes::Aes256;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use der::Decode;
use der::asn1::ObjectIdentifier;
use p256::pkcs8::DecodePrivateKey;
use p256::{PublicKey, SecretKey};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use spki::DecodePublicKey;
use time::{Duration, OffsetDateTime};
use x509_cert::Certificate;

use holdfast_domain::payment::card::{CardNumber, Expiration};
use holdfast_domain::payment::wallet::{WalletCard, WalletKind, WalletProof};

use crate::WalletError;
use signature::verify_signature;

/// The only version this module takes.
pub const VERSION: &str = "EC_v1";
/// Marks Apple's leaf (signing) certificate.
const LEAF_MARKER: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113635.100.6.29");
/// Marks Apple's intermediate certificate (Apple Application Integration CA - G3).
const INTERMEDIATE_MARKER: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113635.100.6.2.14");
const SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
const MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
const SIGNING_TIME: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.5");
const ECDSA_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.2");
const ECDSA_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.4.3.3");
const P256: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.10045.3.1.7");
const P384: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.132.0.34");
/// How far a signing time may be from now before the token is taken for a replay.
const SIGNING_WINDOW: Duration = Duration::minutes(5);

/// What opens tokens for our merchant.
pub struct ApplePayKeys {
    /// The payment processing certificate's private key.
    processing_key: SecretKey,
    /// SHA-256 of that key's `SubjectPublicKeyInfo`: the token's `publicKeyHash`.
    public_key_hash: [u8; 32],
    /// SHA-256 of the merchant identifier: the KDF's party V info.
    merchant_id_hash: [u8; 32],
    /// Apple Root CA - G3.
    root: Certificate,
}

impl std::fmt::Debug for ApplePayKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplePayKeys").finish_non_exhaustive()
    }
}

impl ApplePayKeys {
    /// Keys from configuration: the payment processing private key (base64 PKCS#8 DER), the
    /// merchant identifier (`merchant.com.example`), and Apple's root certificate (base64 DER).
    pub fn from_base64(
        processing_key: &str,
        merchant_identifier: &str,
        root_certificate: &str,
    ) -> Result<Self, WalletError> {
        let decode = |raw: &str, what| {
            STANDARD
                .decode(raw.trim())
                .map_err(|_| WalletError::Malformed(what))
        };
        let processing_key =
            SecretKey::from_pkcs8_der(&decode(processing_key, "the processing key is not base64")?)
                .map_err(|_| {
                    WalletError::Malformed("the processing key is not a PKCS#8 P-256 key")
                })?;
        let spki = p256::pkcs8::EncodePublicKey::to_public_key_der(&processing_key.public_key())
            .map_err(|_| WalletError::Malformed("the processing key"))?;
        let root = Certificate::from_der(&decode(
            root_certificate,
            "the root certificate is not base64",
        )?)
        .map_err(|_| WalletError::Malformed("the root certificate is not DER X.509"))?;
        Ok(Self {
            processing_key,
            public_key_hash: Sha256::digest(spki.as_bytes()).into(),
            merchant_id_hash: Sha256::digest(merchant_identifier.as_bytes()).into(),
            root,
        })
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PaymentData {
    version: String,
    data: String,
    signature: String,
    header: Header,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Header {
    ephemeral_public_key: String,
    public_key_hash: String,
    transaction_id: String,
    application_data: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Plaintext {
    application_primary_account_number: String,
    application_expiration_date: String,
    payment_data_type: String,
    payment_data: Details,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Details {
    online_payment_cryptogram: Option<String>,
    eci_indicator: Option<String>,
}

/// Verifies and opens `token` (the payment's `token.paymentData`, as JSON) as of `now`.
pub fn open(
    token: &str,
    keys: &ApplePayKeys,
    now: OffsetDateTime,
) -> Result<WalletCard, WalletError> {
    let token: PaymentData = serde_json::from_str(token)
        .map_err(|_| WalletError::Malformed("not an Apple Pay payment token"))?;
    if token.version != VERSION {
        return Err(WalletError::Malformed("only version EC_v1 is taken"));
    }
    let b64 = |raw: &str, what| {
        STANDARD
            .decode(raw)
            .map_err(|_| WalletError::Malformed(what))
    };
    let ephemeral = b64(
        &token.header.ephemeral_public_key,
        "header.ephemeralPublicKey",
    )?;
    let data = b64(&token.data, "data")?;
    if b64(&token.header.public_key_hash, "header.publicKeyHash")? != keys.public_key_hash {
        return Err(WalletError::Decryption);
    }
    let signed = signed_content(&ephemeral, &data, &token.header)?;
    verify_signature(
        &b64(&token.signature, "signature")?,
        &signed,
        &keys.root,
        now,
    )?;
    let plaintext = decrypt(&ephemeral, &data, keys)?;
    let plaintext: Plaintext = serde_json::from_slice(&plaintext)
        .map_err(|_| WalletError::NotACard("the data is not the published payload"))?;
    // The id of the payment is the bytes Apple signed: `0AFF` and `0aff` are one payment.
    card(
        &plaintext,
        &token.header.transaction_id.to_ascii_lowercase(),
    )
}

/// What Apple signs: `ephemeralPublicKey ‖ data ‖ transactionId ‖ applicationData` (the last
/// two hex-decoded).
fn signed_content(ephemeral: &[u8], data: &[u8], header: &Header) -> Result<Vec<u8>, WalletError> {
    let hex = |raw: &str, what| hex_bytes(raw).ok_or(WalletError::Malformed(what));
    let mut signed = [ephemeral, data].concat();
    signed.extend(hex(&header.transaction_id, "header.transactionId")?);
    if let Some(application_data) = &header.application_data {
        signed.extend(hex(application_data, "header.applicationData")?);
    }
    Ok(signed)
}

fn hex_bytes(raw: &str) -> Option<Vec<u8>> {
    base16ct::mixed::decode_vec(raw).ok()
}

type Aes256Gcm16 = AesGcm<Aes256, U16>;

fn decrypt(ephemeral: &[u8], data: &[u8], keys: &ApplePayKeys) -> Result<Vec<u8>, WalletError> {
    let their = PublicKey::from_public_key_der(ephemeral)
        .map_err(|_| WalletError::Malformed("header.ephemeralPublicKey"))?;
    let shared =
        p256::ecdh::diffie_hellman(keys.processing_key.to_nonzero_scalar(), their.as_affine());
    let key = derive_key(shared.raw_secret_bytes(), &keys.merchant_id_hash);
    let cipher = Aes256Gcm16::new(&key.into());
    cipher
        .decrypt(&[0u8; 16].into(), data)
        .map_err(|_| WalletError::Decryption)
}

/// Apple's KDF: SHA-256(counter 1 ‖ Z ‖ 0x0D ‖ "id-aes256-GCM" ‖ "Apple" ‖ SHA-256(merchant id)).
fn derive_key(shared: &[u8], merchant_id_hash: &[u8; 32]) -> [u8; 32] {
    let mut kdf = Sha256::new();
    kdf.update([0, 0, 0, 1]);
    kdf.update(shared);
    kdf.update([0x0d]);
    kdf.update(b"id-aes256-GCM");
    kdf.update(b"Apple");
    kdf.update(merchant_id_hash);
    kdf.finalize().into()
}

fn card(plaintext: &Plaintext, transaction_id: &str) -> Result<WalletCard, WalletError> {
    if plaintext.payment_data_type != "3DSecure" {
        return Err(WalletError::NotACard("only 3DSecure payment data is taken"));
    }
    let number = CardNumber::parse(&plaintext.application_primary_account_number)
        .map_err(|_| WalletError::NotACard("no valid device account number"))?;
    // YYMMDD: the card is valid through the month.
    let date = &plaintext.application_expiration_date;
    let expiration = date
        .get(..4)
        .filter(|_| date.len() == 6 && date.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|yymm| Expiration::parse_mmyy(&format!("{}{}", &yymm[2..], &yymm[..2])).ok())
        .ok_or(WalletError::NotACard("no valid expiration"))?;
    let cryptogram = plaintext
        .payment_data
        .online_payment_cryptogram
        .clone()
        .filter(|c| crate::google_pay::is_base64(c))
        .ok_or(WalletError::NotACard(
            "a device token without a valid cryptogram",
        ))?;
    let eci = plaintext
        .payment_data
        .eci_indicator
        .clone()
        .filter(|e| !e.is_empty() && e.len() <= 2 && e.bytes().all(|b| b.is_ascii_digit()));
    Ok(WalletCard {
        number,
        expiration,
        proof: WalletProof {
            kind: WalletKind::ApplePay,
            cryptogram: Some(cryptogram),
            eci,
        },
        merchant_hint: None,
        message_id: transaction_id.to_owned(),
    })
}

mod ber;
mod signature;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
#[cfg(test)]
mod tests;
