//! The outbox's events: what every change reports, written in the same SQL transaction as the
//! change, and read back for delivery.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;
use crate::ids::{EventId, PlatformId};
use crate::mode::Mode;
use crate::payment::transaction::Transaction;
use crate::scope::Scope;
use crate::webhook::EventType;

/// An event in the outbox, written in the same SQL transaction as the change it reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The event's identifier, carried by every notification of it.
    pub id: EventId,
    /// The platform whose resource changed; only its subscriptions hear of it.
    pub platform_id: PlatformId,
    /// The mode of the resource that changed.
    pub mode: Mode,
    /// What happened, which also gives the event's type.
    pub data: EventData,
    /// When the change happened.
    pub created_on: OffsetDateTime,
}

/// What an event reports; its JSON is the event's `data`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum EventData {
    /// `transaction.created`: every new transaction, of any type and outcome.
    TransactionCreated(Box<Transaction>),
    /// `transaction.updated`: a `processing` follow-up its processor decided, in its final form.
    TransactionUpdated(Box<Transaction>),
    /// `merchant.created`: the merchant object.
    MerchantCreated(Box<crate::merchant::Merchant>),
    /// `merchant.updated`: the merchant object as it now is.
    MerchantUpdated(Box<crate::merchant::Merchant>),
    /// `merchant.deleted`: `{"id", "deleted": true}`, as `DELETE` answers.
    MerchantDeleted(Deleted),
    /// `form.created`: a boarding form was created.
    FormCreated(crate::boarding::form::FormEvent),
    /// `form.completed`: a boarding form was submitted.
    FormCompleted(crate::boarding::form::FormEvent),
    /// `compliance.created`: a compliance form was issued.
    ComplianceCreated(crate::compliance::ComplianceEvent),
    /// `compliance.updated`: a compliance form was attested or became overdue.
    ComplianceUpdated(crate::compliance::ComplianceEvent),
    /// `balance.available`: what a settlement run made available for one merchant.
    BalanceAvailable(crate::ledger::MerchantSettled),
    /// `payout.created`: a payout was made.
    PayoutCreated(Box<crate::payout::Payout>),
    /// `payout.paid`: the bank paid a payout.
    PayoutPaid(Box<crate::payout::Payout>),
    /// `payout.failed`: the bank refused or returned a payout.
    PayoutFailed(Box<crate::payout::Payout>),
    /// `payout.canceled`: a pending payout was canceled.
    PayoutCanceled(Box<crate::payout::Payout>),
    /// `loan.*` (but `loan.repayment`): the loan as the change left it.
    Loan(Box<crate::loan::LoanNews>),
    /// `loan.repayment`: a repayment, and the loan after it.
    LoanRepayment(Box<crate::loan::RepaymentEvent>),
    /// `webhook.test`: a test sent to one subscription.
    WebhookTest(TestEvent),
}

/// The data of a test event: which subscription it was sent to, and a sentence for whoever
/// reads the receiver's log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TestEvent {
    /// The subscription the test was asked for.
    pub webhook_id: crate::ids::WebhookId,
    /// What the event is, in words.
    pub message: &'static str,
}

impl TestEvent {
    /// What every test event says.
    pub const MESSAGE: &'static str =
        "A test event from Holdfast: this endpoint receives the subscription's notifications.";
}

/// The data of a deletion event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Deleted {
    /// The id of the resource that was deleted.
    pub id: String,
    /// Always `true`: the resource no longer exists.
    pub deleted: bool,
}

impl EventData {
    /// The type, from the one catalogue subscriptions name.
    pub fn event_type(&self) -> EventType {
        match self {
            Self::TransactionCreated(_) => EventType::TransactionCreated,
            Self::TransactionUpdated(_) => EventType::TransactionUpdated,
            Self::MerchantCreated(_) => EventType::MerchantCreated,
            Self::MerchantUpdated(_) => EventType::MerchantUpdated,
            Self::MerchantDeleted(_) => EventType::MerchantDeleted,
            Self::FormCreated(_) => EventType::FormCreated,
            Self::FormCompleted(_) => EventType::FormCompleted,
            Self::ComplianceCreated(_) => EventType::ComplianceCreated,
            Self::ComplianceUpdated(_) => EventType::ComplianceUpdated,
            Self::BalanceAvailable(_) => EventType::BalanceAvailable,
            Self::PayoutCreated(_) => EventType::PayoutCreated,
            Self::PayoutPaid(_) => EventType::PayoutPaid,
            Self::PayoutFailed(_) => EventType::PayoutFailed,
            Self::PayoutCanceled(_) => EventType::PayoutCanceled,
            Self::Loan(news) => news.event.event_type(),
            Self::LoanRepayment(_) => EventType::LoanRepayment,
            Self::WebhookTest(_) => EventType::WebhookTest,
        }
    }

    /// The id of what the event is about: its transaction, merchant, form, payout or
    /// subscription.
    pub fn subject_id(&self) -> &str {
        match self {
            Self::TransactionCreated(txn) | Self::TransactionUpdated(txn) => txn.id.as_str(),
            Self::MerchantCreated(m) | Self::MerchantUpdated(m) => m.id.as_str(),
            Self::MerchantDeleted(deleted) => &deleted.id,
            Self::FormCreated(form) | Self::FormCompleted(form) => form.id.as_str(),
            Self::ComplianceCreated(c) | Self::ComplianceUpdated(c) => c.id.as_str(),
            Self::BalanceAvailable(settled) => settled.merchant_id.as_str(),
            Self::PayoutCreated(p)
            | Self::PayoutPaid(p)
            | Self::PayoutFailed(p)
            | Self::PayoutCanceled(p) => p.id.as_str(),
            Self::Loan(news) => news.loan.id.as_str(),
            Self::LoanRepayment(paid) => paid.loan.id.as_str(),
            Self::WebhookTest(test) => test.webhook_id.as_str(),
        }
    }
}

/// An event as read back from the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// The event's identifier.
    pub id: EventId,
    /// The catalogue name of its type, such as `merchant.created`.
    pub event_type: String,
    /// The JSON `data`.
    pub data: String,
    /// When the change it reports happened.
    pub created_on: OffsetDateTime,
}

/// The events recorded in the outbox, as written.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait EventLog: Send + Sync {
    /// The events recorded for a platform and mode, oldest first (webhook delivery reads the
    /// outbox; tests read it here).
    async fn list_events(&self, scope: &Scope) -> Result<Vec<StoredEvent>, StoreError>;
}
