//! The ports of the payments core: the processor, the BIN table, and the stores of plans,
//! connections and transactions (their events are `events.rs`).

use crate::scope::Scope;
use async_trait::async_trait;
use time::OffsetDateTime;

use super::{Event, StoreError};
use crate::idempotency::{KeyClaim, KeyedAnswer};
use crate::ids::{ConnectionId, MerchantId, PlanId, TxnId};
use crate::merchant::Currency;
use crate::page::{Page, PageRequest};
use crate::payment::brand::{CardBrand, FundingType};
pub use crate::payment::follow_up::{OriginalOutcome, Reservation};
use crate::payment::lifecycle::{FollowUp, TxnType};
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::transaction::{AvsCode, CvvCode, Transaction};

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
