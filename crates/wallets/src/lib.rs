//! Wallet payment tokens, verified and opened on the server: what a browser's Google Pay sheet
//! hands the page is encrypted for Holdfast (`gateway: "holdfast"`), and only here does it
//! become a card. No I/O: keys come from configuration, time from the caller.

#![warn(missing_docs)]

pub mod google_pay;

use std::fmt;

use holdfast_domain::payment::card::{CardNumber, Expiration};

/// Why a wallet token was refused. The messages are ours: none repeats a byte of the token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalletError {
    /// The token is not in the published format; the text names the part.
    #[error("the wallet token is malformed: {0}")]
    Malformed(&'static str),
    /// A signature does not verify under the keys we trust.
    #[error("the wallet token's signature does not verify: {0}")]
    Signature(&'static str),
    /// A key or the message is past its expiration.
    #[error("the wallet token has expired: {0}")]
    Expired(&'static str),
    /// The message does not open with our key (wrong recipient, or altered).
    #[error("the wallet token does not open with this gateway's key")]
    Decryption,
    /// The token opened but holds no usable card.
    #[error("the wallet token holds no usable card: {0}")]
    NotACard(&'static str),
}

/// How the wallet authenticated the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// A card number stored in the account, without a device cryptogram.
    PanOnly,
    /// A device token (DPAN) with a 3-D Secure cryptogram.
    Cryptogram3ds,
}

/// A card a wallet token held: the number (a device account number for a cryptogram) and
/// expiration, and for a device token its cryptogram. `Debug` redacts all of it.
#[derive(Clone, PartialEq, Eq)]
pub struct WalletCard {
    /// The account or device number.
    pub number: CardNumber,
    /// When it expires.
    pub expiration: Expiration,
    /// How the wallet authenticated it.
    pub auth_method: AuthMethod,
    /// The online cryptogram, for `Cryptogram3ds`.
    pub cryptogram: Option<String>,
    /// The ECI indicator, when the wallet gave one.
    pub eci: Option<String>,
}

impl fmt::Debug for WalletCard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WalletCard")
            .field("number", &self.number)
            .field("auth_method", &self.auth_method)
            .finish_non_exhaustive()
    }
}
