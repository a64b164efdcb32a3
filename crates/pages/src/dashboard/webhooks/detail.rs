//! A subscription's page: its settings, its delivery history, and what may be done to it.

use super::super::auth::Signed;
use super::super::layout::when;
use super::super::{DashboardError, layout, respond, taken_notice};
use super::{NOTICES, PATH, events_text, outcome, subscription_form};
use crate::PagesState;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::Invalid;
use holdfast_domain::ids::WebhookId;
use holdfast_domain::page::PageRequest;
use holdfast_domain::ports::Delivery;
use maud::{Markup, html};

pub(super) fn webhook_id(raw: &str) -> Result<WebhookId, DashboardError> {
    WebhookId::parse("id", raw).map_err(|_| DashboardError::NotFound("webhook"))
}

pub(super) async fn detail(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let id = webhook_id(&id)?;
    // Only this subscription's page takes what was left for it.
    let notice = taken_notice(&state, &signed, &format!("{PATH}/{id}"), NOTICES).await?;
    let body = detail_page(&state, &signed, &id, notice, None, false).await?;
    Ok(respond(StatusCode::OK, body))
}

pub(super) async fn detail_page(
    state: &PagesState,
    signed: &Signed,
    id: &WebhookId,
    notice: Option<&str>,
    error: Option<&Invalid>,
    reveal: bool,
) -> Result<Markup, DashboardError> {
    let who = signed.principal();
    let s = if reveal {
        state
            .webhooks
            .reveal_secret(&who, &signed.actor(), id)
            .await?
    } else {
        state.webhooks.get(&who, id).await?
    };
    let history = state
        .webhooks
        .deliveries(&who, id, &PageRequest::new(Some(50), None)?)
        .await?;
    let admin = signed.is_admin();
    let here = format!("{PATH}/{id}");
    let body = html! {
        p.crumbs { a href=(PATH) { "Settings › Webhooks" } }
        h1 { "Subscription " code { (id.as_str()) } }
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        dl.facts {
            dt { "Endpoint URL" } dd { code { (s.endpoint_url.as_str()) } }
            dt { "Events" } dd { (events_text(&s.events)) }
            dt { "Active" } dd { @if s.active { "Yes" } @else { "No" } }
            dt { "Consecutive failures" } dd { (s.consecutive_failures) " of 25" }
            dt { "Description" } dd { @match &s.description { Some(d) => (d.as_str()), None => "none" } }
            dt { "Custom header" } dd { @match &s.custom_header { Some(h) => code { (h.name()) }, None => "none" } }
            (crate::dashboard::layout::metadata_term(&s.metadata))
            dt { "Created" } dd { (when(s.created_on)) }
        }
        @if admin {
            div.actions {
                @let (action, label) = if s.active { ("disable", "Set inactive") } else { ("enable", "Set active") };
                form.inline method="post" action={ (here) "/" (action) } {
                    input type="hidden" name="csrf" value=(signed.csrf);
                    button type="submit" { (label) }
                }
                a.danger href={ (here) "/delete" } { "Delete this subscription" }
            }
            section aria-labelledby="secret" {
                h2 #secret { "Signing secret" }
                @if reveal {
                    label for="secret-value" { "Secret value" }
                    input #secret-value type="text" readonly value=(s.secret) spellcheck="false";
                } @else {
                    form.inline method="post" action={ (here) "/secret" } {
                        input type="hidden" name="csrf" value=(signed.csrf);
                        button.secondary type="submit" { "Reveal signing secret" }
                    }
                }
            }
            section aria-labelledby="edit" {
                h2 #edit { "Edit" }
                p { "Saving replaces every field below; the id, the secret, the creator and the counter stay." }
                (subscription_form(signed, &here, Some(&s), error, "Save subscription"))
            }
        }
        section aria-labelledby="history" {
            h2 #history { "Delivery history" }
            (history_table(&history.data, None))
        }
    };
    Ok(layout::page(signed, "Webhook subscription", PATH, &body))
}

/// One entry per notification, its bodies behind a disclosure; archived ones say so. With
/// `link`, each id links to `link/{id}`.
pub fn history_table(deliveries: &[Delivery], link: Option<&str>) -> Markup {
    html! {
        @if deliveries.is_empty() {
            p { "No deliveries yet." }
        } @else {
            ul.deliveries {
                @for d in deliveries {
                    li {
                        p {
                            @if let Some(base) = link {
                                a href={ (base) "/" (d.id.as_str()) } { code { (d.id.as_str()) } }
                            } @else {
                                code { (d.id.as_str()) }
                            }
                            " · " (d.event_type) " · " strong { (outcome(d.state)) }
                            @if let Some(at) = d.attempted_on { " · " (when(at)) }
                            @if d.archived { " · " span.tag { "Archived" } }
                            @if let Some(from) = &d.resent_from { " · resent from " code { (from.as_str()) } }
                        }
                        @if d.archived {
                            p.muted { "Archived after 15 days: the outcome stays, the bodies are gone." }
                        } @else if d.request_body.is_some() || d.response.is_some() {
                            details {
                                summary { "Request and response of " (d.id.as_str()) }
                                h3 { "Request body" }
                                pre { (d.request_body.as_deref().unwrap_or("Not sent yet")) }
                                h3 { "Response" }
                                pre { (d.response.as_deref().unwrap_or("None yet")) }
                            }
                        }
                    }
                }
            }
        }
    }
}
