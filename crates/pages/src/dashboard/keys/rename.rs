//! Renaming a key: a page of its own for the new name.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::api_key::{ApiKey, KeyName};
use maud::{Markup, html};
use serde::Deserialize;

use super::{PATH, key_in_mode};
use crate::PagesState;
use crate::dashboard::auth::{Admin, AdminForm, Signed};
use crate::dashboard::layout::{self, FormError};
use crate::dashboard::{DashboardError, done, respond};

#[derive(Debug, Deserialize)]
pub(super) struct Rename {
    name: String,
}

/// A page of its own for the new name: the table stays readable, and it works without script.
pub(super) async fn rename_form(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    Admin(signed): Admin,
) -> Result<HttpResponse, DashboardError> {
    let key = key_in_mode(&state, &signed, &id).await?;
    Ok(respond(StatusCode::OK, rename_page(&signed, &key, None)))
}

fn rename_page(signed: &Signed, key: &ApiKey, error: Option<&FormError<'_>>) -> Markup {
    let body = html! {
        h1 { "Rename the key " (key.name.as_str()) }
        @if let Some(error) = error { (error.alert()) }
        form.stack method="post" action={ "/dashboard/keys/" (key.id.as_str()) "/rename" } {
            input type="hidden" name="csrf" value=(signed.csrf);
            label for="new-name" { "New name" }
            input #new-name type="text" name="name" minlength="3" required
                aria-describedby=[FormError::describes(error, "name")];
            button type="submit" { "Rename" }
        }
        p { a href=(PATH) { "Keep its name and go back" } }
    };
    layout::page(signed, "Rename a key", PATH, &body)
}

pub(super) async fn rename(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    form: AdminForm<Rename>,
) -> Result<HttpResponse, DashboardError> {
    let key = key_in_mode(&state, &form.signed, &id).await?;
    let name = match KeyName::parse(&form.fields.name) {
        Ok(name) => name,
        Err(error) => {
            let error = FormError {
                error: &error,
                labels: &[("name", "New name")],
            };
            let body = rename_page(&form.signed, &key, Some(&error));
            return Ok(respond(StatusCode::BAD_REQUEST, body));
        }
    };
    state
        .keys
        .rename(
            &form.signed.actor(),
            &form.signed.who.user.platform_id,
            &key.id,
            &name,
        )
        .await?;
    done(&state, &form.signed, PATH, "renamed").await
}
