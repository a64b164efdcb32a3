//! `/v1/webhooks`: subscriptions (spec 2.3, 4.2, 4.3), the event catalogue, and each
//! subscription's delivery history (spec 2.4). Private keys only.

use std::collections::BTreeMap;

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{NotificationId, WebhookId};
use holdfast_domain::metadata::Metadata;
use holdfast_domain::ports::{Replacement, TestEventError};
use holdfast_domain::services::NewWebhook;
use holdfast_domain::webhook::{
    CustomHeader, Description, EndpointUrl, EventList, EventType, Subscription,
};
use serde::Deserialize;
use utoipa::ToSchema;

use super::extract::{Acting, ApiJson, Caller, PageQuery, page_request};
use super::idempotency::{AnswerWithChange, changed, created};
use super::routes::Routes;
use super::views::{DeletedView, ListView};
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub use holdfast_web::views::webhooks::{
    DeliveryView, EventTypeView, WebhookView, delivery_view, stored_view, view,
};

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
        Method::POST,
        "/v1/webhooks/{id}/test",
        Access::Private,
        web::route().to(send_test),
    );
    r.add(
        Method::GET,
        "/v1/webhooks/{id}/deliveries",
        Access::Private,
        web::route().to(deliveries),
    );
}

/// A header sent with every notification.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct HeaderBody {
    #[schema(schema_with = crate::openapi::fields::header_name)]
    name: String,
    #[schema(schema_with = crate::openapi::fields::header_value)]
    value: String,
}

/// The body of POST and PATCH: PATCH is a replacement (spec 4.2), so both read the same shape.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"endpointUrl": "https://example.com/hooks", "events": ["transaction.created"], "description": "Orders"}))]
struct WebhookBody {
    /// The receiver's URL; see docs/webhooks.md for what is accepted.
    #[schema(schema_with = crate::openapi::fields::endpoint_url, required = true)]
    endpoint_url: Option<String>,
    /// The event types to send; at least one (a repeated one counts once).
    #[schema(value_type = Vec<EventType>, min_items = 1, required = true)]
    events: Option<Vec<String>>,
    /// Left out (or `null`), there is none; a PATCH without it removes it.
    #[schema(schema_with = crate::openapi::fields::description)]
    description: Option<String>,
    /// Left out (or `null`), there is none; a PATCH without it removes it.
    custom_header: Option<HeaderBody>,
    /// `true` when created without it; a PATCH without it leaves it as it is.
    active: Option<bool>,
    /// Left out (or `null`), there are none; a PATCH replaces them all (without it, removes
    /// them).
    #[schema(value_type = Option<Metadata>)]
    metadata: Option<BTreeMap<String, String>>,
}

struct Fields {
    endpoint_url: EndpointUrl,
    events: EventList,
    description: Option<Description>,
    custom_header: Option<CustomHeader>,
    metadata: Metadata,
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
        metadata: body
            .metadata
            .clone()
            .map(Metadata::parse)
            .transpose()?
            .unwrap_or_default(),
    })
}

fn webhook_id(raw: &str) -> Result<WebhookId, ApiError> {
    WebhookId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "webhook",
    })
}

/// Creates a webhook subscription.
#[utoipa::path(post, path = "/v1/webhooks", tag = "webhooks", operation_id = "createWebhook", request_body = WebhookBody, responses((status = 201, description = "The subscription, created.", body = WebhookView)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    Acting(actor): Acting,
    req: HttpRequest,
    ApiJson(body): ApiJson<WebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let f = fields(&body)?;
    // The stored answer a replay gets has no secret; this answer shows it.
    let answer = AnswerWithChange::new(&req, |s: &Subscription| created(&stored_view(s)));
    let made = state
        .webhooks
        .create(
            &who,
            &actor,
            NewWebhook {
                endpoint_url: f.endpoint_url,
                events: f.events,
                description: f.description,
                custom_header: f.custom_header,
                active: body.active.unwrap_or(true),
                metadata: f.metadata,
            },
            answer.recorder().as_ref(),
        )
        .await?;
    Ok(answer.send_answer(created(&view(&made))))
}

/// Lists webhook subscriptions, newest first.
#[utoipa::path(get, path = "/v1/webhooks", tag = "webhooks", operation_id = "listWebhooks", params(PageQuery), responses((status = 200, description = "A page of subscriptions, newest first.", body = ListView<WebhookView>)))]
async fn list(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, WebhookId::PREFIX)?;
    let found = state.webhooks.list(&who, &page).await?;
    Ok(HttpResponse::Ok().json(ListView::of(&found, view)))
}

