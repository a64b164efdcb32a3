//! Card tokens. A single-use token (any key; spec 5.3) is consumed by the first transaction that
//! uses it and expires after `SINGLE_USE_LIFETIME`; a vault token (private keys only) is used
//! any number of times. The card number and expiration are kept sealed by the `CardVault`; the
//! CVV is never kept, so a token payment is sent without one (`cvv: P`).

use time::{Duration, OffsetDateTime};

use crate::ids::{ClientSessionId, PlatformId, TokenId};
use crate::mode::Mode;
use crate::ports::Sealed;

use super::transaction::PaymentSummary;

/// How long a single-use token may wait for its transaction.
pub const SINGLE_USE_LIFETIME: Duration = Duration::minutes(15);

crate::words! {
    /// How often a token can be paid with, and so which keys may create it.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum TokenKind {
        /// Consumed by its first transaction and expiring after `SINGLE_USE_LIFETIME`; any key.
        SingleUse,
        /// A multi-use token kept in the vault; private keys only.
        Vault,
    }
}

/// A card saved under a token id, so a transaction can name the token instead of the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The id a transaction names to pay with this card.
    pub id: TokenId,
    /// The platform whose key created the token; no other platform can use it.
    pub platform_id: PlatformId,
    /// The mode of the key that created it; only keys of the same mode can use it.
    pub mode: Mode,
    /// Single-use or vault.
    pub kind: TokenKind,
    /// The masked card (BIN, brand, last four, funding type) that may be shown.
    pub card: PaymentSummary,
    /// The card number and expiration (`NUMBER|MMYY`), sealed with the token id as context.
    pub sealed: Sealed,
    /// When the token was created.
    pub created_on: OffsetDateTime,
    /// Single-use tokens only.
    pub expires_on: Option<OffsetDateTime>,
    /// When a transaction consumed a single-use token; `None` while it is unused.
    pub used_on: Option<OffsetDateTime>,
    /// The client session the token was made under: a payment with it must match the
    /// session's merchant, amount and currency.
    pub client_session_id: Option<ClientSessionId>,
    /// The wallet the card came from, if it came from one.
    pub wallet: Option<super::wallet::WalletKind>,
    /// The merchant a wallet payment was requested for: a payment with the token must be
    /// for it.
    pub merchant_id: Option<crate::ids::MerchantId>,
}
