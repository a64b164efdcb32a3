//! The event catalogue: every event type a subscription may name, defined once. The list,
//! `GET /v1/webhooks/event-types` and `docs/webhooks.md` all come from here.

use std::fmt;
use std::str::FromStr;

use crate::Invalid;

/// A kind of event a webhook subscription can ask to be notified of (spec 6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// `transaction.created`: a transaction of any type and outcome was recorded.
    TransactionCreated,
    /// `merchant.created`: a merchant was created.
    MerchantCreated,
    /// `merchant.updated`: a merchant was changed.
    MerchantUpdated,
    /// `merchant.deleted`: a merchant was deleted.
    MerchantDeleted,
    /// `loan.created`: reserved for merchant loans; subscribable, never sent yet.
    LoanCreated,
    /// `loan.updated`: reserved for merchant loans; subscribable, never sent yet.
    LoanUpdated,
    /// `form.created`: reserved for boarding forms; subscribable, never sent yet.
    FormCreated,
    /// `form.completed`: reserved for boarding forms; subscribable, never sent yet.
    FormCompleted,
}

impl EventType {
    /// The whole catalogue, in the order it is listed.
    pub const ALL: [Self; 8] = [
        Self::TransactionCreated,
        Self::MerchantCreated,
        Self::MerchantUpdated,
        Self::MerchantDeleted,
        Self::LoanCreated,
        Self::LoanUpdated,
        Self::FormCreated,
        Self::FormCompleted,
    ];

    /// The dotted name subscriptions and notifications use, e.g. `merchant.created`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::TransactionCreated => "transaction.created",
            Self::MerchantCreated => "merchant.created",
            Self::MerchantUpdated => "merchant.updated",
            Self::MerchantDeleted => "merchant.deleted",
            Self::LoanCreated => "loan.created",
            Self::LoanUpdated => "loan.updated",
            Self::FormCreated => "form.created",
            Self::FormCompleted => "form.completed",
        }
    }

    /// What the event reports, and the shape of its `data`.
    pub fn description(self) -> &'static str {
        match self {
            Self::TransactionCreated => {
                "A transaction of any type and outcome was recorded. data: the transaction object."
            }
            Self::MerchantCreated => "A merchant was created. data: the merchant object.",
            Self::MerchantUpdated => {
                "A merchant was changed. data: the merchant object as it now is."
            }
            Self::MerchantDeleted => r#"A merchant was deleted. data: {"id", "deleted": true}."#,
            Self::LoanCreated | Self::LoanUpdated => {
                "Reserved for merchant loans (not yet offered): subscribable, never sent yet."
            }
            Self::FormCreated | Self::FormCompleted => {
                "Reserved for boarding forms (not yet offered): subscribable, never sent yet."
            }
        }
    }

    /// Only transaction notifications may be resent (spec 6.4).
    pub fn is_transaction(self) -> bool {
        self.as_str().starts_with("transaction.")
    }

    /// Reads an event type by its exact dotted name, refusing anything else under `field`.
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
        raw.parse().map_err(|()| {
            Invalid::new(
                field,
                "is not an event type; see GET /v1/webhooks/event-types",
            )
        })
    }
}

impl FromStr for EventType {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Self::ALL.into_iter().find(|t| t.as_str() == s).ok_or(())
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_and_only_transactions_resend() {
        for t in EventType::ALL {
            assert_eq!(t.as_str().parse::<EventType>(), Ok(t));
            assert_eq!(
                t.is_transaction(),
                t == EventType::TransactionCreated,
                "{t}"
            );
        }
        assert!(EventType::parse("events", "transaction.deleted").is_err());
        assert!(EventType::parse("events", "Transaction.Created").is_err());
    }
}
