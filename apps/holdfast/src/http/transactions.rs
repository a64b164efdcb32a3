//! `/v1/transactions`: auth and sale with card data; capture, void and refund of an earlier
//! transaction; read one; list with filters.
//!
//! Answers: 201 with the transaction when approved; 402 (declined), 502 (processor error) or
//! 504 (processor timeout) with the error envelope and the recorded transaction under
//! `transaction`; 400 naming the field for bad input; 409 when the original does not allow the
//! follow-up now (already captured, voided, in progress).

use std::fmt;
use std::sync::Arc;

use actix_web::http::{Method, StatusCode};
use actix_web::{HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use holdfast_domain::Invalid;
use holdfast_domain::auth::{Access, Principal};
use holdfast_domain::idempotency::{Answer, IdempotencyKey, Seen, Unclaimed};
use holdfast_domain::ids::{MerchantId, TokenId, TxnId};
use holdfast_domain::instant;
use holdfast_domain::payment::amount::Amount;
use holdfast_domain::payment::card::CardInput;
use holdfast_domain::payment::decline::DeclineCode;
use holdfast_domain::payment::lifecycle::{FollowUp, TxnType};
use holdfast_domain::payment::transaction::{AuthStatus, Transaction};
use holdfast_domain::ports::Begun;
use holdfast_domain::ports::TxnFilter;
use holdfast_domain::services::{NewPayment, PaymentError, PaymentSource};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::extract::{ApiJson, Caller, PageQuery, query};
use super::idempotency::{
    AnswerWithChange, Deferred, KeySettled, begin, respond, seen_response, settle,
};
use super::routes::Routes;
use super::views::ListView;
use crate::state::AppState;
use holdfast_web::error::{ApiError, ErrorEnvelope};
use holdfast_web::request_context;

pub fn routes(r: &mut Routes) {
    r.add_claiming_own_key("/v1/transactions", Access::Private, web::route().to(create));
    r.add(
        Method::GET,
        "/v1/transactions",
        Access::Private,
        web::route().to(list),
    );
    r.add(
        Method::GET,
        "/v1/transactions/{id}",
        Access::Private,
        web::route().to(get),
    );
}

/// An auth or sale (`merchantId`, `amount`, `payment`), or a capture, void or refund of an
/// earlier transaction (`transactionId`, and `amount` for a partial capture or refund).
#[derive(Clone, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"type": "auth", "merchantId": "mid_01JDQ8Y6M2Z4R7V9T3B5N8K1XW", "amount": 1000, "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}))]
struct CreateTransaction {
    /// `auth`, `sale`, `capture`, `void` or `refund`.
    #[serde(rename = "type")]
    #[schema(value_type = TxnType)]
    kind: Option<String>,
    merchant_id: Option<String>,
    /// In minor units (cents).
    #[schema(minimum = 1)]
    amount: Option<i64>,
    payment: Option<PaymentBody>,
    transaction_id: Option<String>,
}

/// Card fields (`number`, `cvv`, `expiration` as MMYY, optionally `name`), or a `token`
/// (`tkn_…`), never both.
#[derive(Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Payment)]
pub(super) struct PaymentBody {
    number: Option<String>,
    cvv: Option<String>,
    expiration: Option<String>,
    /// The name on the card, optional: sealed with it and sent to the processor, never shown.
    name: Option<String>,
    pub(super) token: Option<String>,
}

/// Card data must never reach a log, even by accident.
impl fmt::Debug for CreateTransaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreateTransaction")
            .field("type", &self.kind)
            .field("merchantId", &self.merchant_id)
            .field("amount", &self.amount)
            .field("transactionId", &self.transaction_id)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for PaymentBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PaymentBody")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

fn required<T>(value: Option<T>, field: &'static str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::invalid(field, "is required"))
}

fn absent<T>(value: Option<&T>, field: &'static str, kind: &str) -> Result<(), ApiError> {
    match value {
        Some(_) => Err(ApiError::invalid(
            field,
            format!("is not allowed on a {kind}"),
        )),
        None => Ok(()),
    }
}

/// Card fields or a token, never both.
fn source(body: PaymentBody) -> Result<PaymentSource, ApiError> {
    let card_fields = body.number.is_some()
        || body.cvv.is_some()
        || body.expiration.is_some()
        || body.name.is_some();
    match body.token {
        Some(_) if card_fields => Err(ApiError::invalid(
            "payment",
            "send either card fields (number, cvv, expiration, name) or a token, not both",
        )),
        Some(token) => Ok(PaymentSource::Token(TokenId::parse(
            "payment.token",
            &token,
        )?)),
        None => Ok(PaymentSource::Card(body.card_input())),
    }
}

impl PaymentBody {
    /// The card fields, for the service to check.
    pub(super) fn card_input(self) -> CardInput {
        CardInput {
            number: self.number,
            cvv: self.cvv,
            expiration: self.expiration,
            name: self.name,
        }
    }
}

/// Creates a transaction: an auth or sale, or a capture, void or refund of an earlier one.
#[utoipa::path(post, path = "/v1/transactions", tag = "transactions", operation_id = "createTransaction", request_body = CreateTransaction, responses((status = 201, description = "Approved: the transaction.", body = Transaction), (status = 402, description = "Declined: the error, with the recorded transaction.", body = ErrorEnvelope), (status = 502, description = "The processor failed: the error, with the recorded transaction.", body = ErrorEnvelope), (status = 504, description = "The processor did not answer in time (any hold was reversed): the error, with the recorded transaction.", body = ErrorEnvelope)))]
async fn create(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateTransaction>,
) -> Result<HttpResponse, ApiError> {
    // The route claims its own key (`routes`): a key comes as a claim not yet made.
    let unclaimed = req.extensions().get::<Deferred>().map(|d| d.0.clone());
    // A payment runs on a task of its own, to its end (the processor's answer or its timeout and
    // reversal, the completion, the stored response, the key settled): a client that hangs up
    // drops this handler and the idempotency middleware with it, and dropping the payment too
    // would leave it pending, its key "still running".
    let task = tokio::spawn(request_context::with_current_id(run(
        state, who, unclaimed, body,
    )));
    let ran = task
        .await
        .map_err(|e| ApiError::Internal(format!("payment task: {e}")))?;
    let mut response = match ran.outcome {
        Outcome::Answered(Ok(answer)) => respond(answer),
        Outcome::Answered(Err(refusal)) => refusal.error_response(),
        Outcome::Seen(seen) => seen_response(seen),
    };
    if ran.key_settled {
        response.extensions_mut().insert(KeySettled);
    }
    Ok(response)
}

/// What a payment request came to, and whether its key is settled (its answer stored, or the
/// key released); an unsettled key is left to `idempotency::guard`.
struct Ran {
    outcome: Outcome,
    key_settled: bool,
}

enum Outcome {
    /// The payment's answer, or its refusal.
    Answered(Result<Answer, ApiError>),
    /// An earlier request holds the key: its answer, or 409.
    Seen(Seen),
}

/// The payment itself: the transaction and its answer, rendered once; under a key, the key
/// settled here, whatever the client does meanwhile.
async fn run(
    state: web::Data<AppState>,
    who: Principal,
    unclaimed: Option<Arc<Unclaimed>>,
    body: CreateTransaction,
) -> Ran {
    let Some(unclaimed) = unclaimed else {
        let outcome = pay(&state, &who, None, body)
            .await
            .map_err(PayError::into_api);
        return Ran {
            outcome: Outcome::Answered(outcome),
            key_settled: false,
        };
    };
    let again = body.clone();
    let paid = pay(&state, &who, Some(KeyUse::Unclaimed(&unclaimed)), body).await;
    let claim = unclaimed.claim();
    match paid {
        Err(PayError::KeyNotClaimed) => match begin(&state.idempotency, &who, claim).await {
            // The key was free after all (a stale claim replaced), or the payment writes before
            // its pending row (a token's redemption, a reservation): it runs as claimed.
            Ok(Begun::Started) => run_claimed(&state, &who, &claim.key, again).await,
            Ok(Begun::Seen(seen)) => Ran {
                outcome: Outcome::Seen(seen),
                key_settled: true,
            },
            Err(refusal) => Ran {
                outcome: Outcome::Answered(Err(refusal)),
                key_settled: true,
            },
        },
        paid if unclaimed.is_claimed() => {
            let outcome = paid.map_err(PayError::into_api);
            settle_refusal(&state, &who, &claim.key, &outcome).await;
            Ran {
                outcome: Outcome::Answered(outcome),
                key_settled: true,
            }
        }
        // Refused before the pending row: nothing written, the key not claimed.
        paid => Ran {
            outcome: Outcome::Answered(paid.map_err(PayError::into_api)),
            key_settled: false,
        },
    }
}

/// The payment under `key`, claimed before it ran.
async fn run_claimed(
    state: &AppState,
    who: &Principal,
    key: &IdempotencyKey,
    body: CreateTransaction,
) -> Ran {
    let outcome = pay(state, who, Some(KeyUse::Claimed(key)), body)
        .await
        .map_err(PayError::into_api);
    settle_refusal(state, who, key, &outcome).await;
    Ran {
        outcome: Outcome::Answered(outcome),
        key_settled: true,
    }
}

/// Settles `key` with a refusal, which no write stored: a recorded payment's answer was
/// stored with it.
async fn settle_refusal(
    state: &AppState,
    who: &Principal,
    key: &IdempotencyKey,
    outcome: &Result<Answer, ApiError>,
) {
    if let Err(refusal) = outcome {
        let answer = Answer {
            status: refusal.status_code().as_u16(),
            body: refusal.body().to_string(),
        };
        settle(state, who, key, answer).await;
    }
}

/// How a payment uses its request's key.
#[derive(Clone, Copy)]
enum KeyUse<'a> {
    Claimed(&'a IdempotencyKey),
    Unclaimed(&'a Arc<Unclaimed>),
}

/// Why the door's payment ended without an answer of its own.
enum PayError {
    Api(ApiError),
    /// The key must be claimed the ordinary way and the payment run again.
    KeyNotClaimed,
}

impl PayError {
    fn into_api(self) -> ApiError {
        match self {
            Self::Api(refusal) => refusal,
            Self::KeyNotClaimed => PaymentError::KeyNotClaimed.into(),
        }
    }
}

impl From<ApiError> for PayError {
    fn from(refusal: ApiError) -> Self {
        Self::Api(refusal)
    }
}

impl From<Invalid> for PayError {
    fn from(invalid: Invalid) -> Self {
        Self::Api(invalid.into())
    }
}

impl From<PaymentError> for PayError {
    fn from(err: PaymentError) -> Self {
        match err {
            PaymentError::KeyNotClaimed => Self::KeyNotClaimed,
            err => Self::Api(err.into()),
        }
    }
}

async fn pay(
    state: &AppState,
    who: &Principal,
    key: Option<KeyUse<'_>>,
    body: CreateTransaction,
) -> Result<Answer, PayError> {
    // Under a key, the response is stored with the transaction (see `Recorder`).
    let answer = AnswerWithChange::for_key(
        key.map(|key| match key {
            KeyUse::Claimed(key) => key.clone(),
            KeyUse::Unclaimed(unclaimed) => unclaimed.claim().key.clone(),
        }),
        render,
    );
    let mut recorder = answer.recorder();
    if let (Some(recorder), Some(KeyUse::Unclaimed(unclaimed))) = (&mut recorder, key) {
        recorder.unclaimed = Some(unclaimed);
    }
    let kind: TxnType = required(body.kind.as_deref(), "type")?
        .parse()
        .map_err(|_| {
            ApiError::invalid("type", "must be one of auth, sale, capture, void, refund")
        })?;
    let txn = match kind {
        TxnType::Auth | TxnType::Sale => {
            absent(body.transaction_id.as_ref(), "transactionId", kind.as_str())?;
            let merchant_id =
                MerchantId::parse("merchantId", &required(body.merchant_id, "merchantId")?)?;
            let amount = Amount::new("amount", required(body.amount, "amount")?)?;
            let source = source(required(body.payment, "payment")?)?;
            state
                .payments
                .pay(
                    who,
                    NewPayment {
                        merchant_id,
                        kind,
                        amount,
                        source,
                    },
                    recorder.as_ref(),
                )
                .await?
        }
        TxnType::Capture | TxnType::Void | TxnType::Refund => {
            absent(body.merchant_id.as_ref(), "merchantId", kind.as_str())?;
            absent(body.payment.as_ref(), "payment", kind.as_str())?;
            let original = TxnId::parse(
                "transactionId",
                &required(body.transaction_id, "transactionId")?,
            )?;
            let amount = body.amount.map(|a| Amount::new("amount", a)).transpose()?;
            let follow_up = match kind {
                TxnType::Capture => FollowUp::Capture(amount),
                TxnType::Refund => FollowUp::Refund(amount),
                _ => {
                    absent(amount.as_ref(), "amount", "void")?;
                    FollowUp::Void
                }
            };
            state
                .payments
                .follow_up(who, &original, follow_up, recorder.as_ref())
                .await?
        }
    };
    Ok(answer.answer(&txn))
}

/// The answer to a recorded transaction: the status code follows the outcome, and every
/// outcome carries the transaction.
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

/// Reads a transaction.
#[utoipa::path(get, path = "/v1/transactions/{id}", tag = "transactions", operation_id = "getTransaction", params(("id" = String, Path, description = "The resource's id.")), responses((status = 200, description = "The transaction.", body = Transaction)))]
async fn get(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound {
        resource: "transaction",
    };
    let id = TxnId::parse("id", &id).map_err(|_| not_found())?;
    let txn = state.payments.get(&who, &id).await?.ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(txn))
}

/// The parameters of the transaction list: its page and its filters.
#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct ListQuery {
    /// How many items the page holds: 1 to 100, 10 if not given.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    limit: Option<String>,
    /// The id of the last item of the previous page: the page starts after it.
    starting_after: Option<String>,
    /// Only this merchant's transactions.
    merchant_id: Option<String>,
    /// Only transactions of this type.
    #[serde(rename = "type")]
    #[param(value_type = Option<TxnType>)]
    kind: Option<String>,
    /// Only transactions created at or after this instant (RFC 3339; its UTC instant between
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z).
    #[param(value_type = Option<String>, format = DateTime)]
    created_from: Option<String>,
    /// Only transactions created before this instant (RFC 3339; its UTC instant between
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z).
    #[param(value_type = Option<String>, format = DateTime)]
    created_until: Option<String>,
}

