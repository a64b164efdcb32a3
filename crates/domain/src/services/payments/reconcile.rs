//! Transactions a stopped process left `pending`: reversed at the processor, then recorded as
//! failed.

use crate::scope::Scope;
use time::OffsetDateTime;

use crate::payment::response_code::ResponseCode;
use crate::payment::transaction::AuthStatus;
use crate::ports::{OriginalOutcome, ProcessorOp, ProcessorRequest, StoreError};

use super::outcome::fail;
use super::{PaymentError, PaymentService, Reconciled};

impl PaymentService {
    /// Finishes transactions left `pending` before `before` by a process that stopped between the
    /// processor call and the completion: the processor is asked to reverse whatever it did,
    /// then the transaction is recorded as failed (status `T`, as a timeout) with its event, and a
    /// follow-up's reservation on its original is released. A transaction whose reversal fails
    /// stays pending for the next round.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn reconcile(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> Result<Reconciled, PaymentError> {
        let mut report = Reconciled::default();
        for mut txn in self.store.stale_pending(before, limit).await? {
            let connection = self
                .routing
                .get_connection(
                    &Scope::new(txn.platform_id.clone(), txn.mode),
                    &txn.processor.id,
                )
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
                ResponseCode::TimedOut,
                "left pending when the process stopped mid-call; reversed by reconciliation",
            );
            let original = txn
                .parent_id
                .clone()
                .map(|parent| (parent, OriginalOutcome::abandoned(txn.kind, txn.amount)));
            match self.complete(&txn, None, original, None, None).await {
                Ok(_) => report.reversed.push(txn.id),
                // The request that made it finished first: nothing to do.
                Err(PaymentError::Store(StoreError::NotFound)) => {}
                Err(other) => return Err(other),
            }
        }
        Ok(report)
    }
}
