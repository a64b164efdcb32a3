//! Audit Log: who did what to the platform's keys, webhook subscriptions and users, when, from
//! which address, through which door. Everyone signed in reads it; nobody changes it.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::audit::{AuditEntry, Door, Who};
use holdfast_domain::ids::has_id_shape;
use holdfast_domain::page::PageRequest;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::Signed;
use super::layout::when;
use super::{DashboardError, layout, respond};
use crate::PagesState;

pub const PATH: &str = "/dashboard/audit";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(list));
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Query {
    after: String,
}

/// Names for the ids an entry holds: users by email, keys by name.
struct Names(HashMap<String, String>);

impl Names {
    async fn load(state: &PagesState, signed: &Signed) -> Result<Self, DashboardError> {
        let platform = &signed.who.user.platform_id;
        let mut names = HashMap::new();
        for user in state.users.list(platform).await? {
            names.insert(user.id.to_string(), user.email.as_str().to_owned());
        }
        for key in state.keys.list(platform).await? {
            names.insert(
                key.id.to_string(),
                format!("API key “{}”", key.name.as_str()),
            );
        }
        Ok(Self(names))
    }

    fn who(&self, who: &Who) -> Markup {
        match who {
            Who::Operator => html! { "Operator" },
            Who::User(id) => self.named(id.as_str()),
            Who::Key(id) => self.named(id.as_str()),
        }
    }

    /// The name, with the id beneath it; the id alone once the user or key is gone.
    fn named(&self, id: &str) -> Markup {
        html! {
            @if let Some(name) = self.0.get(id) { (name) br; }
            code { (id) }
        }
    }
}

fn door(door: Door) -> &'static str {
    match door {
        Door::Dashboard => "Dashboard",
        Door::Api => "API",
        Door::Cli => "Command line",
    }
}

async fn list(
    req: HttpRequest,
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let query: Query =
        serde_urlencoded::from_str(req.query_string()).map_err(|_| DashboardError::BadForm)?;
    let after = has_id_shape(&query.after, AuditEntry::PREFIX).then_some(query.after);
    let mode = signed.who.session.mode;
    let found = state
        .audit
        .list(
            &signed.who.user.platform_id,
            mode,
            &PageRequest::new(Some(50), after)?,
        )
        .await?;
    let names = Names::load(&state, &signed).await?;
    let older = found
        .data
        .last()
        .filter(|_| found.has_more)
        .map(|e| format!("{PATH}?after={}", e.id));
    let body = html! {
        h1 { "Audit Log" }
        p { "Every change to API keys, webhook subscriptions and users, made in the dashboard, "
            "through the API or at the command line. Entries cannot be changed or deleted." }
        div.table role="region" aria-label="Audit Log" tabindex="0" {
            table {
                caption { "The " (mode) " mode's keys and subscriptions, and every user, newest first" }
                thead { tr {
                    th scope="col" { "When" } th scope="col" { "Who" } th scope="col" { "What" }
                    th scope="col" { "Target" } th scope="col" { "Through" } th scope="col" { "Address" }
                } }
                tbody {
                    @for e in &found.data {
                        tr {
                            td { (when(e.created_on)) }
                            td { (names.who(&e.actor.who)) }
                            td { (e.action.describe()) }
                            td { (names.named(&e.target)) }
                            td { (door(e.actor.door)) }
                            td { @match e.actor.address { Some(a) => code { (a) }, None => "not recorded" } }
                        }
                    }
                    @if found.data.is_empty() {
                        tr { td colspan="6" { "Nothing has been recorded yet." } }
                    }
                }
            }
        }
        @if let Some(older) = older { p { a href=(older) { "Older entries" } } }
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Audit Log", PATH, &body),
    ))
}
