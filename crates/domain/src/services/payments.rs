//! Authorizations, sales, captures, voids and refunds.
//!
//! Every attempt is recorded: a pending row before the processor is called (a crash mid-call
//! leaves a trace to reconcile), then the final row, the original's new state and the
//! `transaction.created` event in one SQL transaction. No database transaction is held open
//! across the processor call. Follow-ups take a reservation on the original first, so of two
//! concurrent captures (or a capture and a void) exactly one proceeds.

use time::OffsetDateTime;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{KeyedResponse, Recorder, reply_for};
use crate::ids::{EventId, MerchantId, TokenId, TxnId};
use crate::payment::amount::Amount;
use crate::payment::lifecycle::{FollowUp, Refused, TxnState, TxnType};
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::transaction::{
    AuthStatus, Authorization, AvsCode, CvvCode, Named, PaymentSummary, Transaction,
};
use crate::ports::{
    BinLookup, CardData, CardVault, Clock, Event, EventData, Ids, OriginalOutcome, PaymentSetup,
    PaymentStore, Processor, ProcessorError, ProcessorOp, ProcessorReply, ProcessorRequest,
    Reservation, StoreError, TokenStore,
};

/// A new auth or sale.
#[derive(Debug, Clone)]
pub struct NewPayment {
    pub merchant_id: MerchantId,
    /// `Auth` or `Sale`.
    pub kind: TxnType,
    pub amount: Amount,
    pub source: PaymentSource,
}

/// Where the card comes from.
#[derive(Debug, Clone)]
pub enum PaymentSource {
    Card(CardData),
    /// A single-use token (consumed by this payment) or a vault token.
    Token(TokenId),
}

#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The original does not allow this follow-up now.
    #[error("{0}")]
    Refused(#[from] Refused),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a reconciliation round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reconciled {
    /// Reversed at the processor and recorded as failed.
    pub reversed: Vec<TxnId>,
    /// The reversal failed: still pending, tried again next round.
    pub still_pending: Vec<TxnId>,
}

/// Where card tokens come from and how they are opened.
#[derive(Debug, Clone)]
pub struct TokenSource<T, V> {
    pub tokens: T,
    pub vault: V,
}

#[derive(Debug, Clone)]
pub struct PaymentService<S, X, B, C, I, T, V> {
    store: S,
    processor: X,
    bins: B,
    clock: C,
    ids: I,
    tokens: TokenSource<T, V>,
}

