//! Boarding: the mode's boarding forms and where each stands; an admin decides a submitted
//! one (approve, decline with a reason, or ask again about named fields), through the same
//! service as `holdfast boarding`.

use actix_web::http::StatusCode;
use actix_web::{HttpResponse, web};
use holdfast_domain::Invalid;
use holdfast_domain::boarding::answers::FIELDS;
use holdfast_domain::boarding::form::FormStatus;
use holdfast_domain::boarding::underwriting::Decision;
use holdfast_domain::ids::BoardingFormId;
use holdfast_domain::page::PageRequest;
use holdfast_domain::services::ServiceError;
use maud::html;
use serde::Deserialize;

use super::auth::{AdminForm, Signed};
use super::layout::{FormError, when};
use super::{DashboardError, done, layout, respond, taken_notice};
use crate::PagesState;

pub const PATH: &str = "/dashboard/boarding";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(list))
        .service(web::resource("/dashboard/boarding/{id}/decide").post(decide));
}

const NOTICES: &[(&str, &str)] = &[
    (
        "approved",
        "The form is approved: the merchant may take payments.",
    ),
    ("declined", "The form is declined."),
    (
        "needs_information",
        "The form is open again for the fields named.",
    ),
];

async fn list(
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let notice = taken_notice(&state, &signed, PATH, NOTICES).await?;
    let body = list_page(&state, &signed, notice, None).await?;
    Ok(respond(StatusCode::OK, body))
}

/// The words of a refusal's field, for the alert.
const LABELS: &[(&str, &str)] = &[("reason", "Reason"), ("fields", "Fields to answer again")];

async fn list_page(
    state: &PagesState,
    signed: &Signed,
    notice: Option<&str>,
    error: Option<&Invalid>,
) -> Result<maud::Markup, DashboardError> {
    let forms = state
        .boarding
        .list(&signed.principal(), &PageRequest::new(Some(100), None)?)
        .await?;
    let admin = signed.is_admin();
    let mode = signed.who.session.mode;
    let body = html! {
        h1 { "Boarding" }
        @if let Some(n) = notice { p.notice role="status" { (n) } }
        @if let Some(error) = error { (FormError { error, labels: LABELS }.alert()) }
        p { "The " (mode) " mode's boarding forms, newest first. Test forms are decided by the sandbox "
            "when submitted; a submitted live form waits for a decision here." }
        div.table role="region" aria-label="Boarding forms" tabindex="0" {
            table {
                caption { "Boarding forms" }
                thead { tr {
                    th scope="col" { "Form" } th scope="col" { "Merchant" } th scope="col" { "Status" }
                    th scope="col" { "Submitted" } th scope="col" { "Link expires" }
                } }
                tbody {
                    @for f in &forms.data {
                        tr {
                            td { code { (f.id.as_str()) } }
                            td { code { (f.merchant_id.as_str()) } }
                            td { (f.status) }
                            td { @match &f.submission { Some(s) => { (s.name) ", " (when(s.on)) }, None => "Not yet" } }
                            td { (when(f.expires_on)) }
                        }
                    }
                    @if forms.data.is_empty() { tr { td colspan="5" { "No boarding forms in this mode." } } }
                }
            }
        }
        @if admin {
            @for f in forms.data.iter().filter(|f| f.status == FormStatus::Submitted) {
                section aria-labelledby={ "decide-" (f.id.as_str()) } {
                    h2 #{ "decide-" (f.id.as_str()) } { "Decide " (f.id.as_str()) }
                    form.stack method="post" action={ (PATH) "/" (f.id.as_str()) "/decide" } {
                        input type="hidden" name="csrf" value=(signed.csrf);
                        fieldset {
                            legend { "Decision" }
                            @for (value, label) in [("approve", "Approve"), ("decline", "Decline"), ("request_information", "Ask for more information")] {
                                label.check {
                                    input type="radio" name="decision" value=(value) required;
                                    " " (label)
                                }
                            }
                        }
                        label for={ "reason-" (f.id.as_str()) } { "Reason (for a decline or a request; the merchant reads it)" }
                        input #{ "reason-" (f.id.as_str()) } type="text" name="reason" maxlength="500";
                        fieldset {
                            legend { "Fields to answer again (for a request)" }
                            @for (value, label) in FIELDS {
                                label.check { input type="checkbox" name={ "ask_" (value) } value="yes"; " " (label) }
                            }
                        }
                        button type="submit" { "Record the decision" }
                    }
                }
            }
        }
    };
    Ok(layout::page(signed, "Boarding", PATH, &body))
}

#[derive(Debug, Deserialize)]
struct Fields {
    decision: String,
    #[serde(default)]
    reason: String,
    /// The ticked `ask_<field>` boxes (and the form token), by name.
    #[serde(flatten)]
    rest: std::collections::BTreeMap<String, String>,
}

async fn decide(
    state: web::Data<PagesState>,
    path: web::Path<String>,
    form: AdminForm<Fields>,
) -> Result<HttpResponse, DashboardError> {
    let id = BoardingFormId::parse("id", &path)
        .map_err(|_| DashboardError::NotFound("boarding form"))?;
    let fields: Vec<String> = FIELDS
        .iter()
        .filter(|(field, _)| form.fields.rest.contains_key(&format!("ask_{field}")))
        .map(|(field, _)| (*field).to_owned())
        .collect();
    let reason = form.fields.reason.clone();
    // The rules of a decision (a reason, real fields) are the domain's: refusals come back.
    let decision = match form.fields.decision.as_str() {
        "approve" => Decision::Approve,
        "decline" => Decision::Decline { reason },
        "request_information" => Decision::RequestInformation { fields, reason },
        _ => return Err(DashboardError::BadForm),
    };
    let signed = &form.signed;
    let refused = match state
        .boarding
        .decide_in(&signed.principal(), &id, decision)
        .await
    {
        Ok(decided) => {
            tracing::info!(form = %decided.id, user = %signed.who.user.id, status = %decided.status, "boarding form decided in the dashboard");
            return done(&state, signed, PATH, decided.status.as_str()).await;
        }
        Err(ServiceError::Invalid(error)) => (StatusCode::BAD_REQUEST, error),
        Err(ServiceError::Conflict { field, message }) => {
            (StatusCode::CONFLICT, Invalid::new(field, message))
        }
        Err(other) => return Err(other.into()),
    };
    let body = list_page(&state, signed, None, Some(&refused.1)).await?;
    Ok(respond(refused.0, body))
}
