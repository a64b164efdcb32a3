//! Captures, voids and refunds of an original transaction.

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::TxnId;
use crate::payment::labels::Labels;
use crate::payment::lifecycle::{FollowUp, Refused, TxnState};
use crate::payment::transaction::{AuthStatus, Transaction};
use crate::ports::{OriginalOutcome, ProcessorOp, ProcessorRequest, StoreError};

use super::outcome::placeholder;
use super::{PaymentError, PaymentService};

impl PaymentService {
    /// Captures, voids or refunds `original`. With a `recorder`, as in `pay`.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), original = %original_id))]
    pub async fn follow_up(
        &self,
        who: &Principal,
        original_id: &TxnId,
        follow_up: FollowUp,
        recorder: Option<&Recorder<'_>>,
    ) -> Result<Transaction, PaymentError> {
        self.follow_up_labelled(who, original_id, follow_up, Labels::default(), recorder)
            .await
    }

    /// `follow_up` with the merchant's reference and metadata for it; what it is not given it
    /// takes from its original (a capture of order 42 is about order 42).
    pub async fn follow_up_labelled(
        &self,
        who: &Principal,
        original_id: &TxnId,
        follow_up: FollowUp,
        labels: Labels,
        recorder: Option<&Recorder<'_>>,
    ) -> Result<Transaction, PaymentError> {
        if recorder.is_some_and(|r| r.claim_at_first_write.is_some()) {
            // Only a new payment's pending row claims a key; a reservation does not.
            return Err(PaymentError::KeyNotClaimed);
        }
        let original = self.original(who, original_id).await?;
        let amount = original.as_original().allows(follow_up)?;
        // Everything the follow-up needs is read before the reservation is taken.
        let plan = self.routing.get_plan(&who.scope, &original.plan.id).await?;
        let connection = self
            .routing
            .get_connection(&who.scope, &original.processor.id)
            .await?;
        // Plans and connections are never deleted; if one were, nothing is reserved and no
        // processor is called (money must not move for an answer that cannot be recorded).
        let (Some(plan), Some(connection)) = (plan, connection) else {
            return Err(StoreError::Unexpected(format!(
                "transaction {original_id}: its plan or processor connection is gone"
            ))
            .into());
        };
        let id = TxnId::from_suffix(&self.ids.next_id());
        let mut txn = Transaction {
            id: id.clone(),
            kind: follow_up.kind(),
            amount,
            fee: 0,
            created_on: self.clock.now(),
            authorization: placeholder(),
            state: TxnState::Pending,
            parent_id: Some(original.id.clone()),
            refunded_amount: 0,
            reference: labels.reference.or_else(|| original.reference.clone()),
            metadata: if labels.metadata.is_empty() {
                original.metadata.clone()
            } else {
                labels.metadata
            },
            ..original.clone()
        };
        let reservation = follow_up.reservation(amount);
        if !self
            .store
            .reserve_with_pending(&who.scope, original_id, reservation, &txn)
            .await?
        {
            // Someone else changed the original between our read and the reservation.
            let now = self.original(who, original_id).await?;
            now.as_original().allows(follow_up)?;
            return Err(Refused::InFlight.into());
        }
        let request = ProcessorRequest {
            op: ProcessorOp::follow_up(
                follow_up,
                original.authorization.processor_transaction_id.clone(),
            ),
            amount,
            currency: original.currency,
            reference: id,
        };
        let result = self.processor.call(&connection, &request).await;
        self.settle(&mut txn, &plan, result, &connection, &request)
            .await;
        let outcome = match txn.authorization.status {
            AuthStatus::Submitted => OriginalOutcome::Held,
            status => follow_up.outcome(status == AuthStatus::Approved, amount),
        };
        let reply = reply_for(recorder, &txn);
        let original_id = original.id.clone();
        self.complete(
            &txn,
            Some(&original),
            Some((original_id, outcome)),
            reply,
            None,
        )
        .await?;
        Ok(txn)
    }

    async fn original(&self, who: &Principal, id: &TxnId) -> Result<Transaction, PaymentError> {
        self.store
            .get_transaction(&who.scope, id)
            .await?
            .ok_or_else(|| Invalid::new("transactionId", "no such transaction").into())
    }
}