impl<S, X, B, C, I, T, V> PaymentService<S, X, B, C, I, T, V>
where
    S: PaymentStore,
    X: Processor,
    B: BinLookup,
    C: Clock,
    I: Ids,
    T: TokenStore,
    V: CardVault,
{
    pub fn new(
        store: S,
        processor: X,
        bins: B,
        clock: C,
        ids: I,
        tokens: TokenSource<T, V>,
    ) -> Self {
        Self {
            store,
            processor,
            bins,
            clock,
            ids,
            tokens,
        }
    }

    /// The card behind a token; a single-use token is used up by this call.
    async fn redeem(&self, who: &Principal, id: &TokenId) -> Result<CardData, PaymentError> {
        let unusable = || {
            Invalid::new(
                "payment.token",
                "no such token, or it was used or has expired",
            )
        };
        let token = self
            .tokens
            .tokens
            .take(&who.platform_id, who.mode, id, self.clock.now())
            .await?
            .ok_or_else(unusable)?;
        let corrupt = |what: &str| StoreError::Unexpected(format!("token {id}: {what}"));
        let text = self
            .tokens
            .vault
            .open(id.as_str(), &token.sealed)
            .map_err(|e| corrupt(&e.to_string()))?;
        let (number, expiration) =
            super::tokens::unsealed_card(&text).ok_or_else(|| corrupt("sealed card"))?;
        if expiration.is_past(self.clock.now()) {
            return Err(Invalid::new("payment.token", "the tokenized card has expired").into());
        }
        Ok(CardData {
            number,
            cvv: None,
            expiration,
        })
    }

    /// Authorizes or sells. Declines and processor failures are recorded transactions too:
    /// the result says what happened in `authorization.status`. With a `recorder`, the response
    /// is stored under its idempotency key together with the transaction.
    pub async fn pay(
        &self,
        who: &Principal,
        new: NewPayment,
        recorder: Option<&Recorder<'_>>,
    ) -> Result<Transaction, PaymentError> {
        let PaymentSetup {
            merchant,
            plan,
            connections: known,
        } = self
            .store
            .payment_setup(&who.platform_id, who.mode, &new.merchant_id)
            .await?
            .ok_or_else(|| Invalid::new("merchantId", "no such merchant"))?;
        let plan = plan.ok_or_else(|| {
            Invalid::new(
                "merchantId",
                "the merchant has no plan and the platform has no default plan in this mode",
            )
        })?;
        // Fail closed: only connections that may carry this mode's payments are routed to
        // (a live plan never reaches the sandbox), and a token is taken only once the merchant
        // and plan are known to be good.
        let known: Vec<ProcessorConnection> = known
            .into_iter()
            .filter(|c| c.kind.serves(who.mode))
            .collect();
        if known.is_empty() {
            return Err(Invalid::new(
                "merchantId",
                "the merchant's plan routes to no processor connection that takes payments in this mode",
            )
            .into());
        }
        let card = match new.source {
            PaymentSource::Card(card) => card,
            PaymentSource::Token(id) => self.redeem(who, &id).await?,
        };
        let bin = self.bins.lookup(card.number.bin());
        let connections: Vec<ProcessorConnection> = plan
            .route(bin.brand)
            .iter()
            .filter_map(|id| known.iter().find(|c| &c.id == id).cloned())
            .collect();
        let first = connections.first().cloned().ok_or_else(|| {
            Invalid::new(
                "merchantId",
                "the merchant's plan routes to no processor connection",
            )
        })?;
        let id = TxnId::from_suffix(&self.ids.next_id());
        let pending = Transaction {
            id: id.clone(),
            kind: new.kind,
            merchant_id: merchant.id.clone(),
            platform_id: who.platform_id.clone(),
            amount: new.amount.minor_units(),
            currency: merchant.details.currency,
            fee: 0,
            created_on: self.clock.now(),
            payment: PaymentSummary {
                bin: card.number.bin().to_owned(),
                brand: bin.brand,
                last4: card.number.last4().to_owned(),
                funding: bin.funding,
            },
            plan: Named {
                id: plan.id.clone(),
                name: plan.name.clone(),
            },
            processor: named(&first),
            authorization: placeholder(),
            mode: who.mode,
            state: TxnState::Pending,
            parent_id: None,
            refunded_amount: 0,
        };
        self.store.insert_pending_transaction(&pending).await?;

        let op = match new.kind {
            TxnType::Sale => ProcessorOp::Sale(card),
            _ => ProcessorOp::Authorize(card),
        };
        let request = ProcessorRequest {
            op,
            amount: pending.amount,
            currency: pending.currency,
            reference: id,
        };
        let (used, result) = self.call_with_fallback(&connections, &request).await;
        let mut txn = Transaction {
            processor: named(used),
            ..pending
        };
        self.settle(&mut txn, &plan, result, used, &request).await;
        let reply = reply_for(recorder, &txn);
        self.complete(&txn, None, reply).await?;
        Ok(txn)
    }

    /// Captures, voids or refunds `original`. With a `recorder`, as in `pay`.
    pub async fn follow_up(
        &self,
        who: &Principal,
        original_id: &TxnId,
        follow_up: FollowUp,
        recorder: Option<&Recorder<'_>>,
    ) -> Result<Transaction, PaymentError> {
        let original = self.original(who, original_id).await?;
        let amount = original.as_original().allows(follow_up)?;
        let reservation = match follow_up {
            FollowUp::Capture(_) | FollowUp::Void => Reservation::CloseAuth,
            FollowUp::Refund(_) => Reservation::Refund { amount },
        };
        // Everything the follow-up needs is read before the reservation is taken.
        let plan = self
            .store
            .get_plan(&who.platform_id, who.mode, &original.plan.id)
            .await?;
        let connection = self
            .store
            .get_connection(&who.platform_id, who.mode, &original.processor.id)
            .await?;
        let (kind, op) = match follow_up {
            FollowUp::Capture(_) => (
                TxnType::Capture,
                ProcessorOp::Capture {
                    processor_transaction_id: original
                        .authorization
                        .processor_transaction_id
                        .clone(),
                },
            ),
            FollowUp::Void => (
                TxnType::Void,
                ProcessorOp::Void {
                    processor_transaction_id: original
                        .authorization
                        .processor_transaction_id
                        .clone(),
                },
            ),
            FollowUp::Refund(_) => (
                TxnType::Refund,
                ProcessorOp::Refund {
                    processor_transaction_id: original
                        .authorization
                        .processor_transaction_id
                        .clone(),
                },
            ),
        };
        let id = TxnId::from_suffix(&self.ids.next_id());
        let mut txn = Transaction {
            id: id.clone(),
            kind,
            amount,
            fee: 0,
            created_on: self.clock.now(),
            authorization: placeholder(),
            state: TxnState::Pending,
            parent_id: Some(original.id.clone()),
            refunded_amount: 0,
            ..original.clone()
        };
        if !self
            .store
            .reserve_with_pending(&who.platform_id, who.mode, original_id, reservation, &txn)
            .await?
        {
            // Someone else changed the original between our read and the reservation.
            let now = self.original(who, original_id).await?;
            now.as_original().allows(follow_up)?;
            return Err(Refused::InFlight.into());
        }
        let request = ProcessorRequest {
            op,
            amount,
            currency: original.currency,
            reference: id,
        };
        let result = match &connection {
            Some(c) => self.processor.call(c, &request).await,
            None => Err(ProcessorError::Unavailable(
                "the original's processor connection no longer exists".into(),
            )),
        };
        match (&connection, &plan) {
            (Some(c), Some(p)) => self.settle(&mut txn, p, result, c, &request).await,
            _ => fail(
                &mut txn,
                AuthStatus::Error,
                "96",
                "processor connection or plan missing",
            ),
        }
        let approved = txn.authorization.status == AuthStatus::Approved;
        let outcome = match (follow_up, approved) {
            (FollowUp::Capture(_), true) => OriginalOutcome::Closed(TxnState::Captured),
            (FollowUp::Void, true) => OriginalOutcome::Closed(TxnState::Voided),
            (FollowUp::Capture(_) | FollowUp::Void, false) => OriginalOutcome::Reopened,
            (FollowUp::Refund(_), true) => OriginalOutcome::RefundKept,
            (FollowUp::Refund(_), false) => OriginalOutcome::RefundReleased { amount },
        };
        let reply = reply_for(recorder, &txn);
        self.complete(&txn, Some((original.id, outcome)), reply)
            .await?;
        Ok(txn)
    }

    pub async fn get(
        &self,
        who: &Principal,
        id: &TxnId,
    ) -> Result<Option<Transaction>, PaymentError> {
        Ok(self
            .store
            .get_transaction(&who.platform_id, who.mode, id)
            .await?)
    }

    async fn original(&self, who: &Principal, id: &TxnId) -> Result<Transaction, PaymentError> {
        self.store
            .get_transaction(&who.platform_id, who.mode, id)
            .await?
            .ok_or_else(|| Invalid::new("transactionId", "no such transaction").into())
    }

    /// Tries each connection in order while the processor is unavailable. A decline or a
    /// timeout ends the attempt: a decline is an answer, a timeout's outcome is unknown.
    async fn call_with_fallback<'a>(
        &self,
        connections: &'a [ProcessorConnection],
        request: &ProcessorRequest,
    ) -> (
        &'a ProcessorConnection,
        Result<ProcessorReply, ProcessorError>,
    ) {
        let mut last = None;
        for connection in connections {
            let result = self.processor.call(connection, request).await;
            let retry = matches!(result, Err(ProcessorError::Unavailable(_)));
            last = Some((connection, result));
            if !retry {
                break;
            }
        }
        last.expect("at least one connection")
    }

    /// Turns the processor's result into the transaction's final state, status and fee.
    async fn settle(
        &self,
        txn: &mut Transaction,
        plan: &Plan,
        result: Result<ProcessorReply, ProcessorError>,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) {
        match result {
            Ok(reply) if reply.approved => {
                txn.state = match txn.kind {
                    TxnType::Auth => TxnState::Authorized,
                    _ => TxnState::Settled,
                };
                let fee = match txn.kind {
                    TxnType::Auth => plan.fee.fixed(),
                    TxnType::Sale => {
                        plan.fee.percentage_of(reply.approved_amount) + plan.fee.fixed()
                    }
                    TxnType::Capture => plan.fee.percentage_of(reply.approved_amount),
                    TxnType::Void | TxnType::Refund => 0,
                };
                // A fee never exceeds the amount it is charged on: a 50-cent fixed fee on a
                // 30-cent sale is 30 cents, never a merchant paying to be paid.
                txn.fee = fee.min(reply.approved_amount);
                txn.authorization = authorization(&reply, AuthStatus::Approved, txn.amount);
            }
            Ok(reply) => {
                txn.state = TxnState::Declined;
                txn.authorization = authorization(&reply, AuthStatus::Declined, txn.amount);
            }
            Err(ProcessorError::Unavailable(reason)) => {
                fail(
                    txn,
                    AuthStatus::Error,
                    "96",
                    &format!("processor unavailable: {reason}"),
                );
            }
            Err(ProcessorError::Timeout) => {
                // The processor may have acted: release whatever it did for this transaction.
                let reverse = ProcessorRequest {
                    op: ProcessorOp::Reverse,
                    ..request.clone()
                };
                let reversed = self.processor.call(connection, &reverse).await.is_ok();
                let message = if reversed {
                    "processor timed out; the request was reversed"
                } else {
                    "processor timed out; the reversal failed and awaits reconciliation"
                };
                fail(txn, AuthStatus::TimedOut, "91", message);
            }
        }
    }

    /// Finishes transactions left `pending` before `before` by a process that stopped between the
    /// processor call and the completion: the processor is asked to reverse whatever it did,
    /// then the transaction is recorded as failed (status `T`, as a timeout) with its event, and a
    /// follow-up's reservation on its original is released. A transaction whose reversal fails
    /// stays pending for the next round.
    pub async fn reconcile(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> Result<Reconciled, PaymentError> {
        let mut report = Reconciled::default();
        for mut txn in self.store.stale_pending(before, limit).await? {
            let connection = self
                .store
                .get_connection(&txn.platform_id, txn.mode, &txn.processor.id)
                .await?;
            let reverse = ProcessorRequest {
                op: ProcessorOp::Reverse,
                amount: txn.amount,
                currency: txn.currency,
                reference: txn.id.clone(),
            };
            let reversed = match &connection {
                Some(c) => self.processor.call(c, &reverse).await.is_ok(),
                // No connection, no processor to hold anything.
                None => true,
            };
            if !reversed {
                report.still_pending.push(txn.id);
                continue;
            }
            fail(
                &mut txn,
                AuthStatus::TimedOut,
                "91",
                "left pending when the process stopped mid-call; reversed by reconciliation",
            );
            let original = txn.parent_id.clone().map(|parent| {
                let outcome = match txn.kind {
                    TxnType::Refund => OriginalOutcome::RefundReleased { amount: txn.amount },
                    _ => OriginalOutcome::Reopened,
                };
                (parent, outcome)
            });
            match self.complete(&txn, original, None).await {
                Ok(()) => report.reversed.push(txn.id),
                // The request that made it finished first: nothing to do.
                Err(PaymentError::Store(StoreError::NotFound)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(report)
    }

    async fn complete(
        &self,
        txn: &Transaction,
        original: Option<(TxnId, OriginalOutcome)>,
        reply: Option<KeyedResponse>,
    ) -> Result<(), PaymentError> {
        let event = Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: txn.platform_id.clone(),
            mode: txn.mode,
            data: EventData::TransactionCreated(Box::new(txn.clone())),
            created_on: txn.created_on,
        };
        self.store
            .complete_transaction_with_event(txn, original, &event, reply)
            .await?;
        Ok(())
    }
}

fn named(connection: &ProcessorConnection) -> Named<crate::ids::ConnectionId> {
    Named {
        id: connection.id.clone(),
        name: connection.name.clone(),
    }
}

/// The authorization of a row whose processor call has not returned yet.
fn placeholder() -> Authorization {
    Authorization {
        approved_amount: 0,
        avs: AvsCode::Unavailable,
        cvv: CvvCode::NotProcessed,
        partial: false,
        processor_code: String::new(),
        processor_message: "pending".into(),
        processor_transaction_id: String::new(),
        status: AuthStatus::Error,
    }
}

fn authorization(reply: &ProcessorReply, status: AuthStatus, requested: i64) -> Authorization {
    Authorization {
        approved_amount: if status == AuthStatus::Approved {
            reply.approved_amount
        } else {
            0
        },
        avs: reply.avs,
        cvv: reply.cvv,
        partial: status == AuthStatus::Approved && reply.approved_amount < requested,
        processor_code: reply.code.clone(),
        processor_message: reply.message.clone(),
        processor_transaction_id: reply.processor_transaction_id.clone(),
        status,
    }
}

fn fail(txn: &mut Transaction, status: AuthStatus, code: &str, message: &str) {
    txn.state = TxnState::Failed;
    txn.fee = 0;
    txn.authorization = Authorization {
        processor_code: code.into(),
        processor_message: message.into(),
        status,
        ..placeholder()
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{ConnectionId, KeyId, PlanId, PlatformId, UserId};
    use crate::merchant::{Currency, Merchant, MerchantDetails, MerchantName};
    use crate::mode::{KeyType, Mode};
    use crate::services::fixtures::{clock_at_noon, fixed_ids, visa_bins};

    use crate::payment::card::{CardNumber, Cvv, Expiration};
    use crate::payment::fee::FeeRule;
    use crate::payment::routing::ProcessorKind;
    use crate::ports::{
        MockBinLookup, MockCardVault, MockClock, MockIds, MockPaymentStore, MockProcessor,
        MockTokenStore,
    };
    use std::sync::{Arc, Mutex};
    use time::macros::datetime;

    fn who() -> Principal {
        Principal {
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            key_type: KeyType::Private,
            key_id: KeyId::from_suffix("1"),
            user_id: UserId::from_suffix("1"),
        }
    }

    fn connection(name: &str) -> ProcessorConnection {
        ProcessorConnection {
            id: ConnectionId::from_suffix(name),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            name: name.into(),
            kind: ProcessorKind::Sandbox,
            created_on: datetime!(2026-01-01 0:00 UTC),
        }
    }

    /// Each completion as the store saw it: the transaction and the response stored with it.
    type Completed = Arc<Mutex<Vec<(Transaction, Option<KeyedResponse>)>>>;

    /// A store with one merchant on a plan routing to `primary`, falling back to `backup`.
    fn store() -> (MockPaymentStore, Completed) {
        let mut store = MockPaymentStore::new();
        store.expect_payment_setup().returning(|_, _, id| {
            Ok(Some(PaymentSetup {
                merchant: Merchant {
                    id: id.clone(),
                    platform_id: PlatformId::from_suffix("1"),
                    mode: Mode::Test,
                    details: MerchantDetails {
                        name: MerchantName::parse("Shop").unwrap(),
                        currency: Currency::USD,
                        email: None,
                    },
                    plan_id: None,
                    created_on: datetime!(2026-01-01 0:00 UTC),
                    updated_on: datetime!(2026-01-01 0:00 UTC),
                },
                plan: Some(Plan {
                    id: PlanId::from_suffix("1"),
                    platform_id: PlatformId::from_suffix("1"),
                    mode: Mode::Test,
                    name: "Default".into(),
                    fee: FeeRule::new(290, 30).unwrap(),
                    default_connection: ConnectionId::from_suffix("primary"),
                    brand_routes: Vec::new(),
                    fallbacks: vec![ConnectionId::from_suffix("backup")],
                    is_default: true,
                    created_on: datetime!(2026-01-01 0:00 UTC),
                }),
                // In the store's order, not the route's, with one the plan does not name.
                connections: vec![
                    connection("backup"),
                    connection("other"),
                    connection("primary"),
                ],
            }))
        });
        store
            .expect_get_connection()
            .returning(|_, _, id| Ok(Some(connection(id.as_str().trim_start_matches("midCon_")))));
        store
            .expect_insert_pending_transaction()
            .returning(|_| Ok(()));
        let completed = Arc::new(Mutex::new(Vec::new()));
        let sink = completed.clone();
        store
            .expect_complete_transaction_with_event()
            .returning(move |txn, _, event, reply| {
                assert_eq!(
                    event.data.event_type(),
                    crate::webhook::EventType::TransactionCreated
                );
                sink.lock().unwrap().push((txn.clone(), reply));
                Ok(())
            });
        (store, completed)
    }

    fn service(
        store: MockPaymentStore,
        processor: MockProcessor,
    ) -> PaymentService<
        MockPaymentStore,
        MockProcessor,
        MockBinLookup,
        MockClock,
        MockIds,
        MockTokenStore,
        MockCardVault,
    > {
        let bins = visa_bins();
        let clock = clock_at_noon();
        let ids = fixed_ids("01");
        let tokens = TokenSource {
            tokens: MockTokenStore::new(),
            vault: MockCardVault::new(),
        };
        PaymentService::new(store, processor, bins, clock, ids, tokens)
    }

    fn auth() -> NewPayment {
        NewPayment {
            merchant_id: MerchantId::from_suffix("1"),
            kind: TxnType::Auth,
            amount: Amount::new("amount", 1000).unwrap(),
            source: PaymentSource::Card(CardData {
                number: CardNumber::parse("4111111111111111").unwrap(),
                cvv: Some(Cvv::parse("123").unwrap()),
                expiration: Expiration::parse("1230", datetime!(2026-11-22 0:00 UTC)).unwrap(),
            }),
        }
    }

    fn approved() -> ProcessorReply {
        ProcessorReply {
            approved: true,
            approved_amount: 1000,
            avs: AvsCode::FullMatch,
            cvv: CvvCode::Match,
            code: "00".into(),
            message: "Approved".into(),
            processor_transaction_id: "p1".into(),
        }
    }

    #[tokio::test]
    async fn an_unavailable_processor_falls_back_to_the_next_connection() {
        let (store, completed) = store();
        let mut processor = MockProcessor::new();
        processor
            .expect_call()
            .withf(|c, _| c.name == "primary")
            .times(1)
            .returning(|_, _| Err(ProcessorError::Unavailable("down".into())));
        processor
            .expect_call()
            .withf(|c, _| c.name == "backup")
            .times(1)
            .returning(|_, _| Ok(approved()));
        let txn = service(store, processor)
            .pay(&who(), auth(), None)
            .await
            .unwrap();
        assert_eq!(txn.processor.name, "backup");
        assert_eq!((txn.state, txn.fee), (TxnState::Authorized, 30));
        assert_eq!(completed.lock().unwrap().len(), 1);
    }

    /// Fail closed: a live payment whose plan reaches only the sandbox is refused before any
    /// processor call and before its token is taken (the mocks panic on any call).
    #[tokio::test]
    async fn a_live_payment_never_reaches_the_sandbox() {
        let live = Principal {
            mode: Mode::Live,
            ..who()
        };
        for source in [
            auth().source,
            PaymentSource::Token(crate::ids::TokenId::from_suffix("1")),
        ] {
            let (store, completed) = store();
            let payment = NewPayment { source, ..auth() };
            let refused = service(store, MockProcessor::new())
                .pay(&live, payment, None)
                .await;
            assert!(
                matches!(&refused, Err(PaymentError::Invalid(i)) if i.field == "merchantId"),
                "{refused:?}"
            );
            assert!(completed.lock().unwrap().is_empty());
        }
    }

    /// The plan's fixed fee is 30: on a sale of 20 the fee is cut to the 20 charged.
    #[tokio::test]
    async fn a_fee_never_exceeds_the_amount_charged() {
        for (amount, fee) in [(20, 20), (30, 30), (1000, 59)] {
            let (store, _) = store();
            let mut processor = MockProcessor::new();
            processor.expect_call().returning(move |_, _| {
                Ok(ProcessorReply {
                    approved_amount: amount,
                    ..approved()
                })
            });
            let sale = NewPayment {
                kind: TxnType::Sale,
                amount: Amount::new("amount", amount).unwrap(),
                ..auth()
            };
            let txn = service(store, processor)
                .pay(&who(), sale, None)
                .await
                .unwrap();
            assert_eq!(txn.fee, fee, "sale of {amount}");
        }
    }

    /// The response the renderer gives is written with the transaction, whatever its status: a
    /// processor failure is a recorded, final transaction too, and a retry must replay it.
    #[tokio::test]
    async fn the_rendered_response_is_stored_with_the_transaction_whatever_its_status() {
        use crate::idempotency::{IdempotencyKey, StoredResponse};
        let key = IdempotencyKey::parse("pay-1").unwrap();
        for (reply, stored) in [
            (Ok(approved()), Some(201)),
            (
                Ok(ProcessorReply {
                    approved: false,
                    code: "51".into(),
                    ..approved()
                }),
                Some(402),
            ),
            (Err(ProcessorError::Unavailable("down".into())), Some(502)),
        ] {
            let (store, completed) = store();
            let mut processor = MockProcessor::new();
            processor.expect_call().returning(move |_, _| reply.clone());
            let render = |txn: &Transaction| StoredResponse {
                status: match txn.authorization.status {
                    AuthStatus::Approved => 201,
                    AuthStatus::Declined => 402,
                    _ => 502,
                },
                body: txn.id.to_string(),
            };
            let recorder = Recorder {
                key: &key,
                render: &render,
            };
            let txn = service(store, processor)
                .pay(&who(), auth(), Some(&recorder))
                .await
                .unwrap();
            let completed = completed.lock().unwrap();
            let written = completed[0].1.as_ref();
            assert_eq!(
                written.map(|r| (r.response.status, r.key.as_str())),
                stored.map(|status| (status, "pay-1")),
                "{:?}",
                txn.authorization.status
            );
            assert!(written.is_some_and(|r| r.response.body == txn.id.to_string()));
        }
    }

    #[tokio::test]
    async fn a_decline_is_an_answer_and_never_falls_back() {
        let (store, _) = store();
        let mut processor = MockProcessor::new();
        processor.expect_call().times(1).returning(|_, _| {
            Ok(ProcessorReply {
                approved: false,
                approved_amount: 0,
                code: "51".into(),
                ..approved()
            })
        });
        let txn = service(store, processor)
            .pay(&who(), auth(), None)
            .await
            .unwrap();
        assert_eq!(
            (txn.state, txn.authorization.status, txn.fee),
            (TxnState::Declined, AuthStatus::Declined, 0)
        );
        assert_eq!(txn.processor.name, "primary");
    }

    #[tokio::test]
    async fn a_timeout_is_reversed_and_recorded_as_failed() {
        let (store, completed) = store();
        let mut processor = MockProcessor::new();
        processor
            .expect_call()
            .withf(|_, r| matches!(r.op, ProcessorOp::Authorize(_)))
            .times(1)
            .returning(|_, _| Err(ProcessorError::Timeout));
        processor
            .expect_call()
            .withf(|c, r| {
                matches!(r.op, ProcessorOp::Reverse)
                    && c.name == "primary"
                    && r.reference.as_str() == "txn_01"
            })
            .times(1)
            .returning(|_, _| Ok(approved()));
        let txn = service(store, processor)
            .pay(&who(), auth(), None)
            .await
            .unwrap();
        assert_eq!(
            (txn.state, txn.authorization.status),
            (TxnState::Failed, AuthStatus::TimedOut)
        );
        assert!(txn.authorization.processor_message.contains("reversed"));
        assert_eq!(
            completed.lock().unwrap()[0].0.authorization.status,
            AuthStatus::TimedOut
        );
    }

    #[tokio::test]
    async fn a_lost_reservation_is_refused_without_calling_the_processor() {
        let (mut store, _) = store();
        let mut original = None;
        {
            // An authorized auth, as the store returns it.
            let (s2, done) = self::store();
            let mut processor = MockProcessor::new();
            processor.expect_call().returning(|_, _| Ok(approved()));
            service(s2, processor)
                .pay(&who(), auth(), None)
                .await
                .unwrap();
            original.replace(done.lock().unwrap()[0].0.clone());
        }
        let original = original.unwrap();
        store
            .expect_get_transaction()
            .returning(move |_, _, _| Ok(Some(original.clone())));
        store.expect_get_plan().returning(|_, _, _| Ok(None));
        store
            .expect_reserve_with_pending()
            .times(1)
            .returning(|_, _, _, _, _| Ok(false));
        let mut processor = MockProcessor::new();
        processor.expect_call().never();
        let err = service(store, processor)
            .follow_up(
                &who(),
                &TxnId::from_suffix("01"),
                FollowUp::Capture(None),
                None,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, PaymentError::Refused(Refused::InFlight)),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn reconciliation_reverses_stale_pending_rows_and_releases_reservations() {
        // A real auth to build from, as the store returns it.
        let (s0, done) = store();
        let mut ok = MockProcessor::new();
        ok.expect_call().returning(|_, _| Ok(approved()));
        service(s0, ok).pay(&who(), auth(), None).await.unwrap();
        let auth_txn = done.lock().unwrap()[0].0.clone();
        let capture = Transaction {
            id: TxnId::from_suffix("cap"),
            kind: TxnType::Capture,
            state: TxnState::Pending,
            parent_id: Some(auth_txn.id.clone()),
            ..auth_txn.clone()
        };
        let stuck = Transaction {
            id: TxnId::from_suffix("stuck"),
            state: TxnState::Pending,
            ..auth_txn.clone()
        };

        let (mut store, _) = store();
        // Only what reconciliation does may happen: no new payments' expectations.
        store.checkpoint();
        let stale = vec![capture.clone(), stuck.clone()];
        store
            .expect_stale_pending()
            .withf(|before, limit| *before == datetime!(2026-11-22 11:00 UTC) && *limit == 50)
            .return_once(move |_, _| Ok(stale));
        let released = Arc::new(Mutex::new(Vec::new()));
        let sink = released.clone();
        store
            .expect_get_connection()
            .returning(|_, _, id| Ok(Some(connection(id.as_str().trim_start_matches("midCon_")))));
        store
            .expect_complete_transaction_with_event()
            .returning(move |txn, original, _, _| {
                sink.lock().unwrap().push((txn.clone(), original));
                Ok(())
            });
        let mut processor = MockProcessor::new();
        // The capture's reversal goes through; the other's fails, so it stays pending.
        processor
            .expect_call()
            .withf(|_, request| matches!(request.op, ProcessorOp::Reverse))
            .returning(|_, request| {
                if request.reference.as_str() == "txn_cap" {
                    Ok(approved())
                } else {
                    Err(ProcessorError::Unavailable("down".into()))
                }
            });
        let report = service(store, processor)
            .reconcile(datetime!(2026-11-22 11:00 UTC), 50)
            .await
            .unwrap();
        assert_eq!(report.reversed, std::slice::from_ref(&capture.id));
        assert_eq!(report.still_pending, std::slice::from_ref(&stuck.id));
        let released = released.lock().unwrap();
        let (txn, original) = &released[0];
        assert_eq!(
            (txn.state, txn.authorization.status),
            (TxnState::Failed, AuthStatus::TimedOut)
        );
        assert_eq!(
            original,
            &Some((auth_txn.id.clone(), OriginalOutcome::Reopened))
        );
        assert_eq!(
            released.len(),
            1,
            "nothing recorded for the one still pending"
        );
    }
}
