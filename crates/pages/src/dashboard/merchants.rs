//! Merchants: the mode's merchants; an admin creates, edits and deletes them, through the same
//! service (and so the same rules and events) as `/v1/merchants`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::Invalid;
use holdfast_domain::ids::MerchantId;
use holdfast_domain::merchant::{Currency, Merchant, MerchantDetails, MerchantName, MerchantPatch};
use holdfast_domain::page::PageRequest;
use holdfast_domain::user::Email;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::{Admin, AdminForm, NoFields, Signed};
use super::layout::{Confirmation, FormError, confirmation, when};
use super::{DashboardError, done, layout, respond, taken_notice};
use crate::PagesState;

pub const PATH: &str = "/dashboard/merchants";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(list).post(create))
        .service(
            web::resource("/dashboard/merchants/{id}")
                .get(edit_form)
                .post(edit),
        )
        .service(
            web::resource("/dashboard/merchants/{id}/delete")
                .get(confirm_delete)
                .post(delete),
        );
}

/// What the page says after each change its redirects name.
const NOTICES: &[(&str, &str)] = &[
    ("created", "The merchant is created."),
    ("saved", "The merchant is saved."),
    (
        "deleted",
        "The merchant is deleted; its past payments keep pointing at it.",
    ),
];

/// The form's fields, as typed.
#[derive(Debug, Deserialize)]
struct Fields {
    name: String,
    currency: String,
    #[serde(default)]
    email: String,
}

impl Fields {
    fn details(&self) -> Result<MerchantDetails, Invalid> {
        let email = self.email.trim();
        Ok(MerchantDetails {
            name: MerchantName::parse(&self.name)?,
            currency: Currency::parse(self.currency.trim())?,
            email: (!email.is_empty())
                .then(|| Email::parse(email))
                .transpose()?,
            // The dashboard does not edit metadata (the API does): a new merchant has none, an
            // edit leaves the merchant's as it is.
            metadata: holdfast_domain::metadata::Metadata::default(),
        })
    }
}

/// The form's words for the fields the domain names by their API names.
const LABELS: &[(&str, &str)] = &[
    ("name", "Name"),
    ("currency", "Currency"),
    ("email", "Email"),
];

