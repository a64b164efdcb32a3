//! The ports of the payments core: the processor, the BIN table, and the store of plans,
//! connections, transactions and their events.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;
use crate::idempotency::KeyedResponse;
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
    Authorize(CardData),
    Sale(CardData),
    /// Capture, void or refund of an earlier transaction, named by the processor's id.
    Capture {
        processor_transaction_id: String,
    },
    Void {
        processor_transaction_id: String,
    },
    Refund {
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

#[derive(Debug, Clone)]
pub struct ProcessorRequest {
    pub op: ProcessorOp,
    pub amount: i64,
    pub currency: Currency,
    /// Our transaction id: the processor's idempotency key and the handle for `Reverse`.
    pub reference: TxnId,
}

/// A processor's answer. A decline is an answer, not an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorReply {
    pub approved: bool,
    pub approved_amount: i64,
    pub avs: AvsCode,
    pub cvv: CvvCode,
    pub code: String,
    pub message: String,
    pub processor_transaction_id: String,
}

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
    pub bin: String,
    pub brand: CardBrand,
    pub funding: FundingType,
    pub issuer: Option<String>,
    pub country: Option<String>,
}

#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
pub trait BinLookup: Send + Sync {
    /// The table's entry, or one built from the IIN ranges (funding unknown) when unlisted.
    fn lookup(&self, bin: &str) -> BinInfo;
}

/// An event in the outbox, written in the same SQL transaction as the change it reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub id: EventId,
    pub platform_id: PlatformId,
    pub mode: Mode,
    pub data: EventData,
    pub created_on: OffsetDateTime,
}

/// What an event reports; its JSON is the event's `data`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum EventData {
    /// `transaction.created`: every new transaction, of any type and outcome.
    TransactionCreated(Box<Transaction>),
    /// `merchant.created`: the merchant object.
    MerchantCreated(Box<crate::merchant::Merchant>),
    /// `merchant.updated`: the merchant object as it now is.
    MerchantUpdated(Box<crate::merchant::Merchant>),
    /// `merchant.deleted`: `{"id", "deleted": true}`, as `DELETE` answers.
    MerchantDeleted(Deleted),
}

/// The data of a deletion event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Deleted {
    pub id: String,
    pub deleted: bool,
}

impl EventData {
    /// The type, from the one catalogue subscriptions name.
    pub fn event_type(&self) -> EventType {
        match self {
            Self::TransactionCreated(_) => EventType::TransactionCreated,
            Self::MerchantCreated(_) => EventType::MerchantCreated,
            Self::MerchantUpdated(_) => EventType::MerchantUpdated,
            Self::MerchantDeleted(_) => EventType::MerchantDeleted,
        }
    }
}

/// An event as read back from the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: EventId,
    pub event_type: String,
    /// The JSON `data`.
    pub data: String,
    pub created_on: OffsetDateTime,
}

/// Filters of the transaction list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TxnFilter {
    pub merchant_id: Option<MerchantId>,
    pub kind: Option<TxnType>,
    pub created_from: Option<OffsetDateTime>,
    pub created_until: Option<OffsetDateTime>,
}

/// Everything a new payment is routed with, read together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentSetup {
    pub merchant: crate::merchant::Merchant,
    /// The merchant's own plan, else the platform's default plan in that mode.
    pub plan: Option<Plan>,
    /// Connections of the plan's platform and mode, at least every one the plan names (one it
    /// does not name may be among them: `Plan::route` decides which are used).
    pub connections: Vec<ProcessorConnection>,
}

#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PaymentStore: Send + Sync {
    /// Writes the connection and the request's idempotent `reply`, if any, in one SQL
    /// transaction.
    async fn insert_connection(
        &self,
        connection: &ProcessorConnection,
        reply: Option<KeyedResponse>,
    ) -> Result<(), StoreError>;
    /// Newest first.
    async fn list_connections(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<ProcessorConnection>, StoreError>;
    async fn get_connection(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError>;

    /// Writes the plan and the request's idempotent `reply`, if any, in one SQL transaction.
    /// Returns `Duplicate("plans.default")` when `plan.is_default` and the platform already
    /// has a default plan in that mode; nothing is then written.
    async fn insert_plan(
        &self,
        plan: &Plan,
        reply: Option<KeyedResponse>,
    ) -> Result<(), StoreError>;
    /// Newest first.
    async fn list_plans(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<Plan>, StoreError>;
    async fn get_plan(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &PlanId,
    ) -> Result<Option<Plan>, StoreError>;
    async fn default_plan(
        &self,
        platform: &PlatformId,
        mode: Mode,
    ) -> Result<Option<Plan>, StoreError>;

    /// The merchant (not deleted), its plan and the plan's connections, in one read. `None`
    /// when the merchant does not exist in this platform and mode.
    async fn payment_setup(
        &self,
        platform: &PlatformId,
        mode: Mode,
        merchant: &MerchantId,
    ) -> Result<Option<PaymentSetup>, StoreError>;

    /// Records a transaction whose processor call is about to start (state and status as
    /// given, usually a placeholder), so a crash mid-call leaves a trace to reconcile.
    async fn insert_pending_transaction(&self, txn: &Transaction) -> Result<(), StoreError>;

    /// Atomically: writes the final form of a pending transaction, releases or completes the
    /// original's reservation (`original` with its new state, if any), adds the event with its
    /// webhook fan-out, and stores `reply` under its idempotency key (claimed earlier by
    /// `IdempotencyStore::begin`). `NotFound` when the transaction is no longer pending
    /// (reconciliation finished it first); then nothing is written.
    async fn complete_transaction_with_event(
        &self,
        txn: &Transaction,
        original: Option<(TxnId, OriginalOutcome)>,
        event: &Event,
        reply: Option<crate::idempotency::KeyedResponse>,
    ) -> Result<(), StoreError>;

    /// Atomically takes a reservation on an original and writes the follow-up's pending row:
    /// both or neither, so no reservation exists without the transaction that holds it.
    /// `false`, with nothing written, when the rules no longer allow it (another follow-up won,
    /// or the refunds would exceed the amount).
    async fn reserve_with_pending(
        &self,
        platform: &PlatformId,
        mode: Mode,
        original: &TxnId,
        reservation: Reservation,
        pending: &Transaction,
    ) -> Result<bool, StoreError>;

    async fn get_transaction(
        &self,
        platform: &PlatformId,
        mode: Mode,
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
        platform: &PlatformId,
        mode: Mode,
        filter: &TxnFilter,
        page: &PageRequest,
    ) -> Result<Page<Transaction>, StoreError>;

    /// The events recorded for a platform and mode, oldest first (webhook delivery reads the
    /// outbox; tests read it here).
    async fn list_events(
        &self,
        platform: &PlatformId,
        mode: Mode,
    ) -> Result<Vec<StoredEvent>, StoreError>;
}
