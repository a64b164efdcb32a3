//! Apple Pay tokens made the way Apple makes them, with a root, intermediate and leaf of our
//! own: for this crate's tests and for end-to-end tests that stand in for Apple
//! (`test-support` feature).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "test support: keys and certificates it made itself always encode; a panic is the failure report"
)]

use cms::cert::CertificateChoices;
use cms::content_info::CmsVersion;
use cms::signed_data::{
    CertificateSet, EncapsulatedContentInfo, SignerIdentifier, SignerInfo, SignerInfos,
};
use der::asn1::{Any, SetOfVec, UtcTime};
use p256::ecdsa::signature::Signer;
use p256::elliptic_curve::rand_core::OsRng;
use p256::pkcs8::{EncodePrivateKey, EncodePublicKey};
use serde_json::{Value, json};
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::Attribute;

use cms::content_info::ContentInfo;
use cms::signed_data::SignedData;
use der::Encode;
use der::asn1::OctetString;

use super::{
    Aead, Aes256Gcm16, ApplePayKeys, Certificate, ECDSA_SHA256, INTERMEDIATE_MARKER, KeyInit,
    LEAF_MARKER, MESSAGE_DIGEST, ObjectIdentifier, OffsetDateTime, SIGNED_DATA, SIGNING_TIME,
    SecretKey, Sha256, derive_key,
};
use crate::google_pay::testing::b64;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;

mod certificates;

use certificates::{Issuing, certificate, spki_of};

/// The device account number every token holds unless a test says otherwise.
pub const DPAN: &str = "4111111111111111";
/// The merchant identifier the tokens are made for.
pub const MERCHANT_ID: &str = "merchant.dev.holdfast.test";
const ID_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1");
const CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");

/// Apple's side: the root (P-384), the intermediate and the leaf, and the merchant's payment
/// processing key; tokens are made as of `now`.
pub struct Issuer {
    root: Certificate,
    intermediate_key: p256::ecdsa::SigningKey,
    intermediate: Certificate,
    leaf_key: p256::ecdsa::SigningKey,
    leaf: Certificate,
    processing: SecretKey,
    now: OffsetDateTime,
}

impl std::fmt::Debug for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Issuer").finish_non_exhaustive()
    }
}

/// What a test changes in an otherwise good token.
#[derive(Debug, Default, Clone)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "each flag is one independent tampering a test asks for"
)]
pub struct Twist {
    /// When the CMS signature says it was made (`now` otherwise).
    pub signed_at: Option<OffsetDateTime>,
    /// Leave the leaf's marker OID out.
    pub unmarked_leaf: bool,
    /// Sign with a key the leaf does not certify.
    pub foreign_signer: bool,
    /// Sign the intermediate with a root other than the configured one.
    pub foreign_root: bool,
    /// Change a byte of `data` after signing.
    pub flip_data: bool,
    /// Encrypt for another merchant identifier.
    pub merchant_id: Option<&'static str>,
    /// The plaintext (`payload(DPAN)` otherwise).
    pub payload: Option<Value>,
    /// The version (`EC_v1` otherwise).
    pub version: Option<&'static str>,
}

/// A plaintext for `dpan`, expiring at the end of 2030.
pub fn payload(dpan: &str) -> Value {
    json!({
        "applicationPrimaryAccountNumber": dpan,
        "applicationExpirationDate": "301231",
        "currencyCode": "840",
        "transactionAmount": 2500,
        "deviceManufacturerIdentifier": "040010030273",
        "paymentDataType": "3DSecure",
        "paymentData": {"onlinePaymentCryptogram": "Af9x/QwAA/DjmU65oyc1MAABAAA=", "eciIndicator": "7"},
    })
}

