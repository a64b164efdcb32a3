//! Settings → Webhooks (spec 2.3, 3.2, 4.6): the mode's subscriptions with their health; an admin
//! creates (the creator is the signed-in user), edits (a replacement), turns them on (the
//! counter back to 0, spec 3.2's dashboard row) and off, deletes them, and reveals a signing
//! secret. Each subscription's page lists its delivery history with the bodies sent and got.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::Invalid;
use holdfast_domain::ids::WebhookId;
use holdfast_domain::page::PageRequest;
use holdfast_domain::ports::{Delivery, DeliveryState, Replacement};
use holdfast_domain::services::{NewWebhook, ServiceError};
use holdfast_domain::webhook::{
    CustomHeader, Description, EndpointUrl, EventList, EventType, Outcome, Subscription,
};
use maud::{Markup, html};

use super::auth::{Admin, AdminForm, Signed};
use super::layout::{Confirmation, FormError, confirmation, when};
use super::{DashboardError, done, layout, respond, taken_notice};
use crate::PagesState;

pub const PATH: &str = "/dashboard/settings/webhooks";

type Pairs = Vec<(String, String)>;

mod detail;

pub use detail::history_table;
use detail::{detail, detail_page, webhook_id};

pub fn config(cfg: &mut web::ServiceConfig) {
    // Resources, not routes, so another method is a 405 naming the ones a path takes; the
    // deletion's page and its action share one (`{action:delete}`), tried before the others.
    cfg.service(web::resource(PATH).get(list).post(create))
        .service(
            web::resource("/dashboard/settings/webhooks/{id}")
                .get(detail)
                .post(edit),
        )
        .service(
            web::resource("/dashboard/settings/webhooks/{id}/{action:delete}")
                .get(confirm_delete)
                .post(change),
        )
        .service(web::resource("/dashboard/settings/webhooks/{id}/{action}").post(change));
}

/// What the pages say after each change their redirects name.
const NOTICES: &[(&str, &str)] = &[
    ("created", "The subscription is created."),
    ("saved", "The subscription is saved."),
    (
        "enabled",
        "The subscription is active, its failure counter back to 0.",
    ),
    (
        "disabled",
        "The subscription is inactive: events meanwhile are not delivered, ever.",
    ),
    (
        "deleted",
        "The subscription and its delivery history are deleted.",
    ),
];

/// The form's words for the fields the domain names by their API names.
const LABELS: &[(&str, &str)] = &[
    ("endpointUrl", "Endpoint URL"),
    ("events", "Events"),
    ("description", "Description"),
    ("customHeader", "Custom header"),
];

/// The last delivery's outcome, in words, and when.
fn last_outcome(last: Option<&Delivery>) -> Markup {
    match last {
        None => html! { "None yet" },
        Some(d) => html! {
            (outcome(d.state))
            @if let Some(at) = d.attempted_on { ", " (when(at)) }
        },
    }
}

fn outcome(state: DeliveryState) -> &'static str {
    match state {
        DeliveryState::Pending => "Pending",
        DeliveryState::Done(Outcome::Succeeded) => "Succeeded",
        DeliveryState::Done(Outcome::Failed) => "Failed",
        DeliveryState::Done(Outcome::Skipped) => "Skipped (inactive)",
    }
}

async fn list(
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let notice = taken_notice(&state, &signed, PATH, NOTICES).await?;
    let body = list_page(&state, &signed, notice, None).await?;
    Ok(respond(StatusCode::OK, body))
}

