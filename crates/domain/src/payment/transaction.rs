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
use super::labels::Reference;
use super::lifecycle::{Original, TxnState, TxnType};
use crate::metadata::Metadata;

/// One transaction of any type: an auth, sale, capture, void or refund (spec 2.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Transaction {
    /// The transaction's own id (`txn_`).
    pub id: TxnId,
    /// Auth, sale, capture, void or refund; `type` in the JSON.
    #[serde(rename = "type")]
    pub kind: TxnType,
    /// The merchant the transaction is made for (`mid_`).
    pub merchant_id: MerchantId,
    /// The platform the merchant belongs to (`pfm_`).
    pub platform_id: PlatformId,
    /// The amount asked of the processor, in minor units; `authorization.approvedAmount` is
    /// what it approved.
    pub amount: i64,
    /// The merchant's currency, in which the amount and fee are counted.
    pub currency: Currency,
    /// What the plan charges the merchant for this transaction, in minor units (see `fee`).
    pub fee: i64,
    /// When the transaction was recorded, serialized in UTC (see `TIMESTAMP_FORMAT`).
    #[serde(serialize_with = "serialize_timestamp")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
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
    pub mode: Mode,
    /// Where the transaction stands with respect to what may follow it (see `lifecycle`).
    pub state: TxnState,
    /// The original a capture, void or refund follows; `None` for an auth or sale.
    #[serde(rename = "transactionId")]
    pub parent_id: Option<TxnId>,
    /// The sum already refunded of a sale or capture, in minor units; 0 for other types.
    pub refunded_amount: i64,
    /// The merchant's own reference, when it gave one.
    pub reference: Option<Reference>,
    /// The merchant's key/value pairs (`{}` when none).
    pub metadata: Metadata,
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaymentSummary {
    /// The card number's first six digits.
    pub bin: String,
    /// The card's network, from the BIN table or else the IIN ranges.
    pub brand: CardBrand,
    /// The card number's last four digits.
    pub last4: String,
    /// Credit, debit or prepaid; `type` in the JSON.
    #[serde(rename = "type")]
    pub funding: FundingType,
}

/// A reference to another resource as the transaction shows it: its id and display name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Named<I> {
    /// The referenced resource's id.
    pub id: I,
    /// The referenced resource's name, as it was when the transaction was made.
    pub name: String,
}

/// The processor's answer to a transaction: the `authorization` object of spec 2.2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Authorization {
    /// The amount the processor approved, in minor units; 0 when not approved.
    pub approved_amount: i64,
    /// The address verification result.
    pub avs: AvsCode,
    /// The card security code result.
    pub cvv: CvvCode,
    /// True when less than the amount asked was approved.
    pub partial: bool,
    /// The processor's own result code (e.g. a decline code).
    pub processor_code: String,
    /// Why the card was declined, in the one vocabulary of every processor; `None` unless
    /// `status` is `D`.
    pub decline_code: Option<super::decline::DeclineCode>,
    /// The processor's human-readable message for its result.
    pub processor_message: String,
    /// The processor's own id for the transaction, used to follow it up there.
    pub processor_transaction_id: String,
    /// The outcome of the processor call, one letter.
    pub status: AuthStatus,
}

crate::words! {
    /// `authorization.status`: the outcome of the processor call, one letter.
    pub enum AuthStatus {
        /// A: approved, in full or in part (`partial` says which).
        #[strum(serialize = "A")]
        Approved,
        /// D: declined by the issuer or the processor; `processorCode` says why.
        #[strum(serialize = "D")]
        Declined,
        /// E: the processor failed (every connection the plan allows was tried).
        #[strum(serialize = "E")]
        Error,
        /// T: the processor did not answer in time; any hold was reversed.
        #[strum(serialize = "T")]
        TimedOut,
        /// P: no answer yet: the transaction is `pending`, its processor call in flight (or cut
        /// short by a crash, until reconciliation records it).
        #[strum(serialize = "P")]
        Pending,
        /// S: submitted: the processor took the capture, void or refund and decides later; the
        /// transaction is `processing` until its outcome arrives.
        #[strum(serialize = "S")]
        Submitted,
    }
}

crate::words! {
    /// Address verification result, one letter.
    pub enum AvsCode {
        /// Y: street address and postal code match.
        #[strum(serialize = "Y")]
        FullMatch,
        /// A: street address matches, postal code does not.
        #[strum(serialize = "A")]
        AddressOnly,
        /// Z: postal code matches, street address does not.
        #[strum(serialize = "Z")]
        PostalOnly,
        /// N: neither matches.
        #[strum(serialize = "N")]
        NoMatch,
        /// U: address information unavailable (also: no card at this step).
        #[strum(serialize = "U")]
        Unavailable,
        /// R: the issuer's system was unavailable; retry.
        #[strum(serialize = "R")]
        Retry,
    }
}

crate::words! {
    /// Card security code result, one letter.
    pub enum CvvCode {
        /// M: match.
        #[strum(serialize = "M")]
        Match,
        /// N: no match.
        #[strum(serialize = "N")]
        NoMatch,
        /// P: not processed (no CVV sent, or no card at this step).
        #[strum(serialize = "P")]
        NotProcessed,
        /// U: the issuer does not support CVV checks.
        #[strum(serialize = "U")]
        Unsupported,
    }
}

/// RFC 3339 in UTC with exactly six fractional digits.
pub const TIMESTAMP_FORMAT: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");

/// Writes an instant in `TIMESTAMP_FORMAT`, converting it to UTC first.
pub fn format_timestamp(at: OffsetDateTime) -> String {
    at.to_offset(time::UtcOffset::UTC)
        .format(TIMESTAMP_FORMAT)
        .expect("timestamps format")
}

/// Serializes an instant in `TIMESTAMP_FORMAT`, for the API's objects.
pub fn serialize_timestamp<S: Serializer>(at: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_timestamp(*at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_letters_stored_and_shown() {
        assert_eq!(
            AuthStatus::ALL
                .iter()
                .copied()
                .map(AuthStatus::as_str)
                .collect::<Vec<_>>(),
            ["A", "D", "E", "T", "P", "S"]
        );
        assert_eq!(
            AvsCode::ALL
                .iter()
                .copied()
                .map(AvsCode::as_str)
                .collect::<Vec<_>>(),
            ["Y", "A", "Z", "N", "U", "R"]
        );
        assert_eq!(
            CvvCode::ALL
                .iter()
                .copied()
                .map(CvvCode::as_str)
                .collect::<Vec<_>>(),
            ["M", "N", "P", "U"]
        );
        for &s in AuthStatus::ALL {
            assert_eq!(s.as_str().parse(), Ok(s));
        }
        for &a in AvsCode::ALL {
            assert_eq!(a.as_str().parse(), Ok(a));
            assert_eq!(a.as_str().len(), 1);
        }
        for &c in CvvCode::ALL {
            assert_eq!(c.as_str().parse(), Ok(c));
        }
        assert!("X".parse::<AuthStatus>().is_err());
    }
}
