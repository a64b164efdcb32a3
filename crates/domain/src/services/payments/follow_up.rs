//! Captures, voids and refunds of an original transaction.

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::TxnId;
use crate::payment::lifecycle::{FollowUp, Refused, TxnState};
use crate::payment::response_code::ResponseCode;
use crate::payment::transaction::{AuthStatus, Transaction};
use crate::ports::{ProcessorError, ProcessorOp, ProcessorRequest};

use super::outcome::{fail, placeholder};
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
        let original = self.original(who, original_id).await?;
        let amount = original.as_original().allows(follow_up)?;
        // Everything the follow-up needs is read before the reservation is taken.
        let plan = self.routing.get_plan(&who.scope, &original.plan.id).await?;
        let connection = self
            .routing
            .get_connection(&who.scope, &original.processor.id)
            .await?;
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
                ResponseCode::SystemError,
                "processor connection or plan missing",
            ),
        }
        let approved = txn.authorization.status == AuthStatus::Approved;
        let outcome = follow_up.outcome(approved, amount);
        let reply = reply_for(recorder, &txn);
        self.complete(&txn, Some((original.id, outcome)), reply)
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