async fn list_page(
    state: &PagesState,
    signed: &Signed,
    notice: Option<&str>,
    error: Option<&Invalid>,
) -> Result<Markup, DashboardError> {
    let who = signed.principal();
    let subscriptions = state
        .webhooks
        .list(&who, &PageRequest::new(Some(100), None)?)
        .await?;
    let latest = PageRequest::new(Some(1), None)?;
    let mut rows = Vec::new();
    for s in subscriptions.data {
        let last = state.webhooks.deliveries(&who, &s.id, &latest).await?;
        rows.push((s, last.data.into_iter().next()));
    }
    let mode = signed.who.session.mode;
    let body = html! {
        p.crumbs { "Settings › Webhooks" }
        h1 { "Webhooks" }
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        div.table role="region" aria-label="Webhook subscriptions" tabindex="0" {
            table {
                caption { "The " (mode) " mode's subscriptions" }
                thead { tr {
                    th scope="col" { "Endpoint URL" } th scope="col" { "Events" }
                    th scope="col" { "Active" } th scope="col" { "Consecutive failures" }
                    th scope="col" { "Last outcome" } th scope="col" { "Details" }
                } }
                tbody {
                    @for (s, last) in &rows {
                        tr {
                            td { code { (s.endpoint_url.as_str()) } }
                            td { (events_text(&s.events)) }
                            td { @if s.active { "Yes" } @else { "No" } }
                            td { (s.consecutive_failures) }
                            td { (last_outcome(last.as_ref())) }
                            td { a href={ (PATH) "/" (s.id.as_str()) } aria-label={ "Details of " (s.endpoint_url.as_str()) } { "Details" } }
                        }
                    }
                    @if rows.is_empty() { tr { td colspan="6" { "No " (mode) " subscriptions yet." } } }
                }
            }
        }
        @if signed.is_admin() {
            section aria-labelledby="create" {
                h2 #create { "Create a subscription" }
                p { "It receives the " (mode) " mode's events; you are its creator, who is emailed if it is disabled after 25 failures in a row." }
                (subscription_form(signed, PATH, None, error, "Create subscription"))
            }
        }
    };
    Ok(layout::page(signed, "Webhooks", PATH, &body))
}

fn events_text(events: &EventList) -> String {
    events
        .types()
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The create and edit form; `current` fills it for an edit.
fn subscription_form(
    signed: &Signed,
    action: &str,
    current: Option<&Subscription>,
    error: Option<&Invalid>,
    submit: &str,
) -> Markup {
    let url = current.map(|s| s.endpoint_url.as_str());
    let description = current
        .and_then(|s| s.description.as_ref())
        .map(Description::as_str);
    let header = current.and_then(|s| s.custom_header.as_ref());
    let subscribed = |t: EventType| current.is_some_and(|s| s.events.contains(t));
    let error = error.map(|error| FormError {
        error,
        labels: LABELS,
    });
    let described = |field: &str| FormError::describes(error.as_ref(), field);
    html! {
        @if let Some(error) = &error { (error.alert()) }
        form.stack method="post" action=(action) {
            input type="hidden" name="csrf" value=(signed.csrf);
            label for="endpoint-url" { "Endpoint URL" }
            input #endpoint-url type="url" name="endpointUrl" required value=[url]
                aria-describedby=[described("endpointUrl")];
            fieldset aria-describedby=[described("events")] {
                legend { "Events" }
                @for &t in EventType::ALL {
                    label.check {
                        input type="checkbox" name="events" value=(t.as_str()) checked[subscribed(t)];
                        " " code { (t.as_str()) }
                    }
                }
            }
            label for="description" { "Description (optional, in the disable email)" }
            input #description type="text" name="description" value=[description]
                aria-describedby=[described("description")];
            label for="header-name" { "Custom header name (optional)" }
            input #header-name type="text" name="headerName" value=[header.map(CustomHeader::name)]
                aria-describedby=[described("customHeader.name")];
            label for="header-value" { "Custom header value" }
            input #header-value type="text" name="headerValue" value=[header.map(CustomHeader::value)]
                aria-describedby=[described("customHeader.value")];
            @if current.is_none() {
                label.check { input type="checkbox" name="active" value="true" checked; " Active from the start" }
            }
            button type="submit" { (submit) }
        }
    }
}

/// A subscription's fields as the form sent them.
struct Fields {
    endpoint_url: EndpointUrl,
    events: EventList,
    description: Option<Description>,
    custom_header: Option<CustomHeader>,
    active: bool,
}

fn fields(pairs: &Pairs) -> Result<Fields, Invalid> {
    let one = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
            .trim()
    };
    let events: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == "events")
        .map(|(_, v)| v.as_str())
        .collect();
    let (name, value) = (one("headerName"), one("headerValue"));
    Ok(Fields {
        endpoint_url: EndpointUrl::parse(one("endpointUrl"))?,
        events: EventList::parse(&events)?,
        description: Some(one("description"))
            .filter(|d| !d.is_empty())
            .map(Description::parse)
            .transpose()?,
        custom_header: (!name.is_empty() || !value.is_empty())
            .then(|| CustomHeader::parse(name, value))
            .transpose()?,
        active: one("active") == "true",
    })
}