impl Issuer {
    /// A new chain and processing key, making tokens as of `now`.
    pub fn at(now: OffsetDateTime) -> Self {
        let root_key = p384::ecdsa::SigningKey::random(&mut OsRng);
        let intermediate_key = p256::ecdsa::SigningKey::random(&mut OsRng);
        let leaf_key = p256::ecdsa::SigningKey::random(&mut OsRng);
        let root_spki = spki_of(
            root_key
                .verifying_key()
                .to_public_key_der()
                .unwrap()
                .as_bytes(),
        );
        let root_name = "CN=Apple Root CA - G3,O=Apple Inc.,C=US";
        let intermediate_name = "CN=Apple Application Integration CA - G3,O=Apple Inc.,C=US";
        let root = certificate(
            1,
            root_name,
            root_name,
            root_spki,
            None,
            &Issuing::P384(&root_key),
            now,
        );
        let intermediate = certificate(
            2,
            intermediate_name,
            root_name,
            spki_of(
                intermediate_key
                    .verifying_key()
                    .to_public_key_der()
                    .unwrap()
                    .as_bytes(),
            ),
            Some(INTERMEDIATE_MARKER),
            &Issuing::P384(&root_key),
            now,
        );
        let leaf = certificate(
            3,
            "CN=ecc-smp-broker-sign_UC4-PROD,O=Apple Inc.,C=US",
            intermediate_name,
            spki_of(
                leaf_key
                    .verifying_key()
                    .to_public_key_der()
                    .unwrap()
                    .as_bytes(),
            ),
            Some(LEAF_MARKER),
            &Issuing::P256(&intermediate_key),
            now,
        );
        Self {
            root,
            intermediate_key,
            intermediate,
            leaf_key,
            leaf,
            processing: SecretKey::random(&mut OsRng),
            now,
        }
    }

    /// The payment processing private key, as configured: base64 of its PKCS#8 DER.
    pub fn processing_key_base64(&self) -> String {
        b64(self.processing.to_pkcs8_der().unwrap().as_bytes())
    }

    /// The root certificate, as configured: base64 of its DER.
    pub fn root_base64(&self) -> String {
        b64(&self.root.to_der().unwrap())
    }

    /// The keys that open this issuer's tokens.
    pub fn keys(&self) -> ApplePayKeys {
        ApplePayKeys::from_base64(
            &self.processing_key_base64(),
            MERCHANT_ID,
            &self.root_base64(),
        )
        .unwrap()
    }

    /// A good token.
    pub fn good_token(&self) -> String {
        self.token(&Twist::default())
    }

    /// A token as Apple would make it, changed by `twist`.
    pub fn token(&self, twist: &Twist) -> String {
        let ephemeral = SecretKey::random(&mut OsRng);
        let ephemeral_spki = ephemeral.public_key().to_public_key_der().unwrap();
        let shared = p256::ecdh::diffie_hellman(
            ephemeral.to_nonzero_scalar(),
            self.processing.public_key().as_affine(),
        );
        let merchant_hash: [u8; 32] =
            Sha256::digest(twist.merchant_id.unwrap_or(MERCHANT_ID).as_bytes()).into();
        let key = derive_key(shared.raw_secret_bytes(), &merchant_hash);
        let plaintext = twist
            .payload
            .clone()
            .unwrap_or_else(|| payload(DPAN))
            .to_string();
        let mut data = Aes256Gcm16::new(&key.into())
            .encrypt(&[0u8; 16].into(), plaintext.as_bytes())
            .unwrap();
        let transaction_id = &crate::google_pay::testing::random_id();
        let mut content = [ephemeral_spki.as_bytes(), data.as_slice()].concat();
        content.extend(super::hex_bytes(transaction_id).unwrap());
        let signature = self.sign(&content, twist);
        if twist.flip_data {
            data[0] ^= 1;
        }
        let processing_spki = self.processing.public_key().to_public_key_der().unwrap();
        json!({
            "version": twist.version.unwrap_or(super::VERSION),
            "data": b64(&data),
            "signature": b64(&signature),
            "header": {
                "ephemeralPublicKey": b64(ephemeral_spki.as_bytes()),
                "publicKeyHash": STANDARD.encode(Sha256::digest(processing_spki.as_bytes())),
                "transactionId": transaction_id,
            },
        })
        .to_string()
    }

