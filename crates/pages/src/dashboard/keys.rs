//! The API Keys page (spec 2.1, 3.1, 4.6): the keys of the session's mode; an admin generates
//! (the value shown once), renames, activates, deactivates and deletes them.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::api_key::{ApiKey, KeyEvent, KeyName, KeyStatus};
use holdfast_domain::ids::{KeyId, UserId};
use holdfast_domain::mode::KeyType;
use holdfast_domain::services::Flash;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::{Admin, AdminForm, NoFields, Signed};
use super::layout::{Confirmation, FormError, confirmation, when};
use super::{DashboardError, done, layout, respond, see_other};
use crate::PagesState;

mod rename;

use rename::{rename, rename_form};

const PATH: &str = "/dashboard/keys";

pub fn config(cfg: &mut web::ServiceConfig) {
    // Resources, not routes, so another method is a 405 naming the ones a path takes; the
    // deletion's page and its action share one (`{action:delete}`), tried before the others.
    cfg.service(web::resource(PATH).get(list).post(generate))
        .service(
            web::resource("/dashboard/keys/{id}/rename")
                .get(rename_form)
                .post(rename),
        )
        .service(
            web::resource("/dashboard/keys/{id}/{action:delete}")
                .get(confirm_delete)
                .post(change),
        )
        .service(web::resource("/dashboard/keys/{id}/{action}").post(change));
}

/// What the page says after each change its redirects name.
const NOTICES: &[(&str, &str)] = &[
    ("renamed", "The key is renamed."),
    (
        "activated",
        "The key is active: requests with it are served.",
    ),
    (
        "deactivated",
        "The key is inactive: requests with it get 401.",
    ),
    ("deleted", "The key is deleted for good."),
];

/// The page; after a change, once, what it did (and after a generation, the key's value).
async fn list(
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let view = View::load(&state, &signed).await?;
    let (notice, created) = match state
        .flashes
        .take(&signed.who, &signed.secret, PATH)
        .await?
    {
        Some(Flash::Notice(word)) => (layout::notice(&word, NOTICES), None),
        Some(Flash::KeyCreated { id, value }) => (None, Some((id, value))),
        None => (None, None),
    };
    let created = created.and_then(|(id, value)| {
        let key = view.keys.iter().find(|k| k.id == id)?;
        Some((key, value))
    });
    let body = view.render(
        &signed,
        notice,
        created.as_ref().map(|(key, value)| (*key, value.as_str())),
        None,
    );
    Ok(respond(StatusCode::OK, body))
}

/// The keys of the session's mode, and who made them.
struct View {
    keys: Vec<ApiKey>,
    makers: HashMap<UserId, String>,
}

impl View {
    async fn load(state: &PagesState, signed: &Signed) -> Result<Self, DashboardError> {
        let platform = &signed.who.user.platform_id;
        let mode = signed.who.session.mode;
        let keys = state.keys.list(platform).await?;
        let makers = state
            .users
            .list(platform)
            .await?
            .into_iter()
            .map(|u| (u.id, u.email.as_str().to_owned()))
            .collect();
        Ok(Self {
            keys: keys.into_iter().filter(|k| k.mode == mode).collect(),
            makers,
        })
    }

