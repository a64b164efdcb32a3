//! Authorizations and sales: route by the merchant's plan, call the processor (falling back
//! while it is unavailable), record the outcome.

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{TokenId, TxnId};
use crate::payment::card::CvvRule;
use crate::payment::lifecycle::{TxnState, TxnType};
use crate::payment::routing::ProcessorConnection;
use crate::payment::transaction::{Named, PaymentSummary, Transaction};
use crate::ports::{
    CardData, PaymentSetup, ProcessorError, ProcessorOp, ProcessorReply, ProcessorRequest,
};

use super::outcome::{named, placeholder};
use super::{NewPayment, PaymentError, PaymentService, PaymentSource};

/// A payment's source once its card fields are checked; a token is redeemed later.
enum Checked {
    Card(CardData),
    Token(TokenId),
}

impl PaymentService {
    /// Authorizes or sells. Declines and processor failures are recorded transactions too:
    /// the result says what happened in `authorization.status`. With a `recorder`, the response
    /// is stored under its idempotency key together with the transaction.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn pay(
        &self,
        who: &Principal,
        new: NewPayment,
        recorder: Option<&Recorder<'_>>,
    ) -> Result<Transaction, PaymentError> {
        // Card fields are checked before anything is read.
        let source = match new.source {
            PaymentSource::Card(input) => {
                Checked::Card(input.check(self.clock.now(), CvvRule::Required)?)
            }
            PaymentSource::Token(id) => Checked::Token(id),
        };
        let PaymentSetup {
            merchant,
            plan,
            connections: known,
        } = self
            .store
            .payment_setup(&who.scope, &new.merchant_id)
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
            .filter(|c| c.kind.serves(who.scope.mode))
            .collect();
        if known.is_empty() {
            return Err(Invalid::new(
                "merchantId",
                "the merchant's plan routes to no processor connection that takes payments in this mode",
            )
            .into());
        }
        let card = match source {
            Checked::Card(card) => card,
            Checked::Token(id) => self.tokens.redeem(who, &id).await?,
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
            platform_id: who.scope.platform.clone(),
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
            mode: who.scope.mode,
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
}
