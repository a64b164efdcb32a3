//! `/v1/transactions`: auth and sale with card data; capture, void and refund of an earlier
//! transaction; read one; list with filters.
//!
//! Answers: 201 with the transaction when approved; 402 (declined), 502 (processor error) or
//! 504 (processor timeout) with the error envelope and the recorded transaction under
//! `transaction`; 400 naming the field for bad input; 409 when the original does not allow the
//! follow-up now (already captured, voided, in progress).

use actix_web::http::Method;
use actix_web::{HttpMessage, HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{MerchantId, TxnId};
use holdfast_domain::instant;
use holdfast_domain::payment::labels::Reference;
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::TxnFilter;
use holdfast_domain::services::RequestKey;
use serde::Deserialize;
use utoipa::IntoParams;

use super::extract::{ApiJson, Caller, PageQuery, query};
use super::idempotency::Deferred;
use super::routes::Routes;
use super::views::ListView;
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};
use holdfast_web::request_context;
use request::CreateTransaction;

pub(super) use request::PaymentBody;

mod answer;
mod request;

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

/// Creates a transaction: an auth or sale, or a capture, void or refund of an earlier one.
#[utoipa::path(post, path = "/v1/transactions", tag = "transactions", operation_id = "createTransaction", request_body = CreateTransaction, responses((status = 201, description = "Approved: the transaction.", body = Transaction), (status = 402, description = "Declined: the error, with the recorded transaction.", body = ErrorEnvelope), (status = 502, description = "The processor failed: the error, with the recorded transaction.", body = ErrorEnvelope), (status = 504, description = "The processor did not answer in time (any hold was reversed): the error, with the recorded transaction.", body = ErrorEnvelope)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateTransaction>,
) -> Result<HttpResponse, ApiError> {
    let request = request::parse(body)?;
    // The route claims its own key (`routes`): a key comes as a claim not yet made.
    let key = match req.extensions().get::<Deferred>() {
        Some(Deferred(claim)) => RequestKey::AtFirstWrite(claim.clone()),
        None => RequestKey::None,
    };
    // A payment runs on a task of its own, to its end (the processor's answer or its timeout and
    // reversal, the completion, the stored response, the key settled): a client that hangs up
    // drops this handler and the idempotency middleware with it, and dropping the payment too
    // would leave it pending, its key "still running".
    let requests = state.transaction_requests.clone();
    let created = tokio::spawn(request_context::with_current_id(async move {
        requests.create(&who, request, key, &answer::RENDERS).await
    }))
    .await
    .map_err(|e| ApiError::Internal(format!("payment task: {e}")))?;
    Ok(answer::response(created))
}

/// Reads a transaction.
#[utoipa::path(get, path = "/v1/transactions/{id}", tag = "transactions", operation_id = "getTransaction", params(("id" = TxnId, Path, description = "The resource's id.")), responses((status = 200, description = "The transaction.", body = Transaction)))]
async fn get(
    state: web::Data<ApiState>,
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
    /// The id of the last item of the previous page: the page starts after it (older items).
    starting_after: Option<String>,
    /// The id of the first item of the next page: the page ends before it (newer items). Never
    /// with `startingAfter`.
    ending_before: Option<String>,
    /// Only this merchant's transactions.
    #[param(value_type = Option<MerchantId>)]
    merchant_id: Option<String>,
    /// Only transactions of this type.
    #[serde(rename = "type")]
    #[param(value_type = Option<TxnType>)]
    kind: Option<String>,
    /// Only transactions in this state.
    #[param(value_type = Option<TxnState>)]
    state: Option<String>,
    /// Only transactions with this reference of the merchant's.
    #[param(value_type = Option<Reference>)]
    reference: Option<String>,
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
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q: ListQuery = query(&req)?;
    let page = PageQuery {
        limit: q.limit,
        starting_after: q.starting_after,
        ending_before: q.ending_before,
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
        state: q
            .state
            .map(|raw| {
                raw.parse::<TxnState>().map_err(|_| {
                    ApiError::invalid(
                        "state",
                        format!(
                            "must be one of {}",
                            TxnState::ALL
                                .iter()
                                .map(|s| s.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    )
                })
            })
            .transpose()?,
        reference: q
            .reference
            .map(|raw| Reference::parse("reference", &raw))
            .transpose()?,
        created_from: time("createdFrom", q.created_from)?,
        created_until: time("createdUntil", q.created_until)?,
    };
    let txns = state.payments.list(&who, &filter, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(txns, |t| t)))
}
