//! Standard Webhooks signatures and secrets.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const SECRET_PREFIX: &str = "whsec_";

/// Why a secret cannot sign. Never carries the secret itself.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignError {
    #[error("the webhook secret is not valid base64 after its whsec_ prefix")]
    NotBase64,
    #[error("the webhook secret is empty")]
    Empty,
}

/// The `webhook-signature` value: `v1,` + base64 HMAC-SHA256 of `{msg_id}.{timestamp}.{body}`,
/// keyed with the secret's bytes. The `whsec_` prefix is optional, as in the reference libraries.
pub fn sign(secret: &str, msg_id: &str, timestamp: i64, body: &str) -> Result<String, SignError> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    let key = STANDARD.decode(encoded).map_err(|_| SignError::NotBase64)?;
    if key.is_empty() {
        return Err(SignError::Empty);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| SignError::Empty)?;
    mac.update(format!("{msg_id}.{timestamp}.").as_bytes());
    mac.update(body.as_bytes());
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

#[cfg(test)]
pub(crate) fn generate_secret_from(bytes: &[u8; 32]) -> String {
    format!("{SECRET_PREFIX}{}", STANDARD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const TIMESTAMP: i64 = 1_614_265_330;
    const BODY: &str = r#"{"test": 2432232314}"#;

    #[test]
    fn matches_the_standard_webhooks_test_vector() {
        let expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        assert_eq!(sign(SECRET, MSG_ID, TIMESTAMP, BODY).unwrap(), expected);
        assert_eq!(
            sign(&SECRET[6..], MSG_ID, TIMESTAMP, BODY).unwrap(),
            expected,
            "prefix optional"
        );
    }

    #[test]
    fn every_input_changes_the_signature() {
        let base = sign(SECRET, MSG_ID, TIMESTAMP, BODY).unwrap();
        assert_ne!(sign(SECRET, "msg_other", TIMESTAMP, BODY).unwrap(), base);
        assert_ne!(sign(SECRET, MSG_ID, TIMESTAMP + 1, BODY).unwrap(), base);
        assert_ne!(sign(SECRET, MSG_ID, TIMESTAMP, "{}").unwrap(), base);
        assert_ne!(
            sign(&generate_secret_from(&[7; 32]), MSG_ID, TIMESTAMP, BODY).unwrap(),
            base
        );
    }

    #[test]
    fn bad_secrets_are_refused() {
        assert_eq!(
            sign("whsec_not base64!", MSG_ID, TIMESTAMP, BODY),
            Err(SignError::NotBase64)
        );
        assert_eq!(
            sign("whsec_", MSG_ID, TIMESTAMP, BODY),
            Err(SignError::Empty)
        );
    }

    #[test]
    fn generated_secrets_round_trip() {
        let secret = generate_secret_from(&[0xab; 32]);
        assert!(secret.starts_with("whsec_"));
        let decoded = STANDARD.decode(&secret[6..]).unwrap();
        assert_eq!(decoded, [0xab; 32]);
        assert!(sign(&secret, MSG_ID, TIMESTAMP, BODY).is_ok());
    }
}
