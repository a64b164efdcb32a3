//! `/v1/loans`: loans a platform offers its merchants, repaid from their settlements
//! (docs/loans.md). Offer (idempotent), list, read, accept with the merchant's consent, cancel,
//! repay early, and the repayment history.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{LoanId, LoanRepaymentId, MerchantId};
use holdfast_domain::loan::{Loan, LoanRepayment, LoanState, LoanTerms};
use holdfast_domain::ports::LoanFilter;
use holdfast_domain::services::{Consent, NewLoan, OfferedLoan};
use holdfast_web::client_address::client_address;
use holdfast_web::error::ApiError;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::extract::{ApiJson, Caller, PageQuery, query};
use super::idempotency::{AnswerWithChange, changed, created};
use super::routes::Routes;
use super::views::ListView;
use crate::ApiState;

pub fn routes(r: &mut Routes) {
    let private = |r: &mut Routes, method, path, to| r.add(method, path, Access::Private, to);
    private(r, Method::POST, "/v1/loans", web::route().to(create));
    private(r, Method::GET, "/v1/loans", web::route().to(list));
    private(
        r,
        Method::POST,
        "/v1/loans/underwritten",
        web::route().to(underwrite),
    );
    private(r, Method::GET, "/v1/loans/{id}", web::route().to(get));
    private(
        r,
        Method::POST,
        "/v1/loans/{id}/accept",
        web::route().to(accept),
    );
    private(
        r,
        Method::POST,
        "/v1/loans/{id}/cancel",
        web::route().to(cancel),
    );
    private(
        r,
        Method::POST,
        "/v1/loans/{id}/repay",
        web::route().to(repay),
    );
    private(
        r,
        Method::GET,
        "/v1/loans/{id}/repayments",
        web::route().to(repayments),
    );
}

/// A loan offered to a merchant.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"merchantId": "mid_01JDQ8Y6M2Z4R7V9T3B5N8K1XW", "advance": 100_000, "fee": 10_000, "withholdRateBps": 1000, "minimumPer30Days": 20_000}))]
struct CreateLoan {
    /// The merchant, of the key's platform and mode; the loan is in its currency.
    #[schema(value_type = MerchantId)]
    merchant_id: String,
    /// What the merchant receives, in minor units.
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    advance: i64,
    /// The flat fee, repaid with the advance: 0 to the advance.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    fee: i64,
    /// The share of each settlement's net withheld, in basis points (1,000 is 10 %).
    #[schema(minimum = 1, maximum = 10_000)]
    withhold_rate_bps: i64,
    /// What must be repaid in each 30 days from the payout: 1 to the advance and fee. None
    /// when not given.
    #[schema(minimum = 1, required = false)]
    minimum_per30_days: Option<i64>,
    /// Days the offer lasts: 1 to 90, 30 when not given.
    #[schema(minimum = 1, maximum = 90, required = false)]
    offer_days: Option<i64>,
}

/// A loan just offered, with its acceptance page's link: shown this once, kept only by hash.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct OfferedView {
    #[serde(flatten)]
    loan: Loan,
    /// The page where the merchant reads the terms and accepts: send it to the merchant. In
    /// the answer to the request that offered it only; a replay under the same key has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(required = false)]
    acceptance_url: Option<String>,
}

impl OfferedView {
    fn of(o: &OfferedLoan, with_link: bool) -> Self {
        Self {
            loan: o.loan.clone(),
            acceptance_url: with_link.then(|| o.acceptance_url.clone()),
        }
    }
}

