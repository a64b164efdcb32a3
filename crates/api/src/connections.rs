//! `/v1/processor-connections`: create, list, get (private keys, per mode). A connection is
//! where a plan's payments go: the test sandbox, or a processor account whose secrets are
//! sealed as they arrive and never shown again.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::ConnectionId;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::adyen::{NewAdyenAccount, Secret};
use holdfast_domain::payment::routing::{
    ProcessorAccount, ProcessorConnection, ProcessorKind, resource_name,
};
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::NewAccount;
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
