//! `/v1/processor-connections` and `/v1/plans`: create, list, get (private keys, per mode).
//! A plan routes by card brand to connections of the same platform and mode, falls back in
//! order when a processor is unavailable, and prices payments (`basisPoints` + `fixed`).

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{ConnectionId, PlanId};
use holdfast_domain::ledger::SettlementDelay;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::adyen::{NewAdyenAccount, Secret};
use holdfast_domain::payment::brand::CardBrand;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::routing::{
    Plan, ProcessorAccount, ProcessorConnection, ProcessorKind, fallbacks_within_bound,
    resource_name,
};
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::{
    FALLBACK_FIELDS, NO_SUCH_CONNECTION, NewAccount, NewPlan, brand_route_field,
};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller, PageQuery, page_request};
use super::idempotency::{AnswerWithChange, created};
use super::routes::Routes;
use super::views::{ListView, rfc3339};
use crate::ApiState;
use holdfast_web::error::ApiError;

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

/// A processor connection: where a plan's payments go.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ProcessorConnection)]
struct ConnectionView {
    #[schema(value_type = ConnectionId)]
    id: String,
    name: String,
    #[schema(value_type = ProcessorKind)]
    kind: &'static str,
    #[schema(value_type = Mode)]
    mode: &'static str,
    /// The Adyen account, for a connection of kind `adyen`: its secrets by their last four
    /// characters only.
    #[serde(skip_serializing_if = "Option::is_none")]
    adyen: Option<AdyenView>,
    #[schema(schema_with = timestamp)]
    created_on: String,
}

/// An Adyen account as shown: never a secret, only the last four characters of each.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = AdyenAccount)]
struct AdyenView {
    merchant_account: String,
    checkout_url: String,
    api_key_last4: String,
    hmac_key_last4: String,
    notification_username: String,
    /// Where to point the account's standard notification webhook in Adyen's Customer Area,
    /// below Holdfast's public URL.
    notification_path: String,
}

impl From<ProcessorConnection> for ConnectionView {
    fn from(c: ProcessorConnection) -> Self {
        let adyen = match &c.account {
            ProcessorAccount::Sandbox => None,
            ProcessorAccount::Adyen(account) => Some(AdyenView {
                merchant_account: account.merchant_account.clone(),
                checkout_url: account.checkout_url.clone(),
                api_key_last4: account.api_key.last4.clone(),
                hmac_key_last4: account.hmac_key.last4.clone(),
                notification_username: account.notification_username.clone(),
                notification_path: holdfast_web::paths::adyen_notifications(c.id.as_str()),
            }),
        };
        Self {
            kind: c.kind().as_str(),
            id: c.id.to_string(),
            name: c.name,
            mode: c.mode.as_str(),
            adyen,
            created_on: rfc3339(c.created_on),
        }
    }
}

/// A new processor connection; its schema is `openapi::bodies::create_connection`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CreateConnection {
    name: String,
    kind: String,
    /// Required for kind `adyen`, refused for any other.
    adyen: Option<NewAdyenBody>,
}

crate::openapi::bodies::described_by!(
    CreateConnection,
    crate::openapi::bodies::create_connection,
    NewAdyenBody
);

/// An Adyen account to connect. The secrets are sealed as they arrive and never shown again.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = NewAdyenAccount)]
struct NewAdyenBody {
    #[schema(schema_with = crate::openapi::fields::merchant_account)]
    merchant_account: String,
    #[schema(schema_with = crate::openapi::fields::checkout_url)]
    checkout_url: Option<String>,
    #[schema(schema_with = crate::openapi::fields::api_key, required = true)]
    api_key: SecretBody,
    #[schema(schema_with = crate::openapi::fields::hmac_key, required = true)]
    hmac_key: SecretBody,
    #[schema(schema_with = crate::openapi::fields::notification_username)]
    notification_username: String,
    #[schema(schema_with = crate::openapi::fields::notification_password, required = true)]
    notification_password: SecretBody,
}

/// A secret in a request body: `Debug` never shows it.
#[derive(Deserialize)]
#[serde(transparent)]
struct SecretBody(String);

impl std::fmt::Debug for SecretBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretBody(redacted)")
    }
}

impl From<NewAdyenBody> for NewAdyenAccount {
    fn from(body: NewAdyenBody) -> Self {
        Self {
            merchant_account: body.merchant_account,
            checkout_url: body.checkout_url,
            api_key: Secret::new(body.api_key.0),
            hmac_key: Secret::new(body.hmac_key.0),
            notification_username: body.notification_username,
            notification_password: Secret::new(body.notification_password.0),
        }
    }
}

/// Creates a processor connection.
#[utoipa::path(post, path = "/v1/processor-connections", tag = "routing", operation_id = "createProcessorConnection", request_body = CreateConnection, responses((status = 201, description = "The connection, created.", body = ConnectionView)))]
async fn create_connection(
    state: web::Data<ApiState>,
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
        .map_err(|_| ApiError::invalid("kind", "must be sandbox or adyen"))?;
    let account = match (kind, body.adyen) {
        (ProcessorKind::Sandbox, None) => NewAccount::Sandbox,
        (ProcessorKind::Adyen, Some(adyen)) => NewAccount::Adyen(Box::new(adyen.into())),
        (ProcessorKind::Adyen, None) => {
            return Err(ApiError::invalid("adyen", "is required for kind adyen"));
        }
        (ProcessorKind::Sandbox, Some(_)) => {
            return Err(ApiError::invalid("adyen", "is only for kind adyen"));
        }
    };
    let connection = state
        .routing
        .create_connection(&who, name, account, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&connection))
}

/// Lists processor connections, newest first.
#[utoipa::path(get, path = "/v1/processor-connections", tag = "routing", operation_id = "listProcessorConnections", params(PageQuery), responses((status = 200, description = "A page of connections, newest first.", body = ListView<ConnectionView>)))]
async fn list_connections(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, ConnectionId::PREFIX)?;
    let found = state.routing.connections(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, ConnectionView::from)))
}

/// Reads a processor connection.
#[utoipa::path(get, path = "/v1/processor-connections/{id}", tag = "routing", operation_id = "getProcessorConnection", params(("id" = ConnectionId, Path, description = "The resource's id.")), responses((status = 200, description = "The connection.", body = ConnectionView)))]
async fn get_connection(
    state: web::Data<ApiState>,
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
