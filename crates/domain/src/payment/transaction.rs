//! A transaction as recorded and as returned (spec 2.2). Its `Serialize` is the API's JSON
//! shape, used for responses and for the `data` of its `transaction.created` event alike.
//!
//! Beyond spec 2.2's fields (unspecified there, so ours): `mode`, `state` (what may follow,
//! see `lifecycle`), `transactionId` (the original, for capture, void and refund; null
//! otherwise) and `refundedAmount` (the sum refunded of a sale or capture).

use serde::{Serialize, Serializer};
use time::OffsetDateTime;
use time::format_description::FormatItem;
use time::macros::format_description;

use crate::ids::{ConnectionId, MerchantId, PlanId, PlatformId, TxnId};
use crate::merchant::Currency;
use crate::mode::Mode;

use super::brand::{CardBrand, FundingType};
use super::lifecycle::{Original, TxnState, TxnType};

/// One transaction of any type: an auth, sale, capture, void or refund (spec 2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Transaction {
    /// The transaction's own id (`txn_`).
    pub id: TxnId,
    /// Auth, sale, capture, void or refund; `type` in the JSON.
    #[serde(rename = "type", serialize_with = "as_str_type")]
    pub kind: TxnType,
    /// The merchant the transaction is made for (`mid_`).
    pub merchant_id: MerchantId,
    /// The platform the merchant belongs to (`pfm_`).
    pub platform_id: PlatformId,
    /// The amount asked of the processor, in minor units; `authorization.approvedAmount` is
    /// what it approved.
    pub amount: i64,
    /// The merchant's currency, in which the amount and fee are counted.
    #[serde(serialize_with = "as_str_currency")]
    pub currency: Currency,
    /// What the plan charges the merchant for this transaction, in minor units (see `fee`).
    pub fee: i64,
    /// When the transaction was recorded, serialized in UTC (see `TIMESTAMP_FORMAT`).
    #[serde(serialize_with = "timestamp")]
    pub created_on: OffsetDateTime,
    /// The masked card charged.
    pub payment: PaymentSummary,
    /// The merchant's plan that routed the transaction and set its fee.
    pub plan: Named<PlanId>,
    /// The processor connection (`midCon_`) that handled the call, after any fallback.
    pub processor: Named<ConnectionId>,
    /// The processor's answer.
    pub authorization: Authorization,
    /// Test or live; a transaction is seen only by keys of its mode (spec 5).
    #[serde(serialize_with = "as_str_mode")]
    pub mode: Mode,
    /// Where the transaction stands with respect to what may follow it (see `lifecycle`).
    #[serde(serialize_with = "as_str_state")]
    pub state: TxnState,
    /// The original a capture, void or refund follows; `None` for an auth or sale.
    #[serde(rename = "transactionId")]
    pub parent_id: Option<TxnId>,
    /// The sum already refunded of a sale or capture, in minor units; 0 for other types.
    pub refunded_amount: i64,
}

impl Transaction {
    /// What the follow-up rules need of this transaction.
    pub fn as_original(&self) -> Original {
        Original {
            kind: self.kind,
            state: self.state,
            approved_amount: self.authorization.approved_amount,
            refunded_amount: self.refunded_amount,
        }
    }
}

/// The masked card: never the number, the CVV or the expiration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PaymentSummary {
    /// The card number's first six digits.
    pub bin: String,
    /// The card's network, from the BIN table or else the IIN ranges.
    #[serde(serialize_with = "as_str_brand")]
    pub brand: CardBrand,
    /// The card number's last four digits.
    pub last4: String,
    /// Credit, debit or prepaid; `type` in the JSON.
    #[serde(rename = "type", serialize_with = "as_str_funding")]
    pub funding: FundingType,
}

/// A reference to another resource as the transaction shows it: its id and display name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named<I> {
    /// The referenced resource's id.
    pub id: I,
    /// The referenced resource's name, as it was when the transaction was made.
    pub name: String,
}

