#![doc = include_str!("../README.md")]
// No input may stop the server (issue 37): what could panic is refused outside tests, and each
// proven-safe case says why in its `#[expect]`.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]
#![warn(missing_docs)]

pub mod apple_pay;
pub mod google_pay;

use holdfast_domain::mode::Mode;
use holdfast_domain::payment::wallet::{WalletCard, WalletKind, WalletRefusal};
use holdfast_domain::ports::WalletOpener;
use time::OffsetDateTime;

use self::apple_pay::ApplePayKeys;
use self::google_pay::GooglePayKeys;

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

/// The `WalletOpener` port: each wallet's keys, per mode. A wallet without keys for a mode is
/// refused there as not set up.
#[derive(Debug, Default)]
pub struct Wallets {
    /// Google Pay's keys for test-mode tokens (Google's `TEST` environment).
    pub google_pay_test: Option<GooglePayKeys>,
    /// Google Pay's keys for live-mode tokens (`PRODUCTION`).
    pub google_pay_live: Option<GooglePayKeys>,
    /// Apple Pay's payment processing key, merchant identifier and root, for both modes.
    pub apple_pay: Option<ApplePayKeys>,
}

impl WalletOpener for Wallets {
    fn open(
        &self,
        kind: WalletKind,
        mode: Mode,
        token: &str,
        now: OffsetDateTime,
    ) -> Result<WalletCard, WalletRefusal> {
        let refused = |e: WalletError| WalletRefusal::Refused(e.to_string());
        match kind {
            WalletKind::GooglePay => {
                let keys = match mode {
                    Mode::Test => self.google_pay_test.as_ref(),
                    Mode::Live => self.google_pay_live.as_ref(),
                }
                .ok_or(WalletRefusal::NotConfigured(kind))?;
                google_pay::open(token, keys, now).map_err(refused)
            }
            WalletKind::ApplePay => {
                let keys = self
                    .apple_pay
                    .as_ref()
                    .ok_or(WalletRefusal::NotConfigured(kind))?;
                apple_pay::open(token, keys, now).map_err(refused)
            }
        }
    }
}
