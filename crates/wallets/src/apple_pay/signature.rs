//! The token's signature: a CMS detached signature by Apple's leaf certificate, chained through
//! Apple's intermediate to the root we were given, with their marker OIDs, and a signing time
//! within its window.

use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier};
use der::asn1::{ObjectIdentifier, OctetString};
use der::{Decode, Encode};
use p256::ecdsa::signature::hazmat::PrehashVerifier;
use sha2::{Digest, Sha256, Sha384};
use spki::{DecodePublicKey, SubjectPublicKeyInfoOwned};
use time::OffsetDateTime;
use x509_cert::Certificate;

use super::{
    ECDSA_SHA256, ECDSA_SHA384, INTERMEDIATE_MARKER, LEAF_MARKER, MESSAGE_DIGEST, P256, P384,
    SIGNED_DATA, SIGNING_TIME, SIGNING_WINDOW,
};
use crate::WalletError;

pub(super) fn verify_signature(
    signature: &[u8],
    content: &[u8],
    root: &Certificate,
    now: OffsetDateTime,
) -> Result<(), WalletError> {
    let bad = |what| WalletError::Signature(what);
    let der = super::ber::to_der(signature).ok_or(bad("not a CMS message"))?;
    let info = ContentInfo::from_der(&der).map_err(|_| bad("not a CMS message"))?;
    if info.content_type != SIGNED_DATA {
        return Err(bad("not CMS signed data"));
    }
    let message = info
        .content
        .decode_as::<SignedData>()
        .map_err(|_| bad("not CMS signed data"))?;
    let certificates: Vec<&Certificate> = message
        .certificates
        .as_ref()
        .map(|set| {
            set.0
                .iter()
                .filter_map(|choice| match choice {
                    cms::cert::CertificateChoices::Certificate(c) => Some(c),
                    cms::cert::CertificateChoices::Other(_) => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let marked = |oid| {
        certificates.iter().copied().find(|c| {
            c.tbs_certificate
                .extensions
                .as_ref()
                .is_some_and(|exts| exts.iter().any(|e| e.extn_id == oid))
        })
    };
    let leaf = marked(LEAF_MARKER).ok_or(bad("no leaf certificate with Apple's marker"))?;
    let intermediate = marked(INTERMEDIATE_MARKER)
        .ok_or(bad("no intermediate certificate with Apple's marker"))?;
    for certificate in [leaf, intermediate, root] {
        within_validity(certificate, now)?;
    }
    verify_certificate(intermediate, root)
        .map_err(|()| bad("the intermediate is not signed by the root"))?;
    verify_certificate(leaf, intermediate)
        .map_err(|()| bad("the leaf is not signed by the intermediate"))?;

    let [signer] = message.signer_infos.0.as_slice() else {
        return Err(bad("not exactly one signer"));
    };
    match &signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(id)
            if id.serial_number == leaf.tbs_certificate.serial_number => {}
        _ => return Err(bad("the signer is not the leaf certificate")),
    }
    let attributes = signer
        .signed_attrs
        .as_ref()
        .ok_or(bad("no signed attributes"))?;
    let value = |oid| {
        attributes
            .iter()
            .find(|a| a.oid == oid)
            .and_then(|a| a.values.iter().next())
    };
    let digest = value(MESSAGE_DIGEST)
        .and_then(|v| v.decode_as::<OctetString>().ok())
        .ok_or(bad("no message digest"))?;
    if digest.as_bytes() != Sha256::digest(content).as_slice() {
        return Err(bad("the message digest is not the token's"));
    }
    let signing_time = value(SIGNING_TIME)
        .and_then(|v| v.to_der().ok())
        .and_then(|der| x509_cert::time::Time::from_der(&der).ok())
        .ok_or(bad("no signing time"))?;
    let signed_at = instant(signing_time);
    let earliest = now.checked_sub(SIGNING_WINDOW).unwrap_or(now);
    let latest = now.checked_add(SIGNING_WINDOW).unwrap_or(now);
    if signed_at < earliest || signed_at > latest {
        return Err(WalletError::Expired(
            "the signing time is not within minutes of now",
        ));
    }
    let attributes_der = attributes.to_der().map_err(|_| bad("signed attributes"))?;
    verify(
        &attributes_der,
        &signer.signature_algorithm.oid,
        signer.signature.as_bytes(),
        &leaf.tbs_certificate.subject_public_key_info,
    )
    .map_err(|()| bad("the signature is not the leaf's"))
}

/// An ASN.1 time as an instant; one past what `time` holds is the latest it holds, which no
/// `now` passes (a certificate not yet valid, a signing time out of its window).
fn instant(time: x509_cert::time::Time) -> OffsetDateTime {
    time::Duration::try_from(time.to_unix_duration())
        .ok()
        .and_then(|since_epoch| OffsetDateTime::UNIX_EPOCH.checked_add(since_epoch))
        .unwrap_or(time::PrimitiveDateTime::MAX.assume_utc())
}

fn within_validity(certificate: &Certificate, now: OffsetDateTime) -> Result<(), WalletError> {
    let validity = &certificate.tbs_certificate.validity;
    if now < instant(validity.not_before) || now > instant(validity.not_after) {
        return Err(WalletError::Expired(
            "a certificate is outside its validity",
        ));
    }
    Ok(())
}

fn verify_certificate(child: &Certificate, issuer: &Certificate) -> Result<(), ()> {
    let tbs = child.tbs_certificate.to_der().map_err(|_| ())?;
    let signature = child.signature.as_bytes().ok_or(())?;
    verify(
        &tbs,
        &child.signature_algorithm.oid,
        signature,
        &issuer.tbs_certificate.subject_public_key_info,
    )
}

/// An ECDSA signature (DER) of `message` by the key of `spki`, P-256 or P-384, with SHA-256 or
/// SHA-384 as the algorithm says.
fn verify(
    message: &[u8],
    algorithm: &ObjectIdentifier,
    signature: &[u8],
    spki: &SubjectPublicKeyInfoOwned,
) -> Result<(), ()> {
    let digest = match *algorithm {
        ECDSA_SHA256 => Sha256::digest(message).to_vec(),
        ECDSA_SHA384 => Sha384::digest(message).to_vec(),
        _ => return Err(()),
    };
    let curve = spki
        .algorithm
        .parameters
        .as_ref()
        .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
        .ok_or(())?;
    let key = spki.to_der().map_err(|_| ())?;
    match curve {
        P256 => {
            let key = p256::ecdsa::VerifyingKey::from_public_key_der(&key).map_err(|_| ())?;
            let signature = p256::ecdsa::Signature::from_der(signature).map_err(|_| ())?;
            key.verify_prehash(&digest, &signature).map_err(|_| ())
        }
        P384 => {
            let key = p384::ecdsa::VerifyingKey::from_public_key_der(&key).map_err(|_| ())?;
            let signature = p384::ecdsa::Signature::from_der(signature).map_err(|_| ())?;
            key.verify_prehash(&digest, &signature).map_err(|_| ())
        }
        _ => Err(()),
    }
}
