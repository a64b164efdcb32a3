//! Processors: the mode's processor connections, read-only (they are made through
//! `/v1/processor-connections`): what each reaches and, for Adyen, what to set in Adyen's
//! Customer Area. Secrets by their last four characters only.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::page::PageRequest;
use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorConnection};
use maud::{Markup, html};

use super::auth::Signed;
use super::layout::when;
use super::{DashboardError, layout, respond};
use crate::PagesState;
use holdfast_web::paths::adyen_notifications;

pub const PATH: &str = "/dashboard/processors";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(list));
}

async fn list(
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let connections = state
        .routing
        .connections(&signed.principal(), &PageRequest::new(Some(100), None)?)
        .await?;
    let mode = signed.who.session.mode;
    let public_url = state.dashboard.public_url();
    let body = html! {
        h1 { "Processors" }
        p {
            "Where this mode's payments can go. Connections are made through the API ("
            code { "POST /v1/processor-connections" } "); plans route payments to them."
        }
        div.table role="region" aria-label="Processor connections" tabindex="0" {
            table {
                caption { "The " (mode) " mode's processor connections, newest first" }
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Kind" } th scope="col" { "Id" }
                    th scope="col" { "Created" }
                } }
                tbody {
                    @for c in &connections.data {
                        tr {
                            td { (c.name) }
                            td { (c.kind().as_str()) }
                            td { code { (c.id.as_str()) } }
                            td { (when(c.created_on)) }
                        }
                    }
                    @if connections.data.is_empty() {
                        tr { td colspan="4" { "No " (mode) " processor connections yet." } }
                    }
                }
            }
        }
        @for c in &connections.data {
            (adyen_details(c, public_url))
        }
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Processors", PATH, &body),
    ))
}

/// An Adyen connection's account, and what Adyen's Customer Area needs of it.
fn adyen_details(connection: &ProcessorConnection, public_url: &str) -> Markup {
    let ProcessorAccount::Adyen(account) = &connection.account else {
        return html! {};
    };
    let heading = format!("adyen-{}", connection.id);
    html! {
        section aria-labelledby=(heading) {
            h2 #(heading) { (connection.name) " (Adyen)" }
            dl {
                dt { "Merchant account" } dd { (account.merchant_account) }
                dt { "Checkout API" } dd { code { (account.checkout_url) } }
                dt { "API key" } dd { "ending in " code { (account.api_key.last4) } }
                dt { "Notification webhook URL" }
                dd { code { (public_url) (adyen_notifications(connection.id.as_str())) } }
                dt { "Notification user name" } dd { (account.notification_username) }
                dt { "Notification HMAC key" } dd { "ending in " code { (account.hmac_key.last4) } }
            }
        }
    }
}
