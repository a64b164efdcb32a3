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
