//! `GET /v1/balances?merchantId=`: what a merchant holds, per currency, from the ledger
//! (docs/money.md).

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::MerchantId;
use holdfast_domain::merchant::Currency;
use holdfast_domain::mode::Mode;
use holdfast_domain::ports::Balance;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::{Caller, query};
use super::routes::Routes;
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub fn routes(r: &mut Routes) {
    r.add(
        Method::GET,
        "/v1/balances",
        Access::Private,
        web::route().to(get),
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