    /// The leaf and intermediate certificates a token carries, as `twist` has them.
    fn chain(&self, twist: &Twist) -> (Certificate, Certificate) {
        let leaf = if twist.unmarked_leaf {
            certificate(
                3,
                "CN=ecc-smp-broker-sign_UC4-PROD,O=Apple Inc.,C=US",
                "CN=Apple Application Integration CA - G3,O=Apple Inc.,C=US",
                self.leaf.tbs_certificate.subject_public_key_info.clone(),
                None,
                &Issuing::P256(&self.intermediate_key),
                self.now,
            )
        } else {
            self.leaf.clone()
        };
        let intermediate = if twist.foreign_root {
            let other = p384::ecdsa::SigningKey::random(&mut OsRng);
            certificate(
                2,
                "CN=Apple Application Integration CA - G3,O=Apple Inc.,C=US",
                "CN=Apple Root CA - G3,O=Apple Inc.,C=US",
                self.intermediate
                    .tbs_certificate
                    .subject_public_key_info
                    .clone(),
                Some(INTERMEDIATE_MARKER),
                &Issuing::P384(&other),
                self.now,
            )
        } else {
            self.intermediate.clone()
        };
        (leaf, intermediate)
    }

    /// The detached CMS signature of `content`, by the leaf, with the chain.
    fn sign(&self, content: &[u8], twist: &Twist) -> Vec<u8> {
        let attribute = |oid, value: Any| Attribute {
            oid,
            values: SetOfVec::try_from(vec![value]).unwrap(),
        };
        let signed_at = twist.signed_at.unwrap_or(self.now);
        let time = UtcTime::from_unix_duration(std::time::Duration::from_secs(
            signed_at.unix_timestamp().try_into().unwrap(),
        ))
        .unwrap();
        let attributes = SetOfVec::try_from(vec![
            attribute(CONTENT_TYPE, Any::encode_from(&ID_DATA).unwrap()),
            attribute(SIGNING_TIME, Any::encode_from(&time).unwrap()),
            attribute(
                MESSAGE_DIGEST,
                Any::encode_from(&OctetString::new(Sha256::digest(content).to_vec()).unwrap())
                    .unwrap(),
            ),
        ])
        .unwrap();
        let signer = if twist.foreign_signer {
            p256::ecdsa::SigningKey::random(&mut OsRng)
        } else {
            self.leaf_key.clone()
        };
        let signature: p256::ecdsa::Signature = signer.sign(&attributes.to_der().unwrap());
        let (leaf, intermediate) = self.chain(twist);
        let sha256 = AlgorithmIdentifierOwned {
            oid: ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1"),
            parameters: None,
        };
        let message = SignedData {
            version: CmsVersion::V1,
            digest_algorithms: SetOfVec::try_from(vec![sha256.clone()]).unwrap(),
            encap_content_info: EncapsulatedContentInfo {
                econtent_type: ID_DATA,
                econtent: None,
            },
            certificates: Some(CertificateSet(
                SetOfVec::try_from(vec![
                    CertificateChoices::Certificate(leaf.clone()),
                    CertificateChoices::Certificate(intermediate),
                ])
                .unwrap(),
            )),
            crls: None,
            signer_infos: SignerInfos(
                SetOfVec::try_from(vec![SignerInfo {
                    version: CmsVersion::V1,
                    sid: SignerIdentifier::IssuerAndSerialNumber(
                        cms::cert::IssuerAndSerialNumber {
                            issuer: leaf.tbs_certificate.issuer.clone(),
                            serial_number: leaf.tbs_certificate.serial_number.clone(),
                        },
                    ),
                    digest_alg: sha256,
                    signed_attrs: Some(attributes),
                    signature_algorithm: AlgorithmIdentifierOwned {
                        oid: ECDSA_SHA256,
                        parameters: None,
                    },
                    signature: OctetString::new(signature.to_der().as_bytes().to_vec()).unwrap(),
                    unsigned_attrs: None,
                }])
                .unwrap(),
            ),
        };
        ContentInfo {
            content_type: SIGNED_DATA,
            content: Any::encode_from(&message).unwrap(),
        }
        .to_der()
        .unwrap()
    }
}
