//! Authorizations and sales: route by the merchant's plan, call the processor (falling back
//! while it is unavailable), record the outcome.

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{MerchantId, TokenId, TxnId};
use crate::merchant::Merchant;
use crate::payment::card::CvvRule;
use crate::payment::labels::Labels;
use crate::payment::lifecycle::{TxnState, TxnType};
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::token::{HeldSession, SessionClose};
use crate::payment::transaction::{AuthStatus, Named, PaymentSummary, Transaction};
use crate::ports::{
    CardData, PaymentSetup, ProcessorError, ProcessorOp, ProcessorReply, ProcessorRequest,
};

use super::outcome::{named, placeholder};
use super::requests::Charged;
use super::{NewPayment, PaymentError, PaymentService, PaymentSource};
use crate::services::PaymentTerms;

/// The merchant paid, its plan, the connections that may carry this mode's payments, and the
/// client session the payment is held under, which its approval completes.
struct Setup {
    merchant: Merchant,
    plan: Plan,
    known: Vec<ProcessorConnection>,
    session: Option<HeldSession>,
}

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
        self.charge_for(who, new, recorder).await.result
    }

    /// `pay`, saying whether the payment's first write claimed the request's key
    /// (`Recorder::claim_at_first_write`).
    pub(crate) async fn charge_for(
        &self,
        who: &Principal,
        new: NewPayment,
        recorder: Option<&Recorder<'_>>,
    ) -> Charged {
        if recorder.is_some_and(|r| r.claim_at_first_write.is_some())
            && matches!(new.source, PaymentSource::Token(_))
        {
            // Redeeming the token is a write of its own: the key must be the request's first.
            return Charged::refused(PaymentError::KeyNotClaimed);
        }
        let (setup, card) = match self.prepare(who, &new).await {
            Ok(prepared) => prepared,
            Err(refused) => return Charged::refused(refused),
        };
        let client_session = setup.session.clone();
        let charged = self
            .charge(
                who,
                (new.kind, new.amount.minor_units(), new.labels),
                setup,
                card,
                recorder,
            )
            .await;
        // The session was held for this payment from the moment its token was taken; an
        // approval completed it with the payment. After a timeout the charge may stand at the
        // processor (its reversal can fail): the hold then lapses by itself rather than let the
        // checkout pay again at once. Anything else gives the checkout back.
        if let Some(session) = client_session {
            match &charged.result {
                Ok(txn) if approved(txn) => {}
                Ok(txn) if txn.authorization.status == AuthStatus::TimedOut => {}
                _ => self.tokens.release_session(who, &session).await,
            }
        }
        charged
    }

    /// What a payment needs before its pending row: its card checked (before anything is
    /// read), its merchant, plan and connections, and its token redeemed.
    async fn prepare(
        &self,
        who: &Principal,
        new: &NewPayment,
    ) -> Result<(Setup, CardData), PaymentError> {
        let source = match &new.source {
            PaymentSource::Card(input) => {
                Checked::Card(input.clone().check(self.clock.now(), CvvRule::Required)?)
            }
            PaymentSource::Token(id) => Checked::Token(id.clone()),
        };
        let (merchant, plan, known) = self.routable_setup(who, &new.merchant_id).await?;
        if matches!(source, Checked::Card(_)) && merchant.raw_cards_on.is_none() {
            // Once per merchant: its systems see card numbers (SAQ D, docs/compliance.md).
            self.store
                .note_raw_cards(&who.scope, &merchant.id, self.clock.now())
                .await?;
        }
        let terms = PaymentTerms {
            merchant: &merchant.id,
            amount: new.amount.minor_units(),
            currency: merchant.details.currency,
        };
        let (card, session) = self.card_of(who, source, terms).await?;
        let setup = Setup {
            merchant,
            plan,
            known,
            session,
        };
        Ok((setup, card))
    }

    /// Routes `card` by the merchant's plan, calls the processor and records the outcome.
    async fn charge(
        &self,
        who: &Principal,
        (kind, amount, labels): (TxnType, i64, Labels),
        Setup {
            merchant,
            plan,
            known,
            session,
        }: Setup,
        card: CardData,
        recorder: Option<&Recorder<'_>>,
    ) -> Charged {
        let bin = self.bins.lookup(card.number.bin());
        let connections: Vec<ProcessorConnection> = plan
            .route(bin.brand)
            .iter()
            .filter_map(|id| known.iter().find(|c| &c.id == id).cloned())
            .collect();
        let Some(first) = connections.first().cloned() else {
            return Charged::refused(Invalid::new(
                "merchantId",
                "the merchant's plan routes to no processor connection",
            ));
        };
        let id = TxnId::from_suffix(&self.ids.next_id());
        let pending = Transaction {
            id: id.clone(),
            kind,
            merchant_id: merchant.id.clone(),
            platform_id: who.scope.platform.clone(),
            amount,
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
            reference: labels.reference,
            metadata: labels.metadata,
        };
        let claim = recorder.and_then(|r| r.claim_at_first_write).cloned();
        let claiming = claim.is_some();
        match self.store.insert_pending_transaction(&pending, claim).await {
            Ok(true) => {}
            Ok(false) => return Charged::refused(PaymentError::KeyNotClaimed),
            Err(store) => return Charged::refused(store),
        }
        // From here on, the key (if the pending row claimed one) is the request's to settle.
        Charged {
            result: self
                .call_and_complete(pending, card, &plan, &connections, session, recorder)
                .await,
            key_claimed: claiming,
        }
    }

    /// Calls the processor for `pending` (falling back while it is unavailable) and records
    /// the outcome, with the answer under the request's key and the client session closed.
    async fn call_and_complete(
        &self,
        pending: Transaction,
        card: CardData,
        plan: &Plan,
        connections: &[ProcessorConnection],
        session: Option<HeldSession>,
        recorder: Option<&Recorder<'_>>,
    ) -> Result<Transaction, PaymentError> {
        let op = match pending.kind {
            TxnType::Sale => ProcessorOp::Sale(card),
            _ => ProcessorOp::Authorize(card),
        };
        let request = ProcessorRequest {
            op,
            amount: pending.amount,
            currency: pending.currency,
            reference: pending.id.clone(),
        };
        let (used, result) = self.call_with_fallback(connections, &request).await;
        let mut txn = Transaction {
            processor: named(used),
            ..pending
        };
        self.settle(&mut txn, plan, result, used, &request).await;
        let reply = reply_for(recorder, &txn);
        let close = session.filter(|_| approved(&txn)).map(|held| SessionClose {
            held,
            on: self.clock.now(),
        });
        let to_close = close.as_ref().map(|c| c.held.id.clone());
        let session_closed = self.complete(&txn, None, None, reply, close).await?;
        if let Some(session) = to_close.filter(|_| !session_closed) {
            // The payment stands: its hold lapsed and the session was canceled, or taken and
            // completed by another payment, while the processor answered.
            tracing::warn!(%session, transaction = %txn.id, "a payment succeeded under a client session that was no longer its own");
        }
        Ok(txn)
    }

    /// The merchant, its plan and the connections that may carry this mode's payments; a
    /// merchant that cannot be paid is refused here, before any token is taken.
    async fn routable_setup(
        &self,
        who: &Principal,
        merchant_id: &MerchantId,
    ) -> Result<(Merchant, Plan, Vec<ProcessorConnection>), PaymentError> {
        let PaymentSetup {
            merchant,
            plan,
            connections: known,
        } = self
            .store
            .payment_setup(&who.scope, merchant_id)
            .await?
            .ok_or_else(|| Invalid::new("merchantId", "no such merchant"))?;
        if let Some(refusal) = merchant.payment_refusal() {
            return Err(refusal.into());
        }
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
            .filter(|c| c.kind().serves(who.scope.mode))
            .collect();
        if known.is_empty() {
            return Err(Invalid::new(
                "merchantId",
                "the merchant's plan routes to no processor connection that takes payments in this mode",
            )
            .into());
        }
        Ok((merchant, plan, known))
    }

    /// The card a payment sends, and the client session its token was made under, if any.
    async fn card_of(
        &self,
        who: &Principal,
        source: Checked,
        terms: PaymentTerms<'_>,
    ) -> Result<(CardData, Option<HeldSession>), PaymentError> {
        Ok(match source {
            Checked::Card(card) => (card, None),
            Checked::Token(id) => {
                let redeemed = self.tokens.redeem(who, &id, terms).await?;
                (redeemed.card, redeemed.client_session)
            }
        })
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

/// Whether `txn` was approved in full or in part: the payment the checkout asked for is made.
fn approved(txn: &Transaction) -> bool {
    txn.state == txn.kind.state_when_approved()
}