    /// The page; `error` is the generate form's.
    fn render(
        &self,
        signed: &Signed,
        notice: Option<&str>,
        created: Option<(&ApiKey, &str)>,
        error: Option<&FormError<'_>>,
    ) -> Markup {
        let admin = signed.is_admin();
        let mode = signed.who.session.mode;
        let body = html! {
            h1 { "API Keys" }
            @if let Some(notice) = notice { p.notice role="status" { (notice) } }
            @if let Some(created) = created { (created_panel(created)) }
            div.table role="region" aria-label="API keys" tabindex="0" {
                table {
                    caption { "The " (mode) " mode's keys" }
                    thead { tr {
                        th scope="col" { "Name" } th scope="col" { "Type" } th scope="col" { "Mode" }
                        th scope="col" { "Last four" } th scope="col" { "Active" }
                        th scope="col" { "Created by" } th scope="col" { "Created on" }
                        th scope="col" { "Last used" }
                        @if admin { th scope="col" { "Actions" } }
                    } }
                    tbody {
                        @for key in &self.keys { (self.row(key, signed)) }
                        @if self.keys.is_empty() {
                            tr { td colspan="9" { "No " (mode) " keys yet." } }
                        }
                    }
                }
            }
            @if admin { (generate_form(signed, error)) }
            section aria-labelledby="rotation" {
                h2 #rotation { "Rotating a key" }
                ol {
                    li { "Create a new key of the same type and mode." }
                    li { "Switch the integration to it." }
                    li { "Verify it works." }
                    li { "Deactivate or delete the old key." }
                }
                p { "A private key must never appear in client-side code, mobile apps or public repositories. If one may have been exposed, deactivate it at once and generate a replacement." }
            }
        };
        layout::page(signed, "API Keys", PATH, &body)
    }

    fn row(&self, key: &ApiKey, signed: &Signed) -> Markup {
        let id = key.id.as_str();
        let active = key.status == KeyStatus::Active;
        let maker = self
            .makers
            .get(&key.created_by)
            .map_or_else(|| format!("{} (removed)", key.created_by), Clone::clone);
        html! {
            tr {
                td { (key.name.as_str()) }
                td { (key.key_type) }
                td { (key.mode) }
                td { code { (key.last4) } }
                td { @if active { "Yes" } @else { "No" } }
                td { (maker) }
                td { (when(key.created_on)) }
                td { @match key.last_used_on { Some(at) => (when(at)), None => "Never" } }
                @if signed.is_admin() {
                    td.actions {
                        @let (action, label) = if active { ("deactivate", "Deactivate") } else { ("activate", "Activate") };
                        form.inline method="post" action={ "/dashboard/keys/" (id) "/" (action) } {
                            input type="hidden" name="csrf" value=(signed.csrf);
                            button.secondary type="submit" aria-label={ (label) " " (key.name.as_str()) } { (label) }
                        }
                        a href={ "/dashboard/keys/" (id) "/rename" } aria-label={ "Rename " (key.name.as_str()) } { "Rename" }
                        a.danger href={ "/dashboard/keys/" (id) "/delete" } aria-label={ "Delete " (key.name.as_str()) } { "Delete" }
                    }
                }
            }
        }
    }
}

fn generate_form(signed: &Signed, error: Option<&FormError<'_>>) -> Markup {
    html! {
        section aria-labelledby="generate" {
            h2 #generate { "Generate a key" }
            p { "The new key is a " (signed.who.session.mode) " key: switch mode above for the other." }
            @if let Some(error) = error { (error.alert()) }
            form.stack method="post" action=(PATH) {
                input type="hidden" name="csrf" value=(signed.csrf);
                label for="key-name" { "Name" }
                // No maxlength: a browser counts UTF-16 units, the rule (3 to 25) what a
                // reader sees as characters, and 13 emoji are 26 units. The answer names the
                // field when a name is too long.
                input #key-name type="text" name="name" minlength="3" required
                    aria-describedby=[FormError::describes(error, "name")];
                label for="key-type" { "Type" }
                select #key-type name="type" {
                    option value="private" { "Private (server-side, full access)" }
                    option value="public" { "Public (hosted fields: tokenization only)" }
                }
                button type="submit" { "Generate key" }
            }
        }
    }
}

/// The one time the value is shown.
fn created_panel((key, value): (&ApiKey, &str)) -> Markup {
    html! {
        section.created aria-labelledby="created" {
            h2 #created { "Your new key: " (key.name.as_str()) }
            p.warning role="alert" { "Copy it now. It will not be shown again." }
            label for="key-value" { "Key value" }
            div.copy {
                input #key-value type="text" readonly value=(value) spellcheck="false";
                button type="button" data-copy="key-value" hidden { "Copy" }
            }
        }
    }
}

