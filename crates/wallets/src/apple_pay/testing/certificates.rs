//! The certificates of the stand-in chain: each signed by the key above it (P-384 for the
//! root, P-256 below), valid from a day before `now` for a year.

use std::str::FromStr;

use der::asn1::{BitString, OctetString, UtcTime};
use der::{Decode, Encode};
use p256::ecdsa::signature::Signer;
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use time::{Duration, OffsetDateTime};
use x509_cert::ext::Extension;
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};
use x509_cert::{Certificate, TbsCertificate, Version};

use crate::apple_pay::{ECDSA_SHA256, ECDSA_SHA384, ObjectIdentifier};

/// Who signs a certificate.
pub(super) enum Issuing<'a> {
    P384(&'a p384::ecdsa::SigningKey),
    P256(&'a p256::ecdsa::SigningKey),
}

pub(super) fn spki_of(der: &[u8]) -> SubjectPublicKeyInfoOwned {
    SubjectPublicKeyInfoOwned::from_der(der).unwrap()
}

pub(super) fn certificate(
    serial: u8,
    subject: &str,
    issuer: &str,
    spki: SubjectPublicKeyInfoOwned,
    marker: Option<ObjectIdentifier>,
    signer: &Issuing<'_>,
    now: OffsetDateTime,
) -> Certificate {
    let time = |at: OffsetDateTime| {
        Time::UtcTime(
            UtcTime::from_unix_duration(std::time::Duration::from_secs(
                at.unix_timestamp().try_into().unwrap(),
            ))
            .unwrap(),
        )
    };
    let algorithm = AlgorithmIdentifierOwned {
        oid: match signer {
            Issuing::P384(_) => ECDSA_SHA384,
            Issuing::P256(_) => ECDSA_SHA256,
        },
        parameters: None,
    };
    let tbs = TbsCertificate {
        version: Version::V3,
        serial_number: SerialNumber::new(&[serial]).unwrap(),
        signature: algorithm.clone(),
        issuer: Name::from_str(issuer).unwrap(),
        validity: Validity {
            not_before: time(now - Duration::days(1)),
            not_after: time(now + Duration::days(365)),
        },
        subject: Name::from_str(subject).unwrap(),
        subject_public_key_info: spki,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: marker.map(|oid| {
            vec![Extension {
                extn_id: oid,
                critical: false,
                extn_value: OctetString::new(der::asn1::Null.to_der().unwrap()).unwrap(),
            }]
        }),
    };
    let der = tbs.to_der().unwrap();
    let signature = match signer {
        Issuing::P384(key) => {
            let s: p384::ecdsa::Signature = key.sign(&der);
            s.to_der().as_bytes().to_vec()
        }
        Issuing::P256(key) => {
            let s: p256::ecdsa::Signature = key.sign(&der);
            s.to_der().as_bytes().to_vec()
        }
    };
    Certificate {
        tbs_certificate: tbs,
        signature_algorithm: algorithm,
        signature: BitString::from_bytes(&signature).unwrap(),
    }
}
