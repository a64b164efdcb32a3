//! Authorizations, sales, captures, voids and refunds, one use case per file: `pay`,
//! `follow_up`, `reconcile`; `outcome` turns a processor's answer into the transaction's final
//! form, by the rules the payment types carry (`FeeRule`, `TxnType`, `FollowUp`,
//! `ResponseCode`).
//!
//! Every attempt is recorded: a pending row before the processor is called (a crash mid-call
//! leaves a trace to reconcile), then the final row, the original's new state and the
//! `transaction.created` event in one SQL transaction. No database transaction is held open
//! across the processor call. Follow-ups take a reservation on the original first, so of two
//! concurrent captures (or a capture and a void) exactly one proceeds.

mod follow_up;
mod outcome;
mod pay;
mod reconcile;
mod requests;

pub use requests::{Created, Renders, RequestKey, TransactionRequest, TransactionRequests};
#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::KeyedAnswer;
use crate::ids::{EventId, MerchantId, TokenId, TxnId};
use crate::ledger;
use crate::page::{Page, PageRequest};
use crate::payment::amount::Amount;
use crate::payment::card::CardInput;
use crate::payment::labels::Labels;
use crate::payment::lifecycle::{Refused, TxnType};
use crate::payment::token::SessionClose;
use crate::payment::transaction::Transaction;
use crate::ports::{
    BinLookup, Clock, Event, EventData, Ids, OriginalOutcome, Processor, RoutingStore, StoreError,
    TransactionStore, TxnFilter,
};
use crate::services::tokens::{TokenError, TokenService};

/// A new auth or sale.
#[derive(Debug, Clone)]
pub struct NewPayment {
    /// The merchant charging; must be of the caller's platform and mode.
    pub merchant_id: MerchantId,
    /// `Auth` or `Sale`.
    pub kind: TxnType,
    /// The amount asked, in minor units of the merchant's currency.
    pub amount: Amount,
    /// The card to charge: raw fields or a token.
    pub source: PaymentSource,
    /// The merchant's reference and metadata for it.
    pub labels: Labels,
}

/// Where the card comes from.
#[derive(Debug, Clone)]
pub enum PaymentSource {
    /// Card fields as sent: checked by `pay` against the service's clock.
    Card(CardInput),
    /// A single-use token (consumed by this payment) or a vault token.
    Token(TokenId),
}

/// Why a payment or follow-up could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// A request field is unusable: an unknown merchant or original, a bad card or token.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The original does not allow this follow-up now.
    #[error("{0}")]
    Refused(#[from] Refused),
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The request's idempotency key could not be claimed with the payment's pending row (it
    /// is taken, or the payment redeems a token first): nothing was written or sent; claim the
    /// key the ordinary way and run the payment again.
    #[error("the idempotency key must be claimed before this payment runs")]
    KeyNotClaimed,
}

/// A token that cannot pay is the payment's unusable `payment.token`.
impl From<TokenError> for PaymentError {
    fn from(err: TokenError) -> Self {
        match err {
            TokenError::Invalid(invalid) => Self::Invalid(invalid),
            TokenError::Store(store) => Self::Store(store),
            TokenError::VaultNeedsPrivateKey
            | TokenError::Wallet(_)
            | TokenError::ApplePayGateway(_) => {
                Self::Invalid(Invalid::new("payment.token", err.to_string()))
            }
        }
    }
}

/// What a reconciliation round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Reversed at the processor and recorded as failed.
    pub reversed: Vec<TxnId>,
    /// The reversal failed: still pending, tried again next round.
    pub still_pending: Vec<TxnId>,
}

/// Makes payments (auth, sale) and their follow-ups (capture, void, refund), and reconciles
/// attempts a crash left pending.
#[derive(Clone)]
pub struct PaymentService {
    store: Arc<dyn TransactionStore>,
    routing: Arc<dyn RoutingStore>,
    processor: Arc<dyn Processor>,
    bins: Arc<dyn BinLookup>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    tokens: TokenService,
}

impl PaymentService {
    /// A service over its ports (the ledger, the routing configuration, processors, BIN table,
    /// clock, ids) and the token service that redeems a payment's token.
    pub fn new(
        store: Arc<dyn TransactionStore>,
        routing: Arc<dyn RoutingStore>,
        processor: Arc<dyn Processor>,
        bins: Arc<dyn BinLookup>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        tokens: TokenService,
    ) -> Self {
        Self {
            store,
            routing,
            processor,
            bins,
            clock,
            ids,
            tokens,
        }
    }

    /// One transaction of the caller's platform and mode.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn get(
        &self,
        who: &Principal,
        id: &TxnId,
    ) -> Result<Option<Transaction>, PaymentError> {
        Ok(self.store.get_transaction(&who.scope, id).await?)
    }

    /// The caller's transactions, newest first.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn list(
        &self,
        who: &Principal,
        filter: &TxnFilter,
        page: &PageRequest,
    ) -> Result<Page<Transaction>, PaymentError> {
        Ok(self
            .store
            .list_transactions(&who.scope, filter, page)
            .await?)
    }

    /// Writes the final form of `txn`, the original's outcome, the `transaction.created`
    /// event, the idempotent reply, the client session it closes and the journal it posts,
    /// together; whether that session was closed. `follows` is the original as read before
    /// the follow-up, whose fee a capture collects (`ledger::journal_for`).
    async fn complete(
        &self,
        txn: &Transaction,
        follows: Option<&Transaction>,
        original: Option<(TxnId, OriginalOutcome)>,
        reply: Option<KeyedAnswer>,
        session: Option<SessionClose>,
    ) -> Result<bool, PaymentError> {
        let event = Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: txn.platform_id.clone(),
            mode: txn.mode,
            data: EventData::TransactionCreated(Box::new(txn.clone())),
            created_on: txn.created_on,
        };
        let journal = ledger::journal_for(txn, follows, self.clock.now());
        Ok(self
            .store
            .complete_transaction_with_event(txn, original, &event, reply, session, journal)
            .await?)
    }
}
