//! `/v1/payouts`: a merchant's available money paid out to its bank account (docs/money.md).
//! Make one (idempotent), list, read, cancel one still pending.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{MerchantId, PayoutId};
use holdfast_domain::merchant::Currency;
use holdfast_domain::payout::{
    MerchantSchedule, Payout, PayoutInterval, PayoutSchedule, PayoutState, parse_weekday,
};
use holdfast_domain::ports::PayoutFilter;
use holdfast_domain::services::NewPayout;
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

use super::extract::{ApiJson, Caller, PageQuery, query};
use super::idempotency::{AnswerWithChange, changed, created};
use super::routes::Routes;
use super::views::ListView;
use crate::ApiState;
use holdfast_web::error::ApiError;

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/payouts",
        Access::Private,
        web::route().to(create),
    );
    r.add(
        Method::GET,
        "/v1/payouts",
        Access::Private,
        web::route().to(list),
    );
    r.add(
        Method::GET,
        "/v1/payouts/{id}",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::POST,
        "/v1/payouts/{id}/cancel",
        Access::Private,
        web::route().to(cancel),
    );
    let schedule = "/v1/merchants/{id}/payout-schedule";
    r.add(
        Method::GET,
        schedule,
        Access::Private,
        web::route().to(get_schedule),
    );
    r.add(
        Method::PUT,
        schedule,
        Access::Private,
        web::route().to(set_schedule),
    );
}

/// A payout asked for.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"merchantId": "mid_01JDQ8Y6M2Z4R7V9T3B5N8K1XW", "amount": 5000}))]
struct CreatePayout {
    /// The merchant to pay, of the key's platform and mode.
    #[schema(value_type = MerchantId)]
    merchant_id: String,
    /// Minor units, at least 1 and at most what is available; everything available when not
    /// given.
    #[schema(minimum = 1, required = false)]
    amount: Option<i64>,
    /// The balance to take it from; the merchant's currency when not given.
    #[schema(value_type = Option<Currency>, required = false)]
    currency: Option<String>,
}

/// Makes a payout of a merchant's available balance to its bank account.
#[utoipa::path(post, path = "/v1/payouts", tag = "money", operation_id = "createPayout", request_body = CreatePayout, responses((status = 201, description = "The payout, made (pending): its amount is in transit.", body = Payout), (status = 409, description = "The available balance does not cover it; or, in live mode, the merchant has no approved bank account, its account is not a US one, or the currency is not USD (live payouts go by ACH).", body = holdfast_web::error::ErrorEnvelope), (status = 503, description = "Nothing was made: the merchant's available balance kept changing while the payout was made (refunds, other payouts). Send the same request again, after Retry-After; the key is not kept.", body = holdfast_web::error::ErrorEnvelope)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreatePayout>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |p: &Payout| created(p));
    // An id that cannot be one names no merchant: refused by field, never echoed.
    let merchant = MerchantId::parse("merchantId", &body.merchant_id)
        .map_err(|_| ApiError::invalid("merchantId", "no such merchant"))?;
    let currency = body.currency.map(|raw| Currency::parse(&raw)).transpose()?;
    let new = NewPayout {
        merchant,
        currency,
        amount: body.amount,
    };
    let payout = state
        .payouts
        .create(&who, new, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&payout))
}

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
    /// Only this merchant's payouts.
    #[param(value_type = Option<MerchantId>)]
    merchant_id: Option<String>,
    /// Only payouts in this state.
    #[param(value_type = Option<PayoutState>)]
    state: Option<String>,
}

/// Lists payouts, newest first, optionally of one merchant or in one state.
#[utoipa::path(get, path = "/v1/payouts", tag = "money", operation_id = "listPayouts", params(ListQuery), responses((status = 200, description = "A page of payouts, newest first.", body = ListView<Payout>)))]
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
    .page(PayoutId::PREFIX)?;
    let filter = PayoutFilter {
        merchant: q
            .merchant_id
            .map(|raw| MerchantId::parse("merchantId", &raw))
            .transpose()?,
        state: q
            .state
            .map(|raw| PayoutState::from_word("state", &raw))
            .transpose()?,
    };
    let found = state.payouts.payouts(&who, &filter, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, |p| p)))
}

/// The id in the path: one that cannot be a payout's names none (404, like an unknown one).
fn payout_id(raw: &str) -> Result<PayoutId, ApiError> {
    PayoutId::parse("id", raw).map_err(|_| ApiError::NotFound { resource: "payout" })
}

/// Reads a payout.
#[utoipa::path(get, path = "/v1/payouts/{id}", tag = "money", operation_id = "getPayout", params(("id" = PayoutId, Path, description = "The resource's id.")), responses((status = 200, description = "The payout.", body = Payout)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let payout = state.payouts.payout(&who, &payout_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(payout))
}

/// Cancels a payout still pending: its amount is available again.
#[utoipa::path(post, path = "/v1/payouts/{id}/cancel", tag = "money", operation_id = "cancelPayout", params(("id" = PayoutId, Path, description = "The resource's id.")), responses((status = 200, description = "The payout, canceled.", body = Payout), (status = 409, description = "It was already handed to the bank, or ended.", body = holdfast_web::error::ErrorEnvelope)))]
async fn cancel(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |p: &Payout| changed(p));
    let payout = state
        .payouts
        .cancel(&who, &payout_id(&id)?, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&payout))
}

/// The merchant in the path: one that cannot be an id names none (404).
fn merchant_id(raw: &str) -> Result<MerchantId, ApiError> {
    MerchantId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "merchant",
    })
}

/// Reads a merchant's payout schedule (`manual` until one is set).
#[utoipa::path(get, path = "/v1/merchants/{id}/payout-schedule", tag = "money", operation_id = "getPayoutSchedule", params(("id" = MerchantId, Path, description = "The merchant's id.")), responses((status = 200, description = "The merchant's payout schedule.", body = MerchantSchedule)))]
async fn get_schedule(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let schedule = state.payouts.schedule(&who, &merchant_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(schedule))
}

/// A payout schedule; its schema is `openapi::bodies::payout_schedule`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ScheduleBody {
    interval: String,
    weekday: Option<String>,
    minimum_amount: Option<i64>,
}

crate::openapi::bodies::described_by!(ScheduleBody, crate::openapi::bodies::payout_schedule);

/// Sets a merchant's payout schedule: the workers' payout runs pay out its available balance
/// on the days it names.
#[utoipa::path(put, path = "/v1/merchants/{id}/payout-schedule", tag = "money", operation_id = "setPayoutSchedule", params(("id" = MerchantId, Path, description = "The merchant's id.")), request_body = ScheduleBody, responses((status = 200, description = "The schedule, set.", body = MerchantSchedule)))]
async fn set_schedule(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
    ApiJson(body): ApiJson<ScheduleBody>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |s: &MerchantSchedule| changed(s));
    let merchant = merchant_id(&id)?;
    let interval = body
        .interval
        .parse::<PayoutInterval>()
        .map_err(|_| ApiError::invalid("interval", "must be one of manual, daily, weekly"))?;
    let weekday = body
        .weekday
        .map(|raw| parse_weekday("weekday", &raw))
        .transpose()?;
    let schedule = PayoutSchedule::new(interval, weekday, body.minimum_amount.unwrap_or(0))?;
    let set = state
        .payouts
        .set_schedule(&who, &merchant, schedule, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&set))
}
