//! The ports of the payments core: the processor, the BIN table, and the store of plans,
//! connections, transactions and their events.

use crate::scope::Scope;
use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;
use crate::idempotency::{KeyClaim, KeyedAnswer};
use crate::ids::{ConnectionId, EventId, MerchantId, PlanId, PlatformId, TxnId};
use crate::merchant::Currency;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::payment::brand::{CardBrand, FundingType};
pub use crate::payment::follow_up::{OriginalOutcome, Reservation};
use crate::payment::lifecycle::{FollowUp, TxnType};
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::transaction::{AvsCode, CvvCode, Transaction};
use crate::webhook::EventType;

pub use crate::payment::card::CardData;

/// What a processor is asked to do.
#[derive(Debug, Clone)]
pub enum ProcessorOp {
    /// Place a hold on the card's funds without moving them.
    Authorize(CardData),
    /// Charge the card: funds move at once and the payment is final.
    Sale(CardData),
    /// Capture an authorized auth, named by the processor's id.
    Capture {
        /// The processor's id for the auth being captured.
        processor_transaction_id: String,
    },
    /// Release the hold of an earlier auth.
    Void {
        /// The processor's id for the auth being voided.
        processor_transaction_id: String,
    },
    /// Return funds of an earlier capture or sale to the card.
    Refund {
        /// The processor's id for the transaction being refunded.
        processor_transaction_id: String,
    },
    /// Releases whatever the processor did for our transaction `reference` (sent after a
    /// timeout, when we do not know whether it approved).
    Reverse,
}

impl ProcessorOp {
    /// The operation that carries out `follow_up` of the processor's transaction `original`.
    pub fn follow_up(follow_up: FollowUp, original: String) -> Self {
        let processor_transaction_id = original;
        match follow_up {
            FollowUp::Capture(_) => Self::Capture {
                processor_transaction_id,
            },
            FollowUp::Void => Self::Void {
                processor_transaction_id,
            },
            FollowUp::Refund(_) => Self::Refund {
                processor_transaction_id,
            },
        }
    }
}

/// One call to a processor: the operation and the money it concerns.
#[derive(Debug, Clone)]
pub struct ProcessorRequest {
    /// What the processor is asked to do.
    pub op: ProcessorOp,
    /// The amount the operation concerns, in minor units of `currency`.
    pub amount: i64,
    /// The merchant's currency, in which `amount` is counted.
    pub currency: Currency,
    /// Our transaction id: the processor's idempotency key and the handle for `Reverse`.
    pub reference: TxnId,
}

/// A processor's answer. A decline is an answer, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorReply {
    /// Whether the processor approved, in full or in part.
    pub approved: bool,
    /// The amount approved, in minor units; less than asked on a partial approval.
    pub approved_amount: i64,
    /// The address verification result.
    pub avs: AvsCode,
    /// The card security code check result.
    pub cvv: CvvCode,
    /// The processor's result code, recorded as sent (see `ResponseCode`).
    pub code: String,
    /// For a decline, its reason in the API's vocabulary; `None` when approved (a decline
    /// without one is a `generic_decline`).
    pub decline: Option<crate::payment::decline::DeclineCode>,
    /// The processor's human-readable message for its result.
    pub message: String,
    /// The processor's own id for the transaction, used to capture, void or refund it later.
    pub processor_transaction_id: String,
    /// The processor took the request and decides later (Adyen's `received`): the outcome
    /// arrives as a notification. Only a capture, void or refund is answered so.
    pub submitted: bool,
}

/// A processor call that brought no answer; which kind decides whether another connection may
/// be tried.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProcessorError {
    /// The processor could not take the request (down, refused, 5xx): nothing happened, so
    /// another connection may be tried.
    #[error("processor unavailable: {0}")]
    Unavailable(String),
    /// No answer in time: the outcome is unknown.
    #[error("processor timed out")]
    Timeout,
}

/// A payment processor, reached through one of the platform's processor connections.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait Processor: Send + Sync {
    /// Sends one request through a connection, within the configured timeout.
    async fn call(
        &self,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) -> Result<ProcessorReply, ProcessorError>;
}

/// What the BIN table knows of a card's first six digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BinInfo {
    /// The six digits looked up.
    pub bin: String,
    /// The card network, which also picks a plan's brand route.
    pub brand: CardBrand,
    /// Credit, debit or prepaid; unknown when the BIN is not in the table.
    pub funding: FundingType,
    /// The issuing bank's name, when the table knows it.
    pub issuer: Option<String>,
    /// The issuer's country code (e.g. `US`), when the table knows it.
    pub country: Option<String>,
}

/// The BIN table: what is known of a card from its first six digits.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait BinLookup: Send + Sync {
    /// The table's entry, or one built from the IIN ranges (funding unknown) when unlisted.
    fn lookup(&self, bin: &str) -> BinInfo;
}

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

/// Filters of the transaction list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnFilter {
    /// Only transactions created for this merchant.
    pub merchant_id: Option<MerchantId>,
    /// Only transactions of this type (auth, sale, capture, ...).
    pub kind: Option<TxnType>,
    /// Only transactions in this state (authorized, declined, ...).
    pub state: Option<crate::payment::lifecycle::TxnState>,
    /// Only transactions created at or after this time.
    pub created_from: Option<OffsetDateTime>,
    /// Only transactions created strictly before this time.
    pub created_until: Option<OffsetDateTime>,
    /// Only transactions with this reference of the merchant's.
    pub reference: Option<crate::payment::labels::Reference>,
}