/// Offers a loan to a merchant, with `loan.created`.
#[utoipa::path(post, path = "/v1/loans", tag = "money", operation_id = "createLoan", request_body = CreateLoan, responses((status = 201, description = "The loan, offered, with the link of its acceptance page (shown this once).", body = OfferedView), (status = 409, description = "The merchant already has a loan offered, accepted or being repaid.", body = holdfast_web::error::ErrorEnvelope)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateLoan>,
) -> Result<HttpResponse, ApiError> {
    // The stored answer a replay gets has no link: the link's secret is kept nowhere.
    let answer = AnswerWithChange::new(&req, |o: &OfferedLoan| created(&OfferedView::of(o, false)));
    let merchant = MerchantId::parse("merchantId", &body.merchant_id)
        .map_err(|_| ApiError::invalid("merchantId", "no such merchant"))?;
    let rate = u32::try_from(body.withhold_rate_bps)
        .map_err(|_| ApiError::invalid("withholdRateBps", "must be 1 to 10000 basis points"))?;
    let terms = LoanTerms::new(body.advance, body.fee, rate, body.minimum_per30_days)?;
    let new = NewLoan {
        merchant,
        terms,
        offer_days: body.offer_days,
    };
    let offered = state
        .loans
        .offer(&who, new, answer.recorder().as_ref())
        .await?;
    Ok(answer.send_answer(created(&OfferedView::of(&offered, true))))
}

/// A merchant for the sandbox underwriter.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"merchantId": "mid_01JDQ8Y6M2Z4R7V9T3B5N8K1XW"}))]
struct UnderwriteLoan {
    /// The merchant, of the key's platform (test mode).
    #[schema(value_type = MerchantId)]
    merchant_id: String,
}

/// Test mode's sandbox underwriter offers a merchant a loan sized by what it processed in the
/// last 90 days: an advance of a third of it (rounded down to 100 minor units), a fee of a
/// tenth of the advance, 10 % of each settlement withheld, a sixth of the total due in each 30
/// days; with `loan.created`.
#[utoipa::path(post, path = "/v1/loans/underwritten", tag = "money", operation_id = "underwriteLoan", request_body = UnderwriteLoan, responses((status = 201, description = "The loan, offered, with the link of its acceptance page (shown this once).", body = OfferedView), (status = 409, description = "A live key (the underwriter is test mode's); the merchant processed too little in the last 90 days; or it already has a loan offered, accepted or being repaid.", body = holdfast_web::error::ErrorEnvelope)))]
async fn underwrite(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<UnderwriteLoan>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |o: &OfferedLoan| created(&OfferedView::of(o, false)));
    let merchant = MerchantId::parse("merchantId", &body.merchant_id)
        .map_err(|_| ApiError::invalid("merchantId", "no such merchant"))?;
    let offered = state
        .loans
        .underwrite(&who, merchant, answer.recorder().as_ref())
        .await?;
    Ok(answer.send_answer(created(&OfferedView::of(&offered, true))))
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
    /// Only this merchant's loans.
    #[param(value_type = Option<MerchantId>)]
    merchant_id: Option<String>,
    /// Only loans in this state.
    #[param(value_type = Option<LoanState>)]
    state: Option<String>,
}

/// Lists loans, newest first, optionally of one merchant or in one state.
#[utoipa::path(get, path = "/v1/loans", tag = "money", operation_id = "listLoans", params(ListQuery), responses((status = 200, description = "A page of loans, newest first.", body = ListView<Loan>)))]
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
    .page(LoanId::PREFIX)?;
    let filter = LoanFilter {
        merchant: q
            .merchant_id
            .map(|raw| MerchantId::parse("merchantId", &raw))
            .transpose()?,
        state: q
            .state
            .map(|raw| LoanState::from_word("state", &raw))
            .transpose()?,
    };
    let found = state.loans.list(&who, &filter, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, |l| l)))
}

/// The id in the path: one that cannot be a loan's names none (404, like an unknown one).
fn loan_id(raw: &str) -> Result<LoanId, ApiError> {
    LoanId::parse("id", raw).map_err(|_| ApiError::NotFound { resource: "loan" })
}

/// Reads a loan.
#[utoipa::path(get, path = "/v1/loans/{id}", tag = "money", operation_id = "getLoan", params(("id" = LoanId, Path, description = "The resource's id.")), responses((status = 200, description = "The loan.", body = Loan)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let loan = state.loans.get(&who, &loan_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(loan))
}

/// The merchant's consent the platform holds.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConsentBody {
    /// The person who consented for the merchant.
    #[schema(schema_with = crate::openapi::fields::accepted_text)]
    name: String,
    /// The platform's reference to the consent it keeps (a signed document's id).
    #[schema(schema_with = crate::openapi::fields::accepted_text)]
    reference: String,
}

