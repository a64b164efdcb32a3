//! `/v1/webhooks`: subscriptions (spec 2.3, 4.2, 4.3), the event catalogue, and each
//! subscription's delivery history (spec 2.4). Private keys only.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{NotificationId, WebhookId};
use holdfast_domain::ports::{Delivery, DeliveryState, Replacement};
use holdfast_domain::services::NewWebhook;
use holdfast_domain::webhook::{
    CustomHeader, Description, EndpointUrl, EventList, EventType, Subscription,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::ApiError;
use super::extract::{ApiJson, Caller, page_request};
use super::idempotency::{AnswerWithChange, changed, created};
use super::routes::Routes;
use super::views::{DeletedView, ListView, rfc3339};
use crate::state::AppState;

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/webhooks",
        Access::Private,
        web::route().to(create),
    );
    r.add(
        Method::GET,
        "/v1/webhooks",
        Access::Private,
        web::route().to(list),
    );
    r.add(
        Method::GET,
        "/v1/webhooks/event-types",
        Access::Private,
        web::route().to(event_types),
    );
    r.add(
        Method::GET,
        "/v1/webhooks/{id}",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::PATCH,
        "/v1/webhooks/{id}",
        Access::Private,
        web::route().to(replace),
    );
    r.add(
        Method::DELETE,
        "/v1/webhooks/{id}",
        Access::Private,
        web::route().to(delete),
    );
    r.add(
        Method::POST,
        "/v1/webhooks/{id}/rotate-secret",
        Access::Private,
        web::route().to(rotate_secret),
    );
    r.add(
        Method::GET,
        "/v1/webhooks/{id}/deliveries",
        Access::Private,
        web::route().to(deliveries),
    );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeaderBody {
    name: String,
    value: String,
}

/// The body of POST and PATCH: PATCH is a replacement (spec 4.2), so both read the same shape.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct WebhookBody {
    endpoint_url: Option<String>,
    events: Option<Vec<String>>,
    description: Option<String>,
    custom_header: Option<HeaderBody>,
    active: Option<bool>,
}

struct Fields {
    endpoint_url: EndpointUrl,
    events: EventList,
    description: Option<Description>,
    custom_header: Option<CustomHeader>,
}

fn fields(body: &WebhookBody) -> Result<Fields, ApiError> {
    let url = body
        .endpoint_url
        .as_deref()
        .ok_or_else(|| ApiError::invalid("endpointUrl", "is required"))?;
    let events = body
        .events
        .as_deref()
        .ok_or_else(|| ApiError::invalid("events", "is required"))?;
    Ok(Fields {
        endpoint_url: EndpointUrl::parse(url)?,
        events: EventList::parse(events)?,
        description: body
            .description
            .as_deref()
            .map(Description::parse)
            .transpose()?,
        custom_header: body
            .custom_header
            .as_ref()
            .map(|h| CustomHeader::parse(&h.name, &h.value))
            .transpose()?,
    })
}

/// The subscription as the API shows it; the signing secret is readable by private keys.
pub fn view(s: &Subscription) -> Value {
    json!({
        "id": s.id,
        "endpointUrl": s.endpoint_url.as_str(),
        "events": s.events.types(),
        "description": s.description.as_ref().map(Description::as_str),
        "customHeader": s.custom_header.as_ref().map(|h| json!({"name": h.name(), "value": h.value()})),
        "active": s.active,
        "consecutiveFailures": s.consecutive_failures,
        "secret": s.secret,
        "previousSecretExpiresOn": s.previous_secret.as_ref().map(|p| rfc3339(p.until)),
        "creatorId": s.creator,
        "mode": s.mode.as_str(),
        "createdOn": rfc3339(s.created_on),
        "updatedOn": rfc3339(s.updated_on),
    })
}

pub fn delivery_view(d: &Delivery) -> Value {
    let outcome = match d.state {
        DeliveryState::Pending => "pending",
        DeliveryState::Done(outcome) => outcome.as_str(),
    };
    json!({
        "id": d.id,
        "webhookId": d.webhook_id,
        "eventId": d.event_id,
        "eventType": d.event_type,
        "endpointUrl": d.endpoint_url,
        "outcome": outcome,
        "requestBody": d.request_body,
        "response": d.response,
        "requests": d.requests,
        "attemptedOn": d.attempted_on.map(rfc3339),
        "createdOn": rfc3339(d.created_on),
        "archived": d.archived,
        "resentFrom": d.resent_from.as_ref().map(NotificationId::as_str),
    })
}

fn webhook_id(raw: &str) -> Result<WebhookId, ApiError> {
    WebhookId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "webhook",
    })
}

async fn create(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<WebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let f = fields(&body)?;
    let answer = AnswerWithChange::new(&req, |s: &Subscription| created(&view(s)));
    let made = state
        .webhooks
        .create(
            &who,
            NewWebhook {
                endpoint_url: f.endpoint_url,
                events: f.events,
                description: f.description,
                custom_header: f.custom_header,
                active: body.active.unwrap_or(true),
            },
            answer.recorder().as_ref(),
        )
        .await?;
    Ok(answer.send(&made))
}

async fn list(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, WebhookId::PREFIX)?;
    let found = state.webhooks.list(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, |s| view(&s))))
}

async fn event_types() -> HttpResponse {
    let data: Vec<Value> = EventType::ALL
        .iter()
        .map(|t| json!({"type": t.as_str(), "description": t.description(), "resendable": t.is_transaction()}))
        .collect();
    HttpResponse::Ok().json(json!({ "data": data, "hasMore": false }))
}

async fn get(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let found = state.webhooks.get(&who, &webhook_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(view(&found)))
}

/// A new signing secret; the old one keeps signing beside it for the overlap (24 hours).
async fn rotate_secret(
    state: web::Data<AppState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    let answer = AnswerWithChange::new(&req, |s: &Subscription| changed(&view(s)));
    let rotated = state
        .webhooks
        .rotate_secret(&who, &id, answer.recorder().as_ref())
        .await?;
    Ok(answer.send(&rotated))
}

async fn replace(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
    ApiJson(body): ApiJson<WebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    let f = fields(&body)?;
    let replaced = state
        .webhooks
        .replace(
            &who,
            &id,
            Replacement {
                endpoint_url: f.endpoint_url,
                events: f.events,
                description: f.description,
                custom_header: f.custom_header,
                active: body.active,
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(view(&replaced)))
}

async fn delete(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    state.webhooks.delete(&who, &id).await?;
    Ok(HttpResponse::Ok().json(DeletedView {
        id: id.to_string(),
        deleted: true,
    }))
}

async fn deliveries(
    state: web::Data<AppState>,
    Caller(who): Caller,
    id: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, NotificationId::PREFIX)?;
    let found = state
        .webhooks
        .deliveries(&who, &webhook_id(&id)?, &page)
        .await?;
    Ok(HttpResponse::Ok().json(ListView::from_page(found, |d| delivery_view(&d))))
}
