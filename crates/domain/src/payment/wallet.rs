//! Wallets (spec 1: Apple Pay on the web, Google Pay for web). A wallet hands the page a token
//! encrypted for Holdfast; the server opens it (the `WalletOpener` port) into a card, which
//! becomes a single-use token like a typed card. A device account number's cryptogram travels
//! sealed with the number and goes to the processor with it.

use std::fmt;

use super::card::{CardNumber, Expiration};

crate::words! {
    /// Which wallet a token came from.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum WalletKind {
        /// Apple Pay on the web (`EC_v1` payment tokens).
        ApplePay,
        /// Google Pay for web (`ECv2` payment method tokens).
        GooglePay,
    }
}

/// What a wallet adds to a card: proof that the device holder authorised this payment.
#[derive(Clone, PartialEq, Eq)]
pub struct WalletProof {
    /// The wallet.
    pub kind: WalletKind,
    /// The online cryptogram of a device token; `None` for a card stored in the account
    /// (Google Pay's `PAN_ONLY`).
    pub cryptogram: Option<String>,
    /// The e-commerce indicator the wallet gave, if any.
    pub eci: Option<String>,
}

impl fmt::Debug for WalletProof {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WalletProof")
            .field("kind", &self.kind)
            .field("cryptogram", &self.cryptogram.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

/// A wallet token, opened: the card, its proof, and the merchant the page asked for.
#[derive(Clone, PartialEq, Eq)]
pub struct WalletCard {
    /// The account number, or the device account number of a device token.
    pub number: CardNumber,
    /// When it expires.
    pub expiration: Expiration,
    /// The wallet's proof.
    pub proof: WalletProof,
    /// The merchant id the page put in its wallet request (`gatewayMerchantId`), if any.
    pub merchant_hint: Option<String>,
    /// The wallet's own id of this payment (Google's `messageId`, Apple's `transactionId`):
    /// one wallet payment makes one token, never two.
    pub message_id: String,
}

impl fmt::Debug for WalletCard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WalletCard")
            .field("number", &self.number)
            .field("proof", &self.proof)
            .finish_non_exhaustive()
    }
}

/// Why a wallet token was not opened. The message is the adapter's own words, never a byte
/// of the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalletRefusal {
    /// This wallet is not set up for the mode (no keys configured).
    #[error("{0} is not set up for this mode")]
    NotConfigured(WalletKind),
    /// The token failed a check; the message says which, in our words.
    #[error("{0}")]
    Refused(String),
}

/// Apple's gateway gave no merchant session: unreachable, refused the certificate, answered
/// something other than a session. The message is ours; Apple's answer goes to the log only.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GatewayFailure(pub String);

/// What Apple Pay's `completeMerchantValidation` takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MerchantSession {
    /// The session Apple's gateway answered, as the JSON object it sent: opaque to us, signed by
    /// Apple, handed to the page unchanged.
    Apple(String),
    /// In test mode with no merchant identity certificate configured, a sandbox session of
    /// Holdfast's own (docs/hosted-fields.md), which only the test stand-ins accept.
    Sandbox(SandboxSession),
}

/// Holdfast's own stand-in for a merchant session, in Apple's shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSession {
    /// `SANDBOX_…`.
    pub merchant_session_identifier: String,
    /// When it was made, in milliseconds since the epoch.
    pub epoch_timestamp: i64,
    /// When it stops working, in milliseconds since the epoch.
    pub expires_at: i64,
    /// A random value of its own.
    pub nonce: String,
    /// The merchant identifier it is for.
    pub merchant_identifier: String,
    /// The page's domain.
    pub domain_name: String,
    /// The name the sheet shows.
    pub display_name: String,
}

/// What Holdfast asks Apple's gateway for: a session for a page on `domain`, checked by
/// [`is_apple_validation_url`] and [`is_domain_name`] before it is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerchantValidation {
    /// The gateway endpoint Apple's sheet named (`validationURL`).
    pub validation_url: String,
    /// The page's host name (`initiativeContext`).
    pub domain: String,
    /// The name Apple's sheet shows (`displayName`).
    pub display_name: String,
}

/// The longest display name Apple accepts.
pub const DISPLAY_NAME_MAX_CHARS: usize = 64;

/// Whether `domain` reads as a host name in lower case: letters, digits, `-` and `.`, at most 253
/// bytes.
pub fn is_domain_name(domain: &str) -> bool {
    (1..=253).contains(&domain.len())
        && domain
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// Whether `url` is one of Apple Pay's merchant-validation endpoints: `https`, a host of
/// Apple's payment gateways (`apple-pay-gateway….apple.com`, `cn-apple-pay-gateway….apple.com`),
/// no port, no credentials. A validation request goes nowhere else.
pub fn is_apple_validation_url(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let host = rest.split('/').next().unwrap_or_default();
    let known_gateway =
        host.starts_with("apple-pay-gateway") || host.starts_with("cn-apple-pay-gateway");
    url.len() <= 512
        && known_gateway
        && host.ends_with(".apple.com")
        && host
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && rest[host.len()..].starts_with("/paymentservices/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_apples_gateways_validate_merchants() {
        let cases = [
            (
                "https://apple-pay-gateway.apple.com/paymentservices/startSession",
                true,
            ),
            (
                "https://apple-pay-gateway-cert.apple.com/paymentservices/paymentSession",
                true,
            ),
            (
                "https://cn-apple-pay-gateway-sh-pod1.apple.com/paymentservices/startSession",
                true,
            ),
            (
                "http://apple-pay-gateway.apple.com/paymentservices/startSession",
                false,
            ),
            (
                "https://apple-pay-gateway.apple.com.evil.example/paymentservices/startSession",
                false,
            ),
            (
                "https://apple-pay-gateway.evil.example/paymentservices/startSession",
                false,
            ),
            ("https://evil.apple.com/paymentservices/startSession", false),
            (
                "https://apple-pay-gateway.apple.com:8443/paymentservices/startSession",
                false,
            ),
            (
                "https://user@apple-pay-gateway.apple.com/paymentservices/startSession",
                false,
            ),
            ("https://apple-pay-gateway.apple.com/elsewhere", false),
            ("https://127.0.0.1/paymentservices/startSession", false),
        ];
        for (url, ok) in cases {
            assert_eq!(is_apple_validation_url(url), ok, "{url}");
        }
    }
}
