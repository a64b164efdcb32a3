//! `GET /v1/balances?merchantId=`: what a merchant holds, per currency, from the ledger; and
//! `GET /v1/balance-transactions`: each journal that moved a merchant's money (docs/money.md).

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::MerchantId;
use holdfast_domain::ledger::{BalanceTransaction, BalanceTransactionId, JournalKind};
use holdfast_domain::merchant::Currency;
use holdfast_domain::mode::Mode;
use holdfast_domain::page::Page;
use holdfast_domain::ports::{Balance, BalanceTransactionFilter};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::{Caller, PageQuery, query};
use super::routes::Routes;
use super::views::ListView;
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub fn routes(r: &mut Routes) {
    r.add(
        Method::GET,
        "/v1/balances",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::GET,
        "/v1/balance-transactions",
        Access::Private,
        web::route().to(list_transactions),
    );
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct BalanceQuery {
    /// The merchant whose balances to read.
    #[param(value_type = MerchantId, required = true)]
    merchant_id: Option<String>,
}

/// A merchant's balances.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Balances)]
struct BalancesView<'a> {
    #[schema(value_type = MerchantId)]
    merchant_id: &'a MerchantId,
    mode: Mode,
    /// One per currency the merchant has money in (its own currency, with zeros, when none).
    balances: Vec<BalanceView>,
}

/// What a merchant holds in one currency, in its minor units.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Balance)]
struct BalanceView {
    currency: Currency,
    /// What may be paid out; below zero when refunds outran it (later settlements make it
    /// good before any payout).
    available: i64,
    /// What was paid and is not yet settled.
    pending: i64,
    /// What a payout is taking to the bank.
    in_transit: i64,
}

impl From<&Balance> for BalanceView {
    fn from(b: &Balance) -> Self {
        Self {
            currency: b.currency,
            available: b.available,
            pending: b.pending,
            in_transit: b.in_transit,
        }
    }
}

/// Reads a merchant's balances, recomputed from the ledger's entries.
#[utoipa::path(get, path = "/v1/balances", tag = "money", operation_id = "getBalances", params(BalanceQuery), responses((status = 200, description = "The merchant's balances, per currency.", body = BalancesView), (status = 404, description = "No such merchant in the key's platform and mode (a malformed id included).", body = ErrorEnvelope)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q: BalanceQuery = query(&req)?;
    let raw = q
        .merchant_id
        .ok_or_else(|| ApiError::invalid("merchantId", "is required"))?;
    // A malformed id names no merchant: the same answer as an unknown one.
    let merchant = MerchantId::parse("merchantId", &raw).map_err(|_| ApiError::NotFound {
        resource: "merchant",
    })?;
    let balances = state.ledger.balances(&who, &merchant).await?;
    Ok(HttpResponse::Ok().json(BalancesView {
        merchant_id: &merchant,
        mode: who.scope.mode,
        balances: balances.iter().map(BalanceView::from).collect(),
    }))
}

#[derive(Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
struct TransactionsQuery {
    /// How many items the page holds: 1 to 100, 10 if not given.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    limit: Option<String>,
    /// The id of the last item of the previous page: the page starts after it (older items).
    starting_after: Option<String>,
    /// The id of the first item of the next page: the page ends before it (newer items). Never
    /// with `startingAfter`.
    ending_before: Option<String>,
    /// Only this merchant's.
    #[param(value_type = Option<MerchantId>)]
    merchant_id: Option<String>,
    /// Only this type's.
    #[param(value_type = Option<JournalKind>, rename = "type")]
    #[serde(rename = "type")]
    kind: Option<String>,
    /// Only those of this payout (`po_…`).
    #[param(value_type = Option<holdfast_domain::ids::PayoutId>)]
    payout_id: Option<String>,
    /// Only those of this transaction (`txn_…`); with `payoutId` too, none (no journal has two
    /// sources).
    #[param(value_type = Option<holdfast_domain::ids::TxnId>)]
    transaction_id: Option<String>,
}

/// Lists balance transactions, newest first: each journal that moved a merchant's money, with
/// how it moved each balance.
#[utoipa::path(get, path = "/v1/balance-transactions", tag = "money", operation_id = "listBalanceTransactions", params(TransactionsQuery), responses((status = 200, description = "A page of balance transactions, newest first.", body = ListView<BalanceTransaction>), (status = 400, description = "A filter or cursor that is not one, named.", body = ErrorEnvelope)))]
async fn list_transactions(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let q: TransactionsQuery = query(&req)?;
    let page = PageQuery {
        limit: q.limit,
        starting_after: q.starting_after,
        ending_before: q.ending_before,
    }
    .page(BalanceTransactionId::PREFIX)?;
    let payout = q
        .payout_id
        .map(|raw| holdfast_domain::ids::PayoutId::parse("payoutId", &raw))
        .transpose()?;
    let transaction = q
        .transaction_id
        .map(|raw| holdfast_domain::ids::TxnId::parse("transactionId", &raw))
        .transpose()?;
    if payout.is_some() && transaction.is_some() {
        // No journal has two sources: the two filters together let none through.
        let none = Page::<BalanceTransaction> {
            data: Vec::new(),
            has_more: false,
        };
        return Ok(HttpResponse::Ok().json(ListView::from_page(none, |t| t)));
    }
    let source = payout
        .map(|p| p.to_string())
        .or_else(|| transaction.map(|t| t.to_string()));
    let filter = BalanceTransactionFilter {
        merchant: q
            .merchant_id
            .map(|raw| MerchantId::parse("merchantId", &raw))
            .transpose()?,
        kind: q
            .kind
            .map(|raw| JournalKind::from_word("type", &raw))
            .transpose()?,
        source,
    };
    let found = state
        .ledger
        .balance_transactions(&who, &filter, &page)
        .await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, |t| t)))
}