fn merchant_form(
    signed: &Signed,
    action: &str,
    current: Option<&Merchant>,
    error: Option<&Invalid>,
    submit: &str,
) -> Markup {
    let details = current.map(|m| &m.details);
    let error = error.map(|error| FormError {
        error,
        labels: LABELS,
    });
    let described = |field: &str| FormError::describes(error.as_ref(), field);
    html! {
        @if let Some(error) = &error { (error.alert()) }
        form.stack method="post" action=(action) {
            input type="hidden" name="csrf" value=(signed.csrf);
            label for="merchant-name" { "Name" }
            input #merchant-name type="text" name="name" required maxlength="100"
                value=[details.map(|d| d.name.as_str())] aria-describedby=[described("name")];
            label for="merchant-currency" { "Currency (three letters, such as USD)" }
            input #merchant-currency type="text" name="currency" required minlength="3" maxlength="3"
                value=(details.map_or("USD", |d| d.currency.as_str())) aria-describedby=[described("currency")];
            label for="merchant-email" { "Email (optional)" }
            input #merchant-email type="email" name="email"
                value=[details.and_then(|d| d.email.as_ref()).map(Email::as_str)]
                aria-describedby=[described("email")];
            button type="submit" { (submit) }
        }
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
    let merchants = state
        .merchants
        .list(&signed.principal(), &PageRequest::new(Some(100), None)?)
        .await?;
    let mode = signed.who.session.mode;
    let admin = signed.is_admin();
    let body = html! {
        h1 { "Merchants" }
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        div.table role="region" aria-label="Merchants" tabindex="0" {
            table {
                caption { "The " (mode) " mode's merchants, newest first" }
                thead { tr {
                    th scope="col" { "Name" } th scope="col" { "Id" } th scope="col" { "Currency" }
                    th scope="col" { "Email" } th scope="col" { "Created" }
                    @if admin { th scope="col" { "Actions" } }
                } }
                tbody {
                    @for m in &merchants.data {
                        tr {
                            td { (m.details.name.as_str()) }
                            td { code { (m.id.as_str()) } }
                            td { (m.details.currency.as_str()) }
                            td { @match &m.details.email { Some(e) => (e.as_str()), None => "not given" } }
                            td { (when(m.created_on)) }
                            @if admin {
                                td.actions {
                                    a href={ (PATH) "/" (m.id.as_str()) } aria-label={ "Edit " (m.details.name.as_str()) } { "Edit" }
                                    a.danger href={ (PATH) "/" (m.id.as_str()) "/delete" } aria-label={ "Delete " (m.details.name.as_str()) } { "Delete" }
                                }
                            }
                        }
                    }
                    @if merchants.data.is_empty() { tr { td colspan="6" { "No " (mode) " merchants yet." } } }
                }
            }
        }
        @if admin {
            section aria-labelledby="create" {
                h2 #create { "Create a merchant" }
                (merchant_form(signed, PATH, None, error, "Create merchant"))
            }
        }
    };
    Ok(layout::page(signed, "Merchants", PATH, &body))
}

async fn create(
    state: web::Data<PagesState>,
    form: AdminForm<Fields>,
) -> Result<HttpResponse, DashboardError> {
    let signed = &form.signed;
    let details = match form.fields.details() {
        Ok(details) => details,
        Err(error) => {
            let body = list_page(&state, signed, None, Some(&error)).await?;
            return Ok(respond(StatusCode::BAD_REQUEST, body));
        }
    };
    state
        .merchants
        .create(&signed.principal(), details, None)
        .await?;
    done(&state, signed, PATH, "created").await
}

fn merchant_id(raw: &str) -> Result<MerchantId, DashboardError> {
    MerchantId::parse("id", raw).map_err(|_| DashboardError::NotFound("merchant"))
}

/// Merchant `id` of the session's platform and mode, or not found.
async fn merchant(
    state: &PagesState,
    signed: &Signed,
    id: &str,
) -> Result<Merchant, DashboardError> {
    Ok(state
        .merchants
        .get(&signed.principal(), &merchant_id(id)?)
        .await?)
}

fn edit_page(signed: &Signed, m: &Merchant, error: Option<&Invalid>) -> Markup {
    let body = html! {
        p.crumbs { a href=(PATH) { "Merchants" } }
        h1 { "Edit " (m.details.name.as_str()) }
        (merchant_form(signed, &format!("{PATH}/{}", m.id), Some(m), error, "Save merchant"))
    };
    layout::page(signed, "Edit a merchant", PATH, &body)
}

async fn edit_form(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    Admin(signed): Admin,
) -> Result<HttpResponse, DashboardError> {
    let m = merchant(&state, &signed, &id).await?;
    Ok(respond(StatusCode::OK, edit_page(&signed, &m, None)))
}

async fn edit(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    form: AdminForm<Fields>,
) -> Result<HttpResponse, DashboardError> {
    let signed = &form.signed;
    let m = merchant(&state, signed, &id).await?;
    let details = match form.fields.details() {
        Ok(details) => details,
        Err(error) => {
            return Ok(respond(
                StatusCode::BAD_REQUEST,
                edit_page(signed, &m, Some(&error)),
            ));
        }
    };
    let patch = MerchantPatch {
        name: Some(details.name),
        currency: Some(details.currency),
        email: Some(details.email),
        plan_id: None,
        // The form has no metadata: the merchant's stays as it is.
        metadata: None,
    };
    state
        .merchants
        .update(&signed.principal(), &m.id, patch)
        .await?;
    done(&state, signed, PATH, "saved").await
}

async fn confirm_delete(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    Admin(signed): Admin,
) -> Result<HttpResponse, DashboardError> {
    let m = merchant(&state, &signed, &id).await?;
    let name = m.details.name.as_str();
    let confirm = Confirmation {
        title: "Delete a merchant",
        question: format!("Delete the merchant {name}?"),
        consequence: html! { "It takes no more payments; its past transactions stay and keep pointing at it." },
        action: format!("{PATH}/{}/delete", m.id),
        button: format!("Delete {name}"),
        back: PATH.to_owned(),
    };
    Ok(respond(
        StatusCode::OK,
        confirmation(&signed, PATH, &confirm),
    ))
}

async fn delete(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    form: AdminForm<NoFields>,
) -> Result<HttpResponse, DashboardError> {
    let m = merchant(&state, &form.signed, &id).await?;
    state
        .merchants
        .delete(&form.signed.principal(), &m.id)
        .await?;
    done(&state, &form.signed, PATH, "deleted").await
}
