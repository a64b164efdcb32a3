//! `/v1/plans`: create, list, get (private keys, per mode).
//! A plan routes by card brand to connections of the same platform and mode, falls back in
//! order when a processor is unavailable, and prices payments (`basisPoints` + `fixed`).

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{ConnectionId, PlanId};
use holdfast_domain::ledger::SettlementDelay;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::brand::CardBrand;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::routing::{Plan, fallbacks_within_bound, resource_name};
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::{FALLBACK_FIELDS, NO_SUCH_CONNECTION, NewPlan, brand_route_field};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller, PageQuery, page_request};
use super::idempotency::{AnswerWithChange, created};
use super::routes::Routes;
use super::views::{ListView, rfc3339};
use crate::ApiState;
use holdfast_web::error::ApiError;

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/plans",
        Access::Private,
        web::route().to(create_plan),
    );
    r.add(
        Method::GET,
        "/v1/plans",
        Access::Private,
        web::route().to(list_plans),
    );
    r.add(
        Method::GET,
        "/v1/plans/{id}",
        Access::Private,
        web::route().to(get_plan),
    );
}

/// The fee a plan charges per payment: `basisPoints` of the amount plus `fixed` minor units.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = Fee)]
struct FeeBody {
    #[schema(schema_with = crate::openapi::fields::basis_points)]
    basis_points: i64,
    #[schema(schema_with = crate::openapi::fields::fixed_fee)]
    fixed: i64,
}

/// A plan: how a merchant's payments are priced and routed.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = Plan)]
struct PlanView {
    #[schema(value_type = PlanId)]
    id: String,
    name: String,
    #[schema(value_type = Mode)]
    mode: &'static str,
    fee: FeeBody,
    #[schema(value_type = ConnectionId)]
    default_connection_id: String,
    /// Card brand to connection: payments of that brand go there first.
    #[schema(value_type = BTreeMap<String, ConnectionId>)]
    brand_routes: BTreeMap<&'static str, String>,
    /// Connections tried in order when the first is unavailable.
    #[schema(value_type = Vec<ConnectionId>)]
    fallbacks: Vec<String>,
    /// Whether merchants without a plan of their own use it.
    default: bool,
    /// Days its charges stay pending before they become available to pay out.
    #[schema(minimum = 0, maximum = 30)]
    settlement_delay_days: u8,
    #[schema(schema_with = timestamp)]
    created_on: String,
}

impl From<Plan> for PlanView {
    fn from(p: Plan) -> Self {
        Self {
            id: p.id.to_string(),
            name: p.name,
            mode: p.mode.as_str(),
            fee: FeeBody {
                basis_points: i64::from(p.fee.basis_points()),
                fixed: p.fee.fixed(),
            },
            default_connection_id: p.default_connection.to_string(),
            brand_routes: p
                .brand_routes
                .into_iter()
                .map(|(b, c)| (b.as_str(), c.to_string()))
                .collect(),
            fallbacks: p.fallbacks.into_iter().map(|c| c.to_string()).collect(),
            default: p.is_default,
            settlement_delay_days: p.settlement_delay.days(),
            created_on: rfc3339(p.created_on),
        }
    }
}

/// A new plan.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"name": "Gold", "fee": {"basisPoints": 250, "fixed": 30}, "defaultConnectionId": "midCon_01JDQ8Y6M2Z4R7V9T3B5N8K1XW"}))]
struct CreatePlan {
    #[schema(schema_with = crate::openapi::fields::name)]
    name: String,
    fee: FeeBody,
    /// A connection of the key's platform and mode (not a sandbox one in live mode).
    #[schema(value_type = ConnectionId)]
    default_connection_id: String,
    /// A connection per card brand, for the brands routed elsewhere than the default.
    #[serde(default)]
    #[schema(schema_with = crate::openapi::fields::brand_routes, required = false)]
    brand_routes: BTreeMap<String, String>,
    /// Up to 4 connections tried in order when the first cannot answer.
    #[serde(default)]
    #[schema(value_type = Vec<ConnectionId>, max_items = 4, required = false)]
    fallbacks: Vec<String>,
    /// Whether it prices and routes the merchants that name no plan; one per platform and mode
    /// (a second is refused with 409).
    #[serde(default)]
    #[schema(required = false)]
    default: bool,
    /// Days a charge stays pending before it becomes available to pay out (docs/money.md):
    /// 0 to 30, 2 when not given.
    #[schema(minimum = 0, maximum = 30, default = 2, required = false)]
    settlement_delay_days: Option<i64>,
}

/// A connection id as sent: one that cannot be an id names no connection, in `field`'s words.
fn connection_id(field: &str, raw: &str) -> Result<ConnectionId, ApiError> {
    ConnectionId::parse("connection", raw).map_err(|_| ApiError::invalid(field, NO_SUCH_CONNECTION))
}

/// Creates a plan: its fee, its default connection, brand routes and fallbacks.
#[utoipa::path(post, path = "/v1/plans", tag = "routing", operation_id = "createPlan", request_body = CreatePlan, responses((status = 201, description = "The plan, created.", body = PlanView)))]
async fn create_plan(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreatePlan>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |p: &Plan| created(&PlanView::from(p.clone())));
    let name = resource_name(&body.name)?;
    let fee = FeeRule::new(body.fee.basis_points, body.fee.fixed)?;
    let default_connection = connection_id("defaultConnectionId", &body.default_connection_id)?;
    let settlement_delay = body
        .settlement_delay_days
        .map_or(Ok(SettlementDelay::DEFAULT), |days| {
            SettlementDelay::new("settlementDelayDays", days)
        })?;
    let mut brand_routes = Vec::new();
    for (brand, connection) in &body.brand_routes {
        // The key is the client's; it is repeated only once it is known to be a brand of ours.
        let brand = brand
            .parse::<CardBrand>()
            .map_err(|_| ApiError::invalid("brandRoutes", "has a key that is not a card brand"))?;
        brand_routes.push((brand, connection_id(brand_route_field(brand), connection)?));
    }
    fallbacks_within_bound(body.fallbacks.len())?;
    let fallbacks = FALLBACK_FIELDS
        .iter()
        .zip(&body.fallbacks)
        .map(|(field, connection)| connection_id(field, connection))
        .collect::<Result<Vec<_>, _>>()?;
    let new = NewPlan {
        name,
        fee,
        default_connection,
        brand_routes,
        fallbacks,
        is_default: body.default,
        settlement_delay,
    };
    let plan = state
        .routing
        .create_plan(&who, new, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&plan))
}

/// Lists plans, newest first.
#[utoipa::path(get, path = "/v1/plans", tag = "routing", operation_id = "listPlans", params(PageQuery), responses((status = 200, description = "A page of plans, newest first.", body = ListView<PlanView>)))]
async fn list_plans(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, PlanId::PREFIX)?;
    let found = state.routing.plans(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, PlanView::from)))
}

/// Reads a plan.
#[utoipa::path(get, path = "/v1/plans/{id}", tag = "routing", operation_id = "getPlan", params(("id" = PlanId, Path, description = "The resource's id.")), responses((status = 200, description = "The plan.", body = PlanView)))]
async fn get_plan(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = PlanId::parse("id", &id).map_err(|_| ApiError::NotFound { resource: "plan" })?;
    let plan = state.routing.plan(&who, &id).await?;
    Ok(HttpResponse::Ok().json(PlanView::from(plan)))
}