/// Accepting for the merchant.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"consent": {"name": "Ada Lovelace", "reference": "signed-terms-2026-12-01"}}))]
struct AcceptBody {
    /// The merchant's consent, on record with the platform.
    consent: ConsentBody,
}

/// Accepts an offer for its merchant, with the merchant's consent the platform holds; its
/// advance is then paid out (`loan.accepted`, `loan.paid_out`, `payout.created`).
#[utoipa::path(post, path = "/v1/loans/{id}/accept", tag = "money", operation_id = "acceptLoan", params(("id" = LoanId, Path, description = "The resource's id.")), request_body = AcceptBody, responses((status = 200, description = "The loan, accepted, and paid out unless its live merchant has no US bank account yet (it is then paid out once it has).", body = Loan), (status = 409, description = "It is not an open offer (accepted, canceled, or expired).", body = holdfast_web::error::ErrorEnvelope)))]
async fn accept(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
    ApiJson(body): ApiJson<AcceptBody>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |l: &Loan| changed(l));
    let consent = Consent {
        name: body.consent.name,
        reference: body.consent.reference,
    };
    let address = client_address(&req).map_or_else(String::new, |a| a.to_string());
    let loan = state
        .loans
        .accept_for_merchant(
            &who,
            &loan_id(&id)?,
            &consent,
            &address,
            answer.recorder().as_ref(),
        )
        .await?;
    Ok(answer.send(&loan))
}

/// Cancels a loan before its advance is paid out (`loan.canceled`).
#[utoipa::path(post, path = "/v1/loans/{id}/cancel", tag = "money", operation_id = "cancelLoan", params(("id" = LoanId, Path, description = "The resource's id.")), responses((status = 200, description = "The loan, canceled.", body = Loan), (status = 409, description = "Its advance was already paid out, or it ended.", body = holdfast_web::error::ErrorEnvelope)))]
async fn cancel(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |l: &Loan| changed(l));
    let loan = state
        .loans
        .cancel(&who, &loan_id(&id)?, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&loan))
}

/// An early repayment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"amount": 5000}))]
struct RepayBody {
    /// Minor units, 1 to what is outstanding; everything outstanding when not given.
    #[schema(minimum = 1, required = false)]
    amount: Option<i64>,
}

/// Repays a loan early from its merchant's available balance (`loan.repayment`, and
/// `loan.repaid` once nothing is outstanding).
#[utoipa::path(post, path = "/v1/loans/{id}/repay", tag = "money", operation_id = "repayLoan", params(("id" = LoanId, Path, description = "The resource's id.")), request_body = RepayBody, responses((status = 200, description = "The loan, after the repayment.", body = Loan), (status = 409, description = "It is not being repaid, or the merchant's available balance does not cover the amount.", body = holdfast_web::error::ErrorEnvelope), (status = 503, description = "Nothing was repaid: the loan changed at the same time (a settlement withheld). Send the same request again, after Retry-After.", body = holdfast_web::error::ErrorEnvelope)))]
async fn repay(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
    ApiJson(body): ApiJson<RepayBody>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |l: &Loan| changed(l));
    let loan = state
        .loans
        .repay(
            &who,
            &loan_id(&id)?,
            body.amount,
            answer.recorder().as_ref(),
        )
        .await?;
    Ok(answer.send(&loan))
}

/// Lists a loan's repayments, newest first: each settlement run's withholding and each early
/// repayment.
#[utoipa::path(get, path = "/v1/loans/{id}/repayments", tag = "money", operation_id = "listLoanRepayments", params(("id" = LoanId, Path, description = "The resource's id."), PageQuery), responses((status = 200, description = "A page of the loan's repayments, newest first.", body = ListView<LoanRepayment>)))]
async fn repayments(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let q: PageQuery = query(&req)?;
    let page = q.page(LoanRepaymentId::PREFIX)?;
    let found = state.loans.repayments(&who, &loan_id(&id)?, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, |r| r)))
}