/// Lists transactions, newest first, optionally filtered.
#[utoipa::path(get, path = "/v1/transactions", tag = "transactions", operation_id = "listTransactions", params(ListQuery), responses((status = 200, description = "A page of transactions, newest first.", body = ListView<Transaction>)))]
async fn list(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q: ListQuery = query(&req)?;
    let page = PageQuery {
        limit: q.limit,
        starting_after: q.starting_after,
    }
    .page(TxnId::PREFIX)?;
    let time = |name: &'static str, raw: Option<String>| {
        raw.map(|raw| instant::parse_rfc3339(name, &raw))
            .transpose()
    };
    let filter = TxnFilter {
        merchant_id: q
            .merchant_id
            .map(|raw| MerchantId::parse("merchantId", &raw))
            .transpose()?,
        kind: q
            .kind
            .map(|raw| {
                raw.parse::<TxnType>().map_err(|_| {
                    ApiError::invalid("type", "must be one of auth, sale, capture, void, refund")
                })
            })
            .transpose()?,
        // The API's list has no state filter (it is documented without one); the dashboard's does.
        state: None,
        created_from: time("createdFrom", q.created_from)?,
        created_until: time("createdUntil", q.created_until)?,
    };
    let txns = state.payments.list(&who, &filter, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(txns, |t| t)))
}
