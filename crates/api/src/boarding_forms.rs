//! `/v1/boarding-forms` (private key): a merchant's boarding form, and the link to the hosted
//! page where the merchant fills it in (docs/onboarding.md).

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::boarding::form::{BoardingForm, FormStatus};
use holdfast_domain::ids::{BoardingFormId, MerchantId};
use holdfast_domain::merchant::{Currency, MerchantDetails, MerchantName};
use holdfast_domain::metadata::Metadata;
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::{FormFor, IssuedForm};
use holdfast_domain::user::Email;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller, PageQuery, page_request};
use super::idempotency::{AnswerWithChange, changed, created};
use super::routes::Routes;
use super::views::{ListView, rfc3339, timestamp_or_null};
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/boarding-forms",
        Access::Private,
        web::route().to(create),
    );
    r.add(
        Method::GET,
        "/v1/boarding-forms",
        Access::Private,
        web::route().to(list),
    );
    r.add(
        Method::GET,
        "/v1/boarding-forms/{id}",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::POST,
        "/v1/boarding-forms/{id}/link",
        Access::Private,
        web::route().to(renew_link),
    );
}

/// A new merchant, boarded by the form.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NewMerchant {
    #[schema(schema_with = crate::openapi::fields::name, required = true)]
    name: Option<String>,
    /// USD when not given.
    #[schema(value_type = Option<Currency>)]
    currency: Option<String>,
    #[schema(schema_with = crate::openapi::fields::email)]
    email: Option<String>,
    #[schema(value_type = Option<Metadata>)]
    metadata: Option<BTreeMap<String, String>>,
}

/// Which merchant the form boards: `merchantId` of an existing one, or `merchant` to create
/// one with the form.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateBoardingForm {
    merchant_id: Option<String>,
    merchant: Option<NewMerchant>,
}

crate::openapi::bodies::described_by!(
    CreateBoardingForm,
    crate::openapi::bodies::create_boarding_form,
    NewMerchant
);

/// A boarding form as the API shows it: secrets only by their last four characters, and the
/// link only in the answers that issue one.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = BoardingForm)]
struct BoardingFormView<'a> {
    #[schema(value_type = BoardingFormId)]
    id: &'a BoardingFormId,
    #[schema(value_type = MerchantId)]
    merchant_id: &'a MerchantId,
    /// `open`, `submitted`, `approved`, `declined` or `needs_information`.
    status: FormStatus,
    /// The hosted page, for the merchant: shown when the link is issued, never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
    /// When the link stops working.
    #[schema(schema_with = timestamp)]
    expires_at: String,
    tax_id_last4: Option<&'a str>,
    bank_account_last4: Option<&'a str>,
    /// The fields underwriting asks about again.
    requested_fields: &'a [String],
    /// Underwriting's reason, when it declined or asked for more.
    reason: Option<&'a str>,
    /// Who submitted it, as they typed their name.
    submitted_by: Option<&'a str>,
    #[schema(schema_with = timestamp_or_null)]
    submitted_on: Option<String>,
    #[schema(schema_with = timestamp)]
    created_on: String,
    #[schema(schema_with = timestamp)]
    updated_on: String,
}

fn view<'a>(form: &'a BoardingForm, url: Option<&'a str>) -> BoardingFormView<'a> {
    let submission = form.submission.as_ref();
    BoardingFormView {
        id: &form.id,
        merchant_id: &form.merchant_id,
        status: form.status,
        url,
        expires_at: rfc3339(form.expires_on),
        tax_id_last4: form.tax_id.as_ref().map(|v| v.last4.as_str()),
        bank_account_last4: form.bank_account.as_ref().map(|v| v.last4.as_str()),
        requested_fields: &form.requested_fields,
        reason: form.reason.as_deref(),
        submitted_by: submission.map(|s| s.name.as_str()),
        submitted_on: submission.map(|s| rfc3339(s.on)),
        created_on: rfc3339(form.created_on),
        updated_on: rfc3339(form.updated_on),
    }
}

