//! Typed identifiers. Each carries the prefix of its resource, so a merchant id can never be
//! passed where a key id is expected, and ids read from a request are checked before any lookup.

use std::fmt;

use crate::Invalid;

/// Whether `raw` has the shape of an id we issue: `prefix`, then 1 to 64 ASCII letters or digits.
pub fn has_id_shape(raw: &str, prefix: &str) -> bool {
    raw.strip_prefix(prefix).is_some_and(|rest| {
        (1..=64).contains(&rest.len()) && rest.bytes().all(|b| b.is_ascii_alphanumeric())
    })
}

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            #[doc = concat!("The prefix all ids of this kind start with: `", $prefix, "`.")]
            pub const PREFIX: &'static str = $prefix;

            /// Builds the id from the identifier part produced by the `Ids` port.
            pub fn from_suffix(suffix: &str) -> Self {
                Self(format!("{}{}", $prefix, suffix))
            }

            /// Parses an id received from outside: the prefix, then 1 to 64 ASCII letters or digits.
            pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
                if has_id_shape(raw, $prefix) {
                    Ok(Self(raw.to_owned()))
                } else {
                    Err(Invalid::new(
                        field,
                        format!("must be an id starting with {}", $prefix),
                    ))
                }
            }

            /// Rebuilds an id read back from our own storage, where it was validated on the way in.
            pub fn from_trusted(raw: String) -> Self {
                Self(raw)
            }

            /// The full id, prefix included, as stored and sent over the API.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        #[cfg(feature = "openapi")]
        $crate::schema::schema_of!($name, $crate::schema::id_with_prefix($prefix));
    };
}

typed_id!(
    /// A platform: the tenant that owns merchants, users and keys.
    PlatformId,
    "pfm_"
);
typed_id!(
    /// A user account of a platform.
    UserId,
    "usr_"
);
typed_id!(
    /// An API key's public identifier (never its secret value).
    KeyId,
    "key_"
);
typed_id!(
    /// A merchant of a platform.
    MerchantId,
    "mid_"
);
typed_id!(
    /// A transaction of any type.
    TxnId,
    "txn_"
);
typed_id!(
    /// A pricing and routing plan.
    PlanId,
    "plan_"
);
typed_id!(
    /// A connection to a payment processor.
    ConnectionId,
    "midCon_"
);
typed_id!(
    /// An event in the outbox.
    EventId,
    "evt_"
);
typed_id!(
    /// A card token: single-use (from a public key) or multi-use (vault).
    TokenId,
    "tkn_"
);
typed_id!(
    /// A client session: one checkout a page may tokenize for (spec 1, client sessions).
    ClientSessionId,
    "cs_"
);

typed_id!(
    /// A boarding form: what a merchant fills in to be underwritten.
    BoardingFormId,
    "bf_"
);

typed_id!(
    /// A merchant's PCI compliance form for one year.
    ComplianceFormId,
    "cf_"
);

typed_id!(
    /// A webhook subscription.
    WebhookId,
    "wh_"
);
typed_id!(
    /// One notification: an event for one subscription, also the id of its delivery record.
    NotificationId,
    "ntf_"
);
typed_id!(
    /// One item a processor sent about a transaction (an Adyen notification), as kept.
    NoticeId,
    "pnt_"
);
typed_id!(
    /// One settlement run: the charges it moved to available, settled together.
    SettlementRunId,
    "srun_"
);
typed_id!(
    /// A payout of a merchant's available money to its bank.
    PayoutId,
    "po_"
);
typed_id!(
    /// A balance transaction: its journal's time, kind and source, written so that the id
    /// names the journal and lists can page after it (`ledger::BalanceTransaction`).
    BalanceTransactionId,
    "btx_"
);
typed_id!(
    /// A loan a platform offered one of its merchants.
    LoanId,
    "loan_"
);
typed_id!(
    /// One repayment of a loan: a settlement's withholding, or an early repayment.
    LoanRepaymentId,
    "lrp_"
);
typed_id!(
    /// A NACHA file of live payouts, as written to the bank's outbox (its name there).
    AchFileId,
    "achf_"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_prefix_and_alphanumerics_only() {
        let cases = [
            ("mid_01JDX3", true),
            ("mid_", false),
            ("mid_abc-def", false),
            ("key_01JDX3", false),
            ("MID_01JDX3", false),
            ("", false),
        ];
        for (raw, ok) in cases {
            assert_eq!(MerchantId::parse("id", raw).is_ok(), ok, "{raw:?}");
        }
        let too_long = format!("mid_{}", "a".repeat(65));
        assert!(MerchantId::parse("id", &too_long).is_err());
    }

    #[test]
    fn from_suffix_prepends_prefix() {
        assert_eq!(KeyId::from_suffix("ABC").as_str(), "key_ABC");
    }
}
