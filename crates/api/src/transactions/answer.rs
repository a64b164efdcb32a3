//! What `POST /v1/transactions` answers: the status follows the outcome, and every recorded
//! outcome carries the transaction.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, ResponseError};
use holdfast_domain::idempotency::Answer;
use holdfast_domain::payment::decline::DeclineCode;
use holdfast_domain::payment::transaction::{AuthStatus, Transaction};
use holdfast_domain::services::{Created, PaymentError, Renders};
use holdfast_web::error::ApiError;

use crate::idempotency::{KeySettled, respond, seen_response};

/// How the answers stored under a request's key are rendered: the very bytes sent.
pub(super) static RENDERS: Renders<'static> = Renders {
    made: &render,
    refused: &refusal,
};

/// The response to what a request came to; one whose key the service settled says so, so the
/// idempotency guard leaves the key alone.
pub(super) fn response(created: Created) -> HttpResponse {
    let (mut response, key_settled) = match created {
        Created::Ran {
            result: Ok(txn),
            key_settled,
        } => (respond(render(&txn)), key_settled),
        Created::Ran {
            result: Err(refused),
            key_settled,
        } => (ApiError::from(refused).error_response(), key_settled),
        Created::Seen(seen) => (seen_response(seen), true),
    };
    if key_settled {
        response.extensions_mut().insert(KeySettled);
    }
    response
}

/// The answer to a recorded transaction.
fn render(txn: &Transaction) -> Answer {
    let (status, body) = match outcome(txn) {
        Ok(()) => (
            StatusCode::CREATED,
            serde_json::to_string(txn).unwrap_or_default(),
        ),
        Err(refusal) => (refusal.status_code(), refusal.body().to_string()),
    };
    Answer {
        status: status.as_u16(),
        body,
    }
}

/// The answer to a refusal, as the envelope renders it.
fn refusal(refused: &PaymentError) -> Answer {
    let refusal = ApiError::from(refused);
    Answer {
        status: refusal.status_code().as_u16(),
        body: refusal.body().to_string(),
    }
}

fn outcome(txn: &Transaction) -> Result<(), ApiError> {
    let (status, code, decline_code) = match txn.authorization.status {
        // A submitted follow-up was taken: its outcome arrives as `transaction.updated`.
        AuthStatus::Approved | AuthStatus::Submitted => return Ok(()),
        AuthStatus::Declined => (
            StatusCode::PAYMENT_REQUIRED,
            "card_declined",
            Some(
                txn.authorization
                    .decline_code
                    .unwrap_or(DeclineCode::GenericDecline)
                    .as_str(),
            ),
        ),
        AuthStatus::Error => (StatusCode::BAD_GATEWAY, "processor_error", None),
        AuthStatus::TimedOut => (StatusCode::GATEWAY_TIMEOUT, "processor_timeout", None),
        // A payment is answered once its processor has: never while pending.
        AuthStatus::Pending => {
            return Err(ApiError::Internal(format!(
                "transaction {} answered while pending",
                txn.id
            )));
        }
    };
    Err(ApiError::PaymentNotApproved {
        status,
        code,
        decline_code,
        transaction: Box::new(txn.clone()),
    })
}