fn target(body: CreateBoardingForm) -> Result<FormFor, ApiError> {
    match (body.merchant_id, body.merchant) {
        (Some(id), None) => Ok(FormFor::Existing(MerchantId::parse("merchantId", &id)?)),
        (None, Some(m)) => {
            let name = m
                .name
                .ok_or_else(|| ApiError::invalid("merchant.name", "is required"))?;
            let currency = m.currency.as_deref().unwrap_or("USD");
            Ok(FormFor::New(MerchantDetails {
                name: MerchantName::parse(&name)
                    .map_err(|e| ApiError::invalid("merchant.name", e.message))?,
                currency: Currency::parse(currency)
                    .map_err(|e| ApiError::invalid("merchant.currency", e.message))?,
                email: m
                    .email
                    .as_deref()
                    .map(Email::parse)
                    .transpose()
                    .map_err(|e| ApiError::invalid("merchant.email", e.message))?,
                metadata: m
                    .metadata
                    .map(Metadata::parse)
                    .transpose()
                    .map_err(|e| ApiError::invalid("merchant.metadata", e.message))?
                    .unwrap_or_default(),
            }))
        }
        _ => Err(ApiError::invalid(
            "merchantId",
            "give merchantId of an existing merchant, or merchant to create one, not both",
        )),
    }
}

/// Creates a boarding form, and with `merchant` the merchant it boards.
#[utoipa::path(post, path = "/v1/boarding-forms", tag = "onboarding", operation_id = "createBoardingForm", request_body = CreateBoardingForm, responses((status = 201, description = "The form, with its link (shown this once).", body = BoardingFormView), (status = 400, description = "A field is refused.", body = ErrorEnvelope)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateBoardingForm>,
) -> Result<HttpResponse, ApiError> {
    let target = target(body)?;
    // The stored answer a replay gets has no link: the link's secret is kept nowhere.
    let answer = AnswerWithChange::new(&req, |issued: &IssuedForm| {
        created(&view(&issued.form, None))
    });
    let issued = state
        .boarding
        .create(&who, target, answer.recorder().as_ref())
        .await?;
    Ok(answer.send_answer(created(&view(&issued.form, Some(&issued.url)))))
}

/// Lists boarding forms, newest first.
#[utoipa::path(get, path = "/v1/boarding-forms", tag = "onboarding", operation_id = "listBoardingForms", params(PageQuery), responses((status = 200, description = "A page of forms, newest first.", body = ListView<BoardingFormView>)))]
async fn list(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, BoardingFormId::PREFIX)?;
    let found = state.boarding.list(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::of(&found, |f| view(f, None))))
}

fn form_id(raw: &str) -> Result<BoardingFormId, ApiError> {
    BoardingFormId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "boarding form",
    })
}

/// Reads a boarding form (never its link).
#[utoipa::path(get, path = "/v1/boarding-forms/{id}", tag = "onboarding", operation_id = "getBoardingForm", params(("id" = BoardingFormId, Path, description = "The resource's id.")), responses((status = 200, description = "The form.", body = BoardingFormView)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let form = state.boarding.get(&who, &form_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(view(&form, None)))
}

/// Issues a fresh link, lasting the full lifetime again; the previous link stops working.
#[utoipa::path(post, path = "/v1/boarding-forms/{id}/link", tag = "onboarding", operation_id = "renewBoardingFormLink", params(("id" = BoardingFormId, Path, description = "The resource's id.")), responses((status = 200, description = "The form with its new link (shown this once).", body = BoardingFormView)))]
async fn renew_link(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // As at creation: the link goes to the client once and into no stored answer.
    let answer = AnswerWithChange::new(&req, |issued: &IssuedForm| {
        changed(&view(&issued.form, None))
    });
    let issued = state
        .boarding
        .renew_link(&who, &form_id(&id)?, answer.recorder().as_ref())
        .await?;
    Ok(answer.send_answer(changed(&view(&issued.form, Some(&issued.url)))))
}
