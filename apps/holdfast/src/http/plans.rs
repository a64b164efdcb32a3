//! `/v1/processor-connections` and `/v1/plans`: create, list, get (private keys, per mode).
//! A plan routes by card brand to connections of the same platform and mode, falls back in
//! order when a processor is unavailable, and prices payments (`basisPoints` + `fixed`).

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::{Access, Principal};
use holdfast_domain::idempotency::reply_for;
use holdfast_domain::ids::{ConnectionId, PlanId};
use holdfast_domain::payment::brand::CardBrand;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::routing::{
    MAX_FALLBACKS, Plan, ProcessorConnection, ProcessorKind, resource_name,
};
use holdfast_domain::ports::{Clock, Ids, StoreError};
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

fn store_error(e: StoreError) -> ApiError {
    match e {
        StoreError::Duplicate("plans.default") => ApiError::Conflict {
            param: "default".into(),
            message: "this platform already has a default plan in this mode".into(),
        },
        other => ApiError::Internal(other.to_string()),
    }
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
    let connection = ProcessorConnection {
        id: ConnectionId::from_suffix(&state.ids.next_id()),
        platform_id: who.platform_id.clone(),
        mode: who.mode,
        name: resource_name(&body.name)?,
        kind: body
            .kind
            .parse::<ProcessorKind>()
            .map_err(|_| ApiError::invalid("kind", "must be sandbox"))?,
        created_on: state.clock.now(),
    };
    if !connection.kind.serves(who.mode) {
        return Err(ApiError::invalid(
            "kind",
            "a sandbox connection takes test payments only: live mode needs a real processor",
        ));
    }
    state
        .payment_store
        .insert_connection(
            &connection,
            reply_for(answer.recorder().as_ref(), &connection),
        )
        .await
        .map_err(store_error)?;
    Ok(answer.send(&connection))
}

async fn list_connections(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, ConnectionId::PREFIX)?;
    let found = state
        .payment_store
        .list_connections(&who.platform_id, who.mode, &page)
        .await
        .map_err(store_error)?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, ConnectionView::from)))
}

async fn get_connection(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound {
        resource: "processor connection",
    };
    let id = ConnectionId::parse("id", &id).map_err(|_| not_found())?;
    let connection = state
        .payment_store
        .get_connection(&who.platform_id, who.mode, &id)
        .await
        .map_err(store_error)?
        .ok_or_else(not_found)?;
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

/// A connection id that must name a connection of the caller's platform and mode, of a kind
/// that takes payments in that mode (a live plan never routes to the sandbox).
async fn own_connection(
    state: &AppState,
    who: &Principal,
    field: String,
    raw: &str,
) -> Result<ConnectionId, ApiError> {
    let unknown = || ApiError::invalid(field.clone(), "no such processor connection in this mode");
    let id = ConnectionId::parse("connection", raw).map_err(|_| unknown())?;
    let connection = state
        .payment_store
        .get_connection(&who.platform_id, who.mode, &id)
        .await
        .map_err(store_error)?
        .ok_or_else(unknown)?;
    if !connection.kind.serves(who.mode) {
        return Err(ApiError::invalid(
            field,
            "is a sandbox connection, which takes test payments only",
        ));
    }
    Ok(connection.id)
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
    let default_connection = own_connection(
        &state,
        &who,
        "defaultConnectionId".into(),
        &body.default_connection_id,
    )
    .await?;
    let mut brand_routes = Vec::new();
    for (brand, connection) in &body.brand_routes {
        // The key is the client's; it is repeated only once it is known to be a brand of ours.
        let parsed = brand
            .parse::<CardBrand>()
            .map_err(|_| ApiError::invalid("brandRoutes", "has a key that is not a card brand"))?;
        let field = format!("brandRoutes.{}", parsed.as_str());
        brand_routes.push((
            parsed,
            own_connection(&state, &who, field, connection).await?,
        ));
    }
    if body.fallbacks.len() > MAX_FALLBACKS {
        return Err(ApiError::invalid(
            "fallbacks",
            format!("may list at most {MAX_FALLBACKS} connections"),
        ));
    }
    let mut fallbacks = Vec::new();
    for (i, connection) in body.fallbacks.iter().enumerate() {
        fallbacks.push(own_connection(&state, &who, format!("fallbacks.{i}"), connection).await?);
    }
    let plan = Plan {
        id: PlanId::from_suffix(&state.ids.next_id()),
        platform_id: who.platform_id.clone(),
        mode: who.mode,
        name,
        fee,
        default_connection,
        brand_routes,
        fallbacks,
        is_default: body.default,
        created_on: state.clock.now(),
    };
    state
        .payment_store
        .insert_plan(&plan, reply_for(answer.recorder().as_ref(), &plan))
        .await
        .map_err(store_error)?;
    Ok(answer.send(&plan))
}

async fn list_plans(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, PlanId::PREFIX)?;
    let found = state
        .payment_store
        .list_plans(&who.platform_id, who.mode, &page)
        .await
        .map_err(store_error)?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, PlanView::from)))
}

async fn get_plan(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let not_found = || ApiError::NotFound { resource: "plan" };
    let id = PlanId::parse("id", &id).map_err(|_| not_found())?;
    let plan = state
        .payment_store
        .get_plan(&who.platform_id, who.mode, &id)
        .await
        .map_err(store_error)?
        .ok_or_else(not_found)?;
    Ok(HttpResponse::Ok().json(PlanView::from(plan)))
}
