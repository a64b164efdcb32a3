//! A transaction's webhook deliveries: the list, one delivery, and its resend.

use super::super::auth::{AdminForm, NoFields, Signed};
use super::super::layout::when;
use super::super::webhooks::history_table;
use super::super::{DashboardError, done, layout, respond};
use super::{PATH, notice, tabs, transaction};
use crate::PagesState;
use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::{Delivery, ResendError};
use holdfast_domain::services::Flash;
use maud::{Markup, html};

pub(super) async fn deliveries(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let who = signed.principal();
    let t = transaction(&state, &who, &id).await?;
    // The resend that led here, said once: a reload does not say it again.
    let page = format!("{PATH}/{}/deliveries", t.id);
    let resent = match state
        .flashes
        .take(&signed.who, &signed.secret, &page)
        .await?
    {
        Some(Flash::Notice(word)) => notice(&word),
        _ => None,
    };
    let found = state.webhooks.deliveries_about(&who, t.id.as_str()).await?;
    let body = html! {
        (tabs(&t, "Webhook Deliveries"))
        @if let Some(notice) = resent { p.notice role="status" { (notice) } }
        @if found.is_empty() {
            p { "No webhook subscription was notified of this transaction." }
        } @else {
            (history_table(&found, Some(&format!("{PATH}/{}/deliveries", t.id))))
        }
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Webhook Deliveries", PATH, &body),
    ))
}

/// Delivery `delivery` of transaction `t`, or not found.
async fn delivery_of(
    state: &PagesState,
    who: &Principal,
    t: &Transaction,
    delivery: &str,
) -> Result<Delivery, DashboardError> {
    state
        .webhooks
        .deliveries_about(who, t.id.as_str())
        .await?
        .into_iter()
        .find(|d| d.id.as_str() == delivery)
        .ok_or(DashboardError::NotFound("delivery"))
}

pub(super) async fn delivery(
    state: web::Data<PagesState>,
    path: web::Path<(String, String)>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let (id, delivery) = path.into_inner();
    let who = signed.principal();
    let t = transaction(&state, &who, &id).await?;
    let d = delivery_of(&state, &who, &t, &delivery).await?;
    Ok(respond(
        StatusCode::OK,
        delivery_page(&signed, &t, &d, None),
    ))
}

fn delivery_page(signed: &Signed, t: &Transaction, d: &Delivery, refusal: Option<&str>) -> Markup {
    let body = html! {
        (tabs(t, "Webhook Deliveries"))
        h2 { "Delivery " code { (d.id.as_str()) } }
        @if let Some(refusal) = refusal { p.error role="alert" { (refusal) } }
        dl.facts {
            dt { "Event type" } dd { (d.event_type) }
            dt { "Endpoint URL" } dd { code { (d.endpoint_url.as_deref().unwrap_or("(not sent yet)")) } }
            dt { "Subscription" } dd { a href={ "/dashboard/settings/webhooks/" (d.webhook_id.as_str()) } { code { (d.webhook_id.as_str()) } } }
            dt { "Requests made" } dd { (d.requests) }
            dt { "Queued" } dd { (when(d.created_on)) }
        }
        (history_table(std::slice::from_ref(d), None))
        @if signed.is_admin() {
            @if d.archived {
                p { "This delivery is archived (older than 15 days): it can no longer be resent." }
            } @else {
                form.stack method="post" action={ (PATH) "/" (t.id.as_str()) "/deliveries/" (d.id.as_str()) "/resend" } {
                    input type="hidden" name="csrf" value=(signed.csrf);
                    button type="submit" { "Resend Webhook" }
                }
                p.muted { "A resend carries the original event type and data with a new id, to the subscription's current URL and header. It is queued: accepted, not yet delivered." }
            }
        }
    };
    layout::page(signed, "Webhook delivery", PATH, &body)
}

pub(super) async fn resend(
    state: web::Data<PagesState>,
    path: web::Path<(String, String)>,
    form: AdminForm<NoFields>,
) -> Result<HttpResponse, DashboardError> {
    let (id, delivery) = path.into_inner();
    let signed = &form.signed;
    let who = signed.principal();
    let t = transaction(&state, &who, &id).await?;
    let d = delivery_of(&state, &who, &t, &delivery).await?;
    let refusal = match state
        .webhooks
        .resend(&signed.actor(), &who.scope.platform, &d.id)
        .await
    {
        Ok(queued) => {
            tracing::info!(delivery = %d.id, resent_as = %queued.id, user = %signed.who.user.id, "resent from the dashboard");
            return done(
                &state,
                signed,
                &format!("{PATH}/{}/deliveries", t.id),
                &format!("resent={}", queued.id),
            )
            .await;
        }
        Err(ResendError::Inactive) => {
            "Not resent: the subscription is inactive. Re-enable the subscription first, then resend."
        }
        Err(ResendError::Archived) => {
            "Not resent: this delivery is archived (older than 15 days) and can no longer be resent."
        }
        Err(ResendError::NotTransaction) => {
            "Not resent: only transaction notifications can be resent."
        }
        Err(ResendError::NotFound) => return Err(DashboardError::NotFound("delivery")),
        Err(ResendError::Store(e)) => return Err(e.into()),
    };
    Ok(respond(
        StatusCode::CONFLICT,
        delivery_page(signed, &t, &d, Some(refusal)),
    ))
}
