//! `/v1/merchants`: create, list, get, update, delete (private keys, scoped by mode).

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{MerchantId, PlanId};
use holdfast_domain::merchant::MerchantJson;
use holdfast_domain::merchant::{Currency, Merchant, MerchantDetails, MerchantName, MerchantPatch};
use holdfast_domain::metadata::Metadata;
use holdfast_domain::services::NO_SUCH_PLAN;
use holdfast_domain::user::Email;
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller, Field, PageQuery, page_request};
use super::idempotency::{AnswerWithChange, created};
use super::routes::Routes;
use super::views::{DeletedView, ListView};
use crate::ApiState;
use holdfast_web::error::ApiError;

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/merchants",
        Access::Private,
        web::route().to(create),
    );
    r.add(
        Method::GET,
        "/v1/merchants",
        Access::Private,
        web::route().to(list),
    );
    r.add(
        Method::GET,
        "/v1/merchants/{id}",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::PATCH,
        "/v1/merchants/{id}",
        Access::Private,
        web::route().to(update),
    );
    r.add(
        Method::DELETE,
        "/v1/merchants/{id}",
        Access::Private,
        web::route().to(delete),
    );
}

/// A new merchant: its name, and optionally its currency (USD if not given), email and
/// metadata.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"name": "Corner Bakery", "currency": "USD", "email": "owner@bakery.example", "metadata": {"accountManager": "dana"}}))]
struct CreateMerchant {
    #[schema(schema_with = crate::openapi::fields::name)]
    name: String,
    /// USD when not given.
    #[schema(value_type = Option<Currency>)]
    currency: Option<String>,
    #[schema(schema_with = crate::openapi::fields::email)]
    email: Option<String>,
    #[schema(value_type = Option<Metadata>)]
    metadata: Option<BTreeMap<String, String>>,
}

/// The fields to change; absent ones stay as they are.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct UpdateMerchant {
    #[serde(default)]
    #[schema(schema_with = crate::openapi::fields::name, required = false)]
    name: Field<String>,
    #[serde(default)]
    #[schema(value_type = Currency, required = false)]
    currency: Field<String>,
    /// `null` removes it.
    #[serde(default)]
    #[schema(schema_with = crate::openapi::fields::email_or_null, required = false)]
    email: Field<String>,
    /// The plan that prices and routes the merchant's payments; `null` returns it to the
    /// platform's default plan.
    #[serde(default)]
    #[schema(value_type = Option<PlanId>, required = false)]
    plan_id: Field<String>,
    /// Replaces the merchant's pairs (they are not merged); `{}` or `null` removes them all.
    #[serde(default)]
    #[schema(value_type = Option<Metadata>, required = false)]
    metadata: Field<BTreeMap<String, String>>,
}

/// Creates a merchant in the key's mode.
#[utoipa::path(post, path = "/v1/merchants", tag = "merchants", operation_id = "createMerchant", request_body = CreateMerchant, responses((status = 201, description = "The merchant, created.", body = MerchantJson)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateMerchant>,
) -> Result<HttpResponse, ApiError> {
    let details = MerchantDetails {
        name: MerchantName::parse(&body.name)?,
        currency: body
            .currency
            .as_deref()
            .map_or(Ok(Currency::USD), Currency::parse)?,
        email: body.email.as_deref().map(Email::parse).transpose()?,
        metadata: body
            .metadata
            .map(Metadata::parse)
            .transpose()?
            .unwrap_or_default(),
    };
    let answer = AnswerWithChange::new(&req, |m: &Merchant| created(m));
    let merchant = state
        .merchants
        .create(&who, details, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&merchant))
}

/// Lists merchants, newest first.
#[utoipa::path(get, path = "/v1/merchants", tag = "merchants", operation_id = "listMerchants", params(PageQuery), responses((status = 200, description = "A page of merchants, newest first.", body = ListView<MerchantJson>)))]
async fn list(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, MerchantId::PREFIX)?;
    let merchants = state.merchants.list(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(merchants, |m| m)))
}

/// A malformed id cannot name a merchant: 404, exactly like an unknown one.
fn merchant_id(raw: &str) -> Result<MerchantId, ApiError> {
    MerchantId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "merchant",
    })
}

/// Reads a merchant.
#[utoipa::path(get, path = "/v1/merchants/{id}", tag = "merchants", operation_id = "getMerchant", params(("id" = MerchantId, Path, description = "The resource's id.")), responses((status = 200, description = "The merchant.", body = MerchantJson)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let merchant = state.merchants.get(&who, &merchant_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(merchant))
}

/// Changes a merchant's name, currency, email, plan or metadata.
#[utoipa::path(patch, path = "/v1/merchants/{id}", tag = "merchants", operation_id = "updateMerchant", params(("id" = MerchantId, Path, description = "The resource's id.")), request_body = UpdateMerchant, responses((status = 200, description = "The merchant as it now is.", body = MerchantJson)))]
async fn update(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
    ApiJson(body): ApiJson<UpdateMerchant>,
) -> Result<HttpResponse, ApiError> {
    let required = |field: &'static str| ApiError::invalid(field, "may not be null");
    let patch = MerchantPatch {
        name: match body.name {
            Field::Absent => None,
            Field::Null => return Err(required("name")),
            Field::Value(name) => Some(MerchantName::parse(&name)?),
        },
        currency: match body.currency {
            Field::Absent => None,
            Field::Null => return Err(required("currency")),
            Field::Value(c) => Some(Currency::parse(&c)?),
        },
        email: match body.email {
            Field::Absent => None,
            Field::Null => Some(None),
            Field::Value(e) => Some(Some(Email::parse(&e)?)),
        },
        plan_id: match body.plan_id {
            Field::Absent => None,
            Field::Null => Some(None),
            Field::Value(raw) => Some(Some(
                // A malformed id names no plan: the same refusal as an unknown one.
                PlanId::parse("planId", &raw)
                    .map_err(|_| ApiError::invalid("planId", NO_SUCH_PLAN))?,
            )),
        },
        metadata: match body.metadata {
            Field::Absent => None,
            Field::Null => Some(Metadata::default()),
            Field::Value(pairs) => Some(Metadata::parse(pairs)?),
        },
    };
    let merchant = state
        .merchants
        .update(&who, &merchant_id(&id)?, patch)
        .await?;
    Ok(HttpResponse::Ok().json(merchant))
}

/// Deletes a merchant.
#[utoipa::path(delete, path = "/v1/merchants/{id}", tag = "merchants", operation_id = "deleteMerchant", params(("id" = MerchantId, Path, description = "The resource's id.")), responses((status = 200, description = "The merchant is deleted.", body = DeletedView)))]
async fn delete(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = merchant_id(&id)?;
    state.merchants.delete(&who, &id).await?;
    Ok(HttpResponse::Ok().json(DeletedView {
        id: id.to_string(),
        deleted: true,
    }))
}