/// A refusal of the form: the page again, with the rule broken in words.
async fn refused_form(
    state: &PagesState,
    signed: &Signed,
    id: Option<&WebhookId>,
    error: &Invalid,
) -> Result<HttpResponse, DashboardError> {
    let body = match id {
        None => list_page(state, signed, None, Some(error)).await?,
        Some(id) => detail_page(state, signed, id, None, Some(error), false).await?,
    };
    Ok(respond(StatusCode::BAD_REQUEST, body))
}

async fn create(
    state: web::Data<PagesState>,
    form: AdminForm<Pairs>,
) -> Result<HttpResponse, DashboardError> {
    let signed = &form.signed;
    let f = match fields(&form.fields) {
        Ok(f) => f,
        Err(error) => return refused_form(&state, signed, None, &error).await,
    };
    let new = NewWebhook {
        endpoint_url: f.endpoint_url,
        events: f.events,
        description: f.description,
        custom_header: f.custom_header,
        active: f.active,
        metadata: holdfast_domain::metadata::Metadata::default(),
    };
    match state
        .webhooks
        .create(&signed.principal(), &signed.actor(), new, None)
        .await
    {
        Ok(made) => done(&state, signed, &format!("{PATH}/{}", made.id), "created").await,
        Err(ServiceError::LimitReached(message)) => {
            let error = Invalid::new("subscription", message);
            refused_form(&state, signed, None, &error).await
        }
        Err(other) => Err(other.into()),
    }
}

async fn edit(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    form: AdminForm<Pairs>,
) -> Result<HttpResponse, DashboardError> {
    let id = webhook_id(&id)?;
    let signed = &form.signed;
    let f = match fields(&form.fields) {
        Ok(f) => f,
        Err(error) => return refused_form(&state, signed, Some(&id), &error).await,
    };
    let replacement = Replacement {
        endpoint_url: f.endpoint_url,
        events: f.events,
        description: f.description,
        custom_header: f.custom_header,
        active: None,
        metadata: None,
    };
    state
        .webhooks
        .replace(&signed.principal(), &signed.actor(), &id, replacement)
        .await?;
    done(&state, signed, &format!("{PATH}/{id}"), "saved").await
}

/// Set active (the counter back to 0), set inactive, delete, or reveal the secret.
async fn change(
    state: web::Data<PagesState>,
    path: web::Path<(String, String)>,
    form: AdminForm<Pairs>,
) -> Result<HttpResponse, DashboardError> {
    let (id, action) = path.into_inner();
    let id = webhook_id(&id)?;
    let signed = &form.signed;
    let who = signed.principal();
    let word = match action.as_str() {
        "enable" => {
            state
                .webhooks
                .set_active(&who, &signed.actor(), &id, true)
                .await?;
            "enabled"
        }
        "disable" => {
            state
                .webhooks
                .set_active(&who, &signed.actor(), &id, false)
                .await?;
            "disabled"
        }
        "delete" => {
            state.webhooks.delete(&who, &signed.actor(), &id).await?;
            return done(&state, signed, PATH, "deleted").await;
        }
        "secret" => {
            let body = detail_page(&state, signed, &id, None, None, true).await?;
            return Ok(respond(StatusCode::OK, body));
        }
        _ => return Err(DashboardError::NotFound("page")),
    };
    tracing::info!(webhook = %id, user = %signed.who.user.id, action = word, "subscription changed in the dashboard");
    done(&state, signed, &format!("{PATH}/{id}"), word).await
}

async fn confirm_delete(
    state: web::Data<PagesState>,
    path: web::Path<(String, String)>,
    Admin(signed): Admin,
) -> Result<HttpResponse, DashboardError> {
    let id = webhook_id(&path.0)?;
    let s = state.webhooks.get(&signed.principal(), &id).await?;
    let confirm = Confirmation {
        title: "Delete a subscription",
        question: format!("Delete the subscription to {}?", s.endpoint_url.as_str()),
        consequence: html! { "Its delivery history is deleted with it. Deletion is permanent and cannot be undone." },
        action: format!("{PATH}/{id}/delete"),
        button: "Delete it for good".to_owned(),
        back: format!("{PATH}/{id}"),
    };
    Ok(respond(
        StatusCode::OK,
        confirmation(&signed, PATH, &confirm),
    ))
}