/// Lists the event types a subscription may name.
#[utoipa::path(get, path = "/v1/webhooks/event-types", tag = "webhooks", operation_id = "listEventTypes", responses((status = 200, description = "Every event type a subscription may name.", body = ListView<EventTypeView>)))]
async fn event_types() -> HttpResponse {
    let data = EventType::ALL
        .iter()
        .map(|&t| EventTypeView::of(t))
        .collect();
    HttpResponse::Ok().json(ListView {
        data,
        has_more: false,
    })
}

/// Reads a webhook subscription, with its signing secret.
#[utoipa::path(get, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "getWebhook", params(("id" = WebhookId, Path, description = "The resource's id.")), responses((status = 200, description = "The subscription.", body = WebhookView)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let found = state.webhooks.get(&who, &webhook_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(view(&found)))
}

/// A new signing secret; the old one keeps signing beside it for the overlap (24 hours).
#[utoipa::path(post, path = "/v1/webhooks/{id}/rotate-secret", tag = "webhooks", operation_id = "rotateWebhookSecret", params(("id" = WebhookId, Path, description = "The resource's id.")), responses((status = 200, description = "A new signing secret; the old one keeps signing beside it for 24 hours.", body = WebhookView)))]
async fn rotate_secret(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    Acting(actor): Acting,
    req: HttpRequest,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    let answer = AnswerWithChange::new(&req, |s: &Subscription| changed(&stored_view(s)));
    let rotated = state
        .webhooks
        .rotate_secret(&who, &actor, &id, answer.recorder().as_ref())
        .await?;
    Ok(answer.send_answer(changed(&view(&rotated))))
}

/// Replaces a webhook subscription (spec 4.2).
#[utoipa::path(patch, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "replaceWebhook", params(("id" = WebhookId, Path, description = "The resource's id.")), request_body = WebhookBody, responses((status = 200, description = "The subscription, replaced (spec 4.2: PATCH replaces).", body = WebhookView)))]
async fn replace(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    Acting(actor): Acting,
    id: web::Path<String>,
    ApiJson(body): ApiJson<WebhookBody>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    let f = fields(&body)?;
    let replaced = state
        .webhooks
        .replace(
            &who,
            &actor,
            &id,
            Replacement {
                endpoint_url: f.endpoint_url,
                events: f.events,
                description: f.description,
                custom_header: f.custom_header,
                active: body.active,
                metadata: Some(f.metadata),
            },
        )
        .await?;
    Ok(HttpResponse::Ok().json(view(&replaced)))
}

/// Deletes a webhook subscription.
#[utoipa::path(delete, path = "/v1/webhooks/{id}", tag = "webhooks", operation_id = "deleteWebhook", params(("id" = WebhookId, Path, description = "The resource's id.")), responses((status = 200, description = "The subscription is deleted.", body = DeletedView)))]
async fn delete(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    Acting(actor): Acting,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    state.webhooks.delete(&who, &actor, &id).await?;
    Ok(HttpResponse::Ok().json(DeletedView {
        id: id.to_string(),
        deleted: true,
    }))
}

/// Lists a subscription's deliveries, newest first.
#[utoipa::path(get, path = "/v1/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "listWebhookDeliveries", params(("id" = WebhookId, Path, description = "The resource's id."), PageQuery), responses((status = 200, description = "The subscription's deliveries of the last 15 days and the archived ones, newest first.", body = ListView<DeliveryView>)))]
async fn deliveries(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
    req: HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let page = page_request(&req, NotificationId::PREFIX)?;
    let found = state
        .webhooks
        .deliveries(&who, &webhook_id(&id)?, &page)
        .await?;
    Ok(HttpResponse::Ok().json(ListView::of(&found, delivery_view)))
}

/// Sends the subscription a `webhook.test` event: a new event with one notification, to this
/// subscription only, whatever event types it names (not a resend: spec 6.4 keeps those to the
/// dashboard). The answer is the queued delivery; its outcome shows in the delivery history.
#[utoipa::path(post, path = "/v1/webhooks/{id}/test", tag = "webhooks", operation_id = "sendWebhookTestEvent", params(("id" = WebhookId, Path, description = "The resource's id.")), responses((status = 202, description = "The test event's delivery, queued (not yet delivered).", body = DeliveryView), (status = 409, description = "The subscription is inactive: re-enable it first.", body = ErrorEnvelope)))]
async fn send_test(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    Acting(actor): Acting,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = webhook_id(&id)?;
    let queued = state
        .webhooks
        .send_test(&who, &actor, &id)
        .await
        .map_err(|e| match e {
            TestEventError::NotFound => ApiError::NotFound {
                resource: "webhook",
            },
            TestEventError::Inactive => ApiError::Conflict {
                param: "id".into(),
                message: e.to_string(),
            },
            TestEventError::Store(e) => ApiError::Internal(e.to_string()),
        })?;
    Ok(HttpResponse::Accepted().json(delivery_view(&queued)))
}
