//! A processor's answer, turned into the transaction's final state, status, fee and
//! authorization.

use crate::ids::ConnectionId;
use crate::payment::decline::DeclineCode;
use crate::payment::lifecycle::TxnState;
use crate::payment::response_code::ResponseCode;
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::transaction::{
    AuthStatus, Authorization, AvsCode, CvvCode, Named, Transaction,
};
use crate::ports::{ProcessorError, ProcessorOp, ProcessorReply, ProcessorRequest};

use super::PaymentService;

impl PaymentService {
    /// Records the processor's `result` on `txn`. A timeout's outcome is unknown: the processor
    /// is asked to reverse whatever it did before the transaction is recorded as failed.
    pub(super) async fn settle(
        &self,
        txn: &mut Transaction,
        plan: &Plan,
        result: Result<ProcessorReply, ProcessorError>,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) {
        match result {
            // A follow-up the processor took and decides later: `processing` until it has.
            Ok(reply) if reply.approved && reply.submitted && txn.kind.is_follow_up() => {
                txn.state = TxnState::Processing;
                txn.fee = plan.fee.charged_on(txn.kind, reply.approved_amount);
                txn.authorization = authorization(&reply, AuthStatus::Submitted, txn.amount);
            }
            Ok(reply) if reply.approved => {
                txn.state = txn.kind.state_when_approved();
                txn.fee = plan.fee.charged_on(txn.kind, reply.approved_amount);
                txn.authorization = authorization(&reply, AuthStatus::Approved, txn.amount);
            }
            Ok(reply) => {
                txn.state = TxnState::Declined;
                txn.authorization = authorization(&reply, AuthStatus::Declined, txn.amount);
            }
            Err(ProcessorError::Unavailable(reason)) => fail(
                txn,
                AuthStatus::Error,
                ResponseCode::SystemError,
                &format!("processor unavailable: {reason}"),
            ),
            Err(ProcessorError::Timeout) => {
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
                fail(txn, AuthStatus::TimedOut, ResponseCode::TimedOut, message);
            }
        }
    }
}

pub(super) fn named(connection: &ProcessorConnection) -> Named<ConnectionId> {
    Named {
        id: connection.id.clone(),
        name: connection.name.clone(),
    }
}

/// The authorization of a row whose processor call has not returned yet.
pub(super) fn placeholder() -> Authorization {
    Authorization {
        approved_amount: 0,
        avs: AvsCode::Unavailable,
        cvv: CvvCode::NotProcessed,
        partial: false,
        processor_code: String::new(),
        decline_code: None,
        processor_message: "pending".into(),
        processor_transaction_id: String::new(),
        status: AuthStatus::Pending,
    }
}

fn authorization(reply: &ProcessorReply, status: AuthStatus, requested: i64) -> Authorization {
    let approved = matches!(status, AuthStatus::Approved | AuthStatus::Submitted);
    Authorization {
        approved_amount: if approved { reply.approved_amount } else { 0 },
        avs: reply.avs,
        cvv: reply.cvv,
        partial: approved && reply.approved_amount < requested,
        processor_code: reply.code.clone(),
        decline_code: (status == AuthStatus::Declined)
            .then(|| reply.decline.unwrap_or(DeclineCode::GenericDecline)),
        processor_message: reply.message.clone(),
        processor_transaction_id: reply.processor_transaction_id.clone(),
        status,
    }
}

/// Records `txn` as failed: nothing moved, no fee.
pub(super) fn fail(txn: &mut Transaction, status: AuthStatus, code: ResponseCode, message: &str) {
    txn.state = TxnState::Failed;
    txn.fee = 0;
    txn.authorization = Authorization {
        processor_code: code.as_str().into(),
        processor_message: message.into(),
        status,
        ..placeholder()
    };
}