/// The processor's answer to a transaction: the `authorization` object of spec 2.2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Authorization {
    /// The amount the processor approved, in minor units; 0 when not approved.
    pub approved_amount: i64,
    /// The address verification result.
    #[serde(serialize_with = "as_str_avs")]
    pub avs: AvsCode,
    /// The card security code result.
    #[serde(serialize_with = "as_str_cvv")]
    pub cvv: CvvCode,
    /// True when less than the amount asked was approved.
    pub partial: bool,
    /// The processor's own result code (e.g. a decline code).
    pub processor_code: String,
    /// The processor's human-readable message for its result.
    pub processor_message: String,
    /// The processor's own id for the transaction, used to follow it up there.
    pub processor_transaction_id: String,
    /// The outcome of the processor call, one letter.
    #[serde(serialize_with = "as_str_status")]
    pub status: AuthStatus,
}

/// `authorization.status`: the outcome of the processor call, one letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AuthStatus {
    /// A: approved, in full or in part (`partial` says which).
    Approved,
    /// D: declined by the issuer or the processor; `processorCode` says why.
    Declined,
    /// E: the processor failed (every connection the plan allows was tried).
    Error,
    /// T: the processor did not answer in time; any hold was reversed.
    TimedOut,
}

/// Address verification result, one letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AvsCode {
    /// Y: street address and postal code match.
    FullMatch,
    /// A: street address matches, postal code does not.
    AddressOnly,
    /// Z: postal code matches, street address does not.
    PostalOnly,
    /// N: neither matches.
    NoMatch,
    /// U: address information unavailable (also: no card at this step).
    Unavailable,
    /// R: the issuer's system was unavailable; retry.
    Retry,
}

/// Card security code result, one letter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CvvCode {
    /// M: match.
    Match,
    /// N: no match.
    NoMatch,
    /// P: not processed (no CVV sent, or no card at this step).
    NotProcessed,
    /// U: the issuer does not support CVV checks.
    Unsupported,
}

macro_rules! letters {
    ($ty:ty { $($variant:ident => $letter:literal),* $(,)? }) => {
        impl $ty {
            /// Every value, in the order its letters are listed.
            pub const ALL: &'static [$ty] = &[$(<$ty>::$variant),*];

            /// The one-letter code the API shows for this value.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(<$ty>::$variant => $letter),*
                }
            }

            /// The value a one-letter code stands for, or `None` for a letter not in the set.
            pub fn from_letter(letter: &str) -> Option<Self> {
                match letter {
                    $($letter => Some(<$ty>::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

letters!(AuthStatus { Approved => "A", Declined => "D", Error => "E", TimedOut => "T" });
letters!(AvsCode {
    FullMatch => "Y",
    AddressOnly => "A",
    PostalOnly => "Z",
    NoMatch => "N",
    Unavailable => "U",
    Retry => "R",
});
letters!(CvvCode { Match => "M", NoMatch => "N", NotProcessed => "P", Unsupported => "U" });

/// RFC 3339 in UTC with exactly six fractional digits.
pub const TIMESTAMP_FORMAT: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

/// Writes an instant in `TIMESTAMP_FORMAT`, converting it to UTC first.
pub fn format_timestamp(at: OffsetDateTime) -> String {
    at.to_offset(time::UtcOffset::UTC)
        .format(TIMESTAMP_FORMAT)
        .expect("timestamps format")
}

fn timestamp<S: Serializer>(at: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_timestamp(*at))
}

macro_rules! str_serializers {
    ($($name:ident: $ty:ty),* $(,)?) => {
        $(
            fn $name<S: Serializer>(value: &$ty, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(value.as_str())
            }
        )*
    };
}

str_serializers!(
    as_str_type: TxnType,
    as_str_state: TxnState,
    as_str_mode: Mode,
    as_str_currency: Currency,
    as_str_brand: CardBrand,
    as_str_funding: FundingType,
    as_str_avs: AvsCode,
    as_str_cvv: CvvCode,
    as_str_status: AuthStatus,
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_round_trip() {
        for s in AuthStatus::ALL {
            assert_eq!(AuthStatus::from_letter(s.as_str()), Some(*s));
        }
        for a in AvsCode::ALL {
            assert_eq!(AvsCode::from_letter(a.as_str()), Some(*a));
            assert_eq!(a.as_str().len(), 1);
        }
        for c in CvvCode::ALL {
            assert_eq!(CvvCode::from_letter(c.as_str()), Some(*c));
        }
        assert_eq!(AuthStatus::from_letter("X"), None);
    }
}