/// Everything a new payment is routed with, read together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentSetup {
    /// The merchant the payment is for, in whose currency it is made.
    pub merchant: crate::merchant::Merchant,
    /// The merchant's own plan, else the platform's default plan in that mode.
    pub plan: Option<Plan>,
    /// Connections of the plan's platform and mode, at least every one the plan names (one it
    /// does not name may be among them: `Plan::route` decides which are used).
    pub connections: Vec<ProcessorConnection>,
}

/// Storage of the routing configuration: processor connections and the plans that route to
/// them, each scoped to a platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait RoutingStore: Send + Sync {
    /// Writes the connection and the request's idempotent `reply`, if any, in one SQL
    /// transaction.
    async fn insert_connection(
        &self,
        connection: &ProcessorConnection,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError>;
    /// Newest first.
    async fn list_connections(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<ProcessorConnection>, StoreError>;
    /// A connection of this platform and mode; `None` when it has none with that id.
    async fn get_connection(
        &self,
        scope: &Scope,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError>;

    /// Writes the plan and the request's idempotent `reply`, if any, in one SQL transaction.
    /// Returns `Duplicate("plans.default")` when `plan.is_default` and the platform already
    /// has a default plan in that mode; nothing is then written.
    async fn insert_plan(&self, plan: &Plan, reply: Option<KeyedAnswer>) -> Result<(), StoreError>;
    /// Newest first.
    async fn list_plans(&self, scope: &Scope, page: &PageRequest)
    -> Result<Page<Plan>, StoreError>;
    /// A plan of this platform and mode; `None` when it has none with that id.
    async fn get_plan(&self, scope: &Scope, id: &PlanId) -> Result<Option<Plan>, StoreError>;
}

/// The transaction ledger: what a payment reads to start, and every write of its life, each
/// scoped to a platform and mode.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait TransactionStore: Send + Sync {
    /// Notes that a payment for `merchant` carried a raw card number at `at`, unless one
    /// already did (its compliance questionnaire becomes SAQ D).
    async fn note_raw_cards(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError>;

    /// The merchant (not deleted), its plan and the plan's connections, in one read. `None`
    /// when the merchant does not exist in this platform and mode.
    async fn payment_setup(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<PaymentSetup>, StoreError>;

    /// Records a transaction whose processor call is about to start (state and status as
    /// given, usually a placeholder), so a crash mid-call leaves a trace to reconcile. With a
    /// `claim`, claims its idempotency key in the same atomic write: `false` when the key is
    /// already taken, and then nothing is written.
    async fn insert_pending_transaction(
        &self,
        txn: &Transaction,
        claim: Option<KeyClaim>,
    ) -> Result<bool, StoreError>;

    /// Atomically: writes the final form of a pending transaction, releases or completes the
    /// original's reservation (`original` with its new state, if any), adds the event with its
    /// webhook fan-out, stores `reply` under its idempotency key (claimed earlier, by the pending row or by
    /// `IdempotencyStore::begin`), and completes client session `session` with the transaction
    /// if the session is still open and held by this payment, and posts `journal` (what the
    /// outcome moves, `ledger::journal_for`). `NotFound` when the transaction
    /// is no longer pending (reconciliation finished it first); then nothing is written.
    /// Otherwise, whether `session` was completed (`false` when none was given, or when its
    /// hold was no longer this payment's: the payment stands all the same).
    async fn complete_transaction_with_event(
        &self,
        txn: &Transaction,
        original: Option<(TxnId, OriginalOutcome)>,
        event: &Event,
        reply: Option<crate::idempotency::KeyedAnswer>,
        session: Option<crate::payment::token::SessionClose>,
        journal: Option<crate::ledger::Journal>,
    ) -> Result<bool, StoreError>;

    /// Atomically takes a reservation on an original and writes the follow-up's pending row:
    /// both or neither, so no reservation exists without the transaction that holds it.
    /// `false`, with nothing written, when the rules no longer allow it (another follow-up won,
    /// or the refunds would exceed the amount).
    async fn reserve_with_pending(
        &self,
        scope: &Scope,
        original: &TxnId,
        reservation: Reservation,
        pending: &Transaction,
    ) -> Result<bool, StoreError>;

    /// A transaction of this platform and mode; `None` when it has none with that id.
    async fn get_transaction(
        &self,
        scope: &Scope,
        id: &TxnId,
    ) -> Result<Option<Transaction>, StoreError>;

    /// Transactions of any platform still `pending` that were created before `before`, oldest
    /// first: left behind by a process that stopped between the processor call and the
    /// completion. For reconciliation only.
    async fn stale_pending(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<Transaction>, StoreError>;

    /// Newest first; `starting_after` is the id of the last transaction of the previous page.
    async fn list_transactions(
        &self,
        scope: &Scope,
        filter: &TxnFilter,
        page: &PageRequest,
    ) -> Result<Page<Transaction>, StoreError>;
}

/// The events recorded in the outbox, as written.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait EventLog: Send + Sync {
    /// The events recorded for a platform and mode, oldest first (webhook delivery reads the
    /// outbox; tests read it here).
    async fn list_events(&self, scope: &Scope) -> Result<Vec<StoredEvent>, StoreError>;
}