#[derive(Debug, Deserialize)]
struct Generate {
    name: String,
    #[serde(rename = "type")]
    key_type: String,
}

async fn generate(
    state: web::Data<PagesState>,
    form: AdminForm<Generate>,
) -> Result<HttpResponse, DashboardError> {
    let signed = &form.signed;
    let name = match KeyName::parse(&form.fields.name) {
        Ok(name) => name,
        Err(error) => {
            let view = View::load(&state, signed).await?;
            let error = FormError {
                error: &error,
                labels: &[("name", "Name")],
            };
            let body = view.render(signed, None, None, Some(&error));
            return Ok(respond(StatusCode::BAD_REQUEST, body));
        }
    };
    let key_type: KeyType = form
        .fields
        .key_type
        .parse()
        .map_err(|_| DashboardError::BadForm)?;
    let user = &signed.who.user;
    let created = state
        .keys
        .generate(
            &signed.actor(),
            &user.platform_id,
            &user.id,
            name,
            key_type,
            signed.who.session.mode,
        )
        .await?;
    tracing::info!(key = %created.key.id, user = %user.id, "key generated in the dashboard");
    // Post/redirect/get: the value waits, sealed, on the session for the one page that shows
    // it, so a reload neither makes a second key nor shows the value again.
    let shown_once = Flash::KeyCreated {
        id: created.key.id.clone(),
        value: created.value.expose().to_owned(),
    };
    state
        .flashes
        .leave(&signed.secret, PATH, &shown_once)
        .await?;
    Ok(see_other(PATH))
}

/// Key `id` of the session's platform and mode; a key of the other mode is not found.
async fn key_in_mode(
    state: &PagesState,
    signed: &Signed,
    id: &str,
) -> Result<ApiKey, DashboardError> {
    let id = KeyId::parse("key", id).map_err(|_| DashboardError::NotFound("key"))?;
    let key = state.keys.get(&signed.who.user.platform_id, &id).await?;
    if key.mode == signed.who.session.mode {
        Ok(key)
    } else {
        Err(DashboardError::NotFound("key"))
    }
}

/// Activate, deactivate or delete (after its confirmation page): `action` names the event.
async fn change(
    state: web::Data<PagesState>,
    path: web::Path<(String, String)>,
    form: AdminForm<NoFields>,
) -> Result<HttpResponse, DashboardError> {
    let (id, action) = path.into_inner();
    let (event, word) = match action.as_str() {
        "activate" => (KeyEvent::Activate, "activated"),
        "deactivate" => (KeyEvent::Deactivate, "deactivated"),
        "delete" => (KeyEvent::Delete, "deleted"),
        _ => return Err(DashboardError::NotFound("page")),
    };
    let key = key_in_mode(&state, &form.signed, &id).await?;
    let user = &form.signed.who.user;
    state
        .keys
        .apply(&form.signed.actor(), &user.platform_id, &key.id, event)
        .await?;
    tracing::info!(key = %key.id, user = %user.id, event = ?event, "key changed in the dashboard");
    done(&state, &form.signed, PATH, word).await
}

/// Deleting is permanent: the page names the key and asks once more.
async fn confirm_delete(
    state: web::Data<PagesState>,
    path: web::Path<(String, String)>,
    Admin(signed): Admin,
) -> Result<HttpResponse, DashboardError> {
    let key = key_in_mode(&state, &signed, &path.0).await?;
    let name = key.name.as_str();
    let confirm = Confirmation {
        title: "Delete a key",
        question: format!("Delete the key {name}?"),
        consequence: html! {
            "The " (key.mode) " " (key.key_type) " key " strong { (name) } " ending in "
            code { (key.last4) } " will stop working at once. Deletion is permanent and cannot be undone."
        },
        action: format!("{PATH}/{}/delete", key.id),
        button: format!("Delete {name} for good"),
        back: PATH.to_owned(),
    };
    Ok(respond(
        StatusCode::OK,
        confirmation(&signed, PATH, &confirm),
    ))
}
