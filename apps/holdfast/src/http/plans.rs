//! `/v1/processor-connections` and `/v1/plans`: create, list, get (private keys, per mode).
//! A plan routes by card brand to connections of the same platform and mode, falls back in
//! order when a processor is unavailable, and prices payments (`basisPoints` + `fixed`).

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{ConnectionId, PlanId};
use holdfast_domain::payment::brand::CardBrand;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::routing::{
    Plan, ProcessorConnection, ProcessorKind, fallbacks_within_bound, resource_name,
};
use holdfast_domain::services::{FALLBACK_FIELDS, NO_SUCH_CONNECTION, NewPlan, brand_route_field};
use serde::{Deserialize, Serialize};

use super::error::ApiError;
use super::extract::{ApiJson, Caller, page_request};
use super::idempotency::{AnswerWithChange, created};
use super::routes::Routes;
use super::views::{ListView, rfc3339};
use crate::state::AppState;

pub fn routes(r: &mut Routes) {
    let c = "/v1/processor-connections";
    r.add(
        Method::POST,
        c,
        Access::Private,
        web::route().to(create_connection),
    );
    r.add(
        Method::GET,
        c,
        Access::Private,
        web::route().to(list_connections),
    );
    r.add(
        Method::GET,
        "/v1/processor-connections/{id}",
        Access::Private,
        web::route().to(get_connection),
    );
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

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ConnectionView {
    id: String,
    name: String,
    kind: &'static str,
    mode: &'static str,
    created_on: String,
}

impl From<ProcessorConnection> for ConnectionView {
    fn from(c: ProcessorConnection) -> Self {
        Self {
            id: c.id.to_string(),
            name: c.name,
            kind: c.kind.as_str(),
            mode: c.mode.as_str(),
            created_on: rfc3339(c.created_on),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateConnection {
    name: String,
    kind: String,
}

async fn create_connection(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateConnection>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |c: &ProcessorConnection| {
        created(&ConnectionView::from(c.clone()))
    });
    let name = resource_name(&body.name)?;
    let kind = body
        .kind
        .parse::<ProcessorKind>()
        .map_err(|_| ApiError::invalid("kind", "must be sandbox"))?;
    let connection = state
        .routing
        .create_connection(&who, name, kind, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&connection))
}

async fn list_connections(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, ConnectionId::PREFIX)?;
    let found = state.routing.connections(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, ConnectionView::from)))
}

async fn get_connection(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    // A malformed id names nothing: 404, exactly like an unknown one.
    let id = ConnectionId::parse("id", &id).map_err(|_| ApiError::NotFound {
        resource: "processor connection",
    })?;
    let connection = state.routing.connection(&who, &id).await?;
    Ok(HttpResponse::Ok().json(ConnectionView::from(connection)))
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FeeBody {
    basis_points: i64,
    fixed: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct PlanView {
    id: String,
    name: String,
    mode: &'static str,
    fee: FeeBody,
    default_connection_id: String,
    brand_routes: BTreeMap<&'static str, String>,
    fallbacks: Vec<String>,
    default: bool,
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
            created_on: rfc3339(p.created_on),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreatePlan {
    name: String,
    fee: FeeBody,
    default_connection_id: String,
    #[serde(default)]
    brand_routes: BTreeMap<String, String>,
    #[serde(default)]
    fallbacks: Vec<String>,
    #[serde(default)]
    default: bool,
}

/// A connection id as sent: one that cannot be an id names no connection, in `field`'s words.
fn connection_id(field: &str, raw: &str) -> Result<ConnectionId, ApiError> {
    ConnectionId::parse("connection", raw).map_err(|_| ApiError::invalid(field, NO_SUCH_CONNECTION))
}

async fn create_plan(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreatePlan>,
) -> Result<HttpResponse, ApiError> {
    let answer = AnswerWithChange::new(&req, |p: &Plan| created(&PlanView::from(p.clone())));
    let name = resource_name(&body.name)?;
    let fee = FeeRule::new(body.fee.basis_points, body.fee.fixed)?;
    let default_connection = connection_id("defaultConnectionId", &body.default_connection_id)?;
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
    };
    let plan = state
        .routing
        .create_plan(&who, new, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&plan))
}

async fn list_plans(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, PlanId::PREFIX)?;
    let found = state.routing.plans(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, PlanView::from)))
}

async fn get_plan(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = PlanId::parse("id", &id).map_err(|_| ApiError::NotFound { resource: "plan" })?;
    let plan = state.routing.plan(&who, &id).await?;
    Ok(HttpResponse::Ok().json(PlanView::from(plan)))
}
