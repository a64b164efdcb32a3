//! Card tokens. A single-use token (any key; spec 5.3) is consumed by the first transaction that
//! uses it and expires after `SINGLE_USE_LIFETIME`; a vault token (private keys only) is used
//! any number of times. The card number and expiration are kept sealed by the `CardVault`; the
//! CVV is never kept, so a token payment is sent without one (`cvv: P`).

use std::fmt;
use std::str::FromStr;

use time::{Duration, OffsetDateTime};

use crate::ids::{PlatformId, TokenId};
use crate::mode::{Mode, UnknownValue};
use crate::ports::Sealed;

use super::transaction::PaymentSummary;

/// How long a single-use token may wait for its transaction.
pub const SINGLE_USE_LIFETIME: Duration = Duration::minutes(15);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TokenKind {
    SingleUse,
    Vault,
}

impl TokenKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SingleUse => "single_use",
            Self::Vault => "vault",
        }
    }
}

impl FromStr for TokenKind {
    type Err = UnknownValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "single_use" => Ok(Self::SingleUse),
            "vault" => Ok(Self::Vault),
            other => Err(UnknownValue(other.to_owned())),
        }
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub id: TokenId,
    pub platform_id: PlatformId,
    pub mode: Mode,
    pub kind: TokenKind,
    pub card: PaymentSummary,
    /// The card number and expiration (`NUMBER|MMYY`), sealed with the token id as context.
    pub sealed: Sealed,
    pub created_on: OffsetDateTime,
    /// Single-use tokens only.
    pub expires_on: Option<OffsetDateTime>,
    pub used_on: Option<OffsetDateTime>,
}
