//! `/v1/merchants/{id}/compliance` (private key): an approved merchant's PCI compliance form,
//! its questionnaire, its attestation, and the attestation as a printable page
//! (docs/compliance.md).

use actix_web::http::Method;
use actix_web::http::header::ContentType;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::compliance::{ComplianceStatus, Question, SaqType};
use holdfast_domain::ids::{ComplianceFormId, MerchantId};
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::{CurrentCompliance, Signer};
use holdfast_web::client_address::client_address;
use maud::{DOCTYPE, html};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller};
use super::routes::Routes;
use super::views::{rfc3339, timestamp_or_null};
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub fn routes(r: &mut Routes) {
    r.add(
        Method::GET,
        "/v1/merchants/{id}/compliance",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::POST,
        "/v1/merchants/{id}/compliance/attest",
        Access::Private,
        web::route().to(attest),
    );
    r.add(
        Method::GET,
        "/v1/merchants/{id}/compliance/attestation",
        Access::Private,
        web::route().to(printable),
    );
}

/// The signer, their title, and their agreement.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"name": "Ada Lovelace", "title": "Director", "agreed": true}))]
struct Attest {
    #[schema(schema_with = crate::openapi::fields::signer, required = true)]
    name: Option<String>,
    #[schema(schema_with = crate::openapi::fields::signer, required = true)]
    title: Option<String>,
    /// Must be `true`: the signer agrees the merchant meets every requirement listed.
    #[schema(schema_with = crate::openapi::fields::agreed, required = true)]
    agreed: Option<bool>,
}

/// Who attested.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
struct AttestationView<'a> {
    name: &'a str,
    title: &'a str,
    #[schema(schema_with = timestamp)]
    attested_on: String,
    saq_type: SaqType,
}

/// A merchant's compliance form.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ComplianceForm)]
struct ComplianceView<'a> {
    #[schema(value_type = ComplianceFormId)]
    id: &'a ComplianceFormId,
    #[schema(value_type = MerchantId)]
    merchant_id: &'a MerchantId,
    /// `A` while the merchant's cards reach Holdfast only through hosted fields or wallets;
    /// `D` once a payment for it carried a raw card number.
    saq_type: SaqType,
    /// `pending`, `attested` or `overdue`.
    status: ComplianceStatus,
    #[schema(schema_with = timestamp)]
    issued_on: String,
    #[schema(schema_with = timestamp)]
    due_on: String,
    /// What the questionnaire asks.
    #[schema(value_type = Vec<Object>)]
    questions: &'static [Question],
    attestation: Option<AttestationView<'a>>,
    #[schema(schema_with = timestamp_or_null)]
    attested_on: Option<String>,
}

fn view(c: &CurrentCompliance) -> ComplianceView<'_> {
    let a = c.form.attestation.as_ref();
    ComplianceView {
        id: &c.form.id,
        merchant_id: &c.form.merchant_id,
        saq_type: c.saq_type,
        status: c.form.status,
        issued_on: rfc3339(c.form.issued_on),
        due_on: rfc3339(c.form.due_on),
        questions: c.saq_type.questions(),
        attestation: a.map(|a| AttestationView {
            name: &a.name,
            title: &a.title,
            attested_on: rfc3339(a.on),
            saq_type: a.saq_type,
        }),
        attested_on: a.map(|a| rfc3339(a.on)),
    }
}

fn merchant_id(raw: &str) -> Result<MerchantId, ApiError> {
    MerchantId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "merchant",
    })
}

/// The merchant's current compliance form (once its onboarding is approved).
#[utoipa::path(get, path = "/v1/merchants/{id}/compliance", tag = "onboarding", operation_id = "getCompliance", params(("id" = MerchantId, Path, description = "The merchant's id.")), responses((status = 200, description = "The current form, with its questionnaire.", body = ComplianceView), (status = 404, description = "No such merchant, or not approved yet.", body = ErrorEnvelope)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let current = state.compliance.current(&who, &merchant_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(view(&current)))
}

/// Attests the current form: the signer's name and title, and `agreed: true`.
#[utoipa::path(post, path = "/v1/merchants/{id}/compliance/attest", tag = "onboarding", operation_id = "attestCompliance", params(("id" = MerchantId, Path, description = "The merchant's id.")), request_body = Attest, responses((status = 200, description = "The form, attested.", body = ComplianceView), (status = 409, description = "Already attested.", body = ErrorEnvelope)))]
async fn attest(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    id: web::Path<String>,
    ApiJson(body): ApiJson<Attest>,
) -> Result<HttpResponse, ApiError> {
    let signer = Signer {
        name: body.name.unwrap_or_default(),
        title: body.title.unwrap_or_default(),
        agreed: body.agreed.unwrap_or(false),
        address: client_address(&req),
    };
    let current = state
        .compliance
        .attest(&who, &merchant_id(&id)?, signer)
        .await?;
    Ok(HttpResponse::Ok().json(view(&current)))
}

/// The attestation as a printable HTML document (404 until attested).
#[utoipa::path(get, path = "/v1/merchants/{id}/compliance/attestation", tag = "onboarding", operation_id = "printAttestation", params(("id" = MerchantId, Path, description = "The merchant's id.")), responses((status = 200, description = "A printable HTML document.", content_type = "text/html")))]
async fn printable(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = merchant_id(&id)?;
    let current = state.compliance.current(&who, &id).await?;
    let (Some(a), form) = (current.form.attestation.as_ref(), &current.form) else {
        return Err(ApiError::NotFound {
            resource: "attestation",
        });
    };
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head { meta charset="utf-8"; title { "PCI DSS attestation " (form.id.as_str()) } }
            body {
                h1 { "PCI DSS self-assessment: attestation of compliance" }
                dl {
                    dt { "Merchant" } dd { (form.merchant_id.as_str()) }
                    dt { "Questionnaire" } dd { "SAQ " (a.saq_type.as_str()) }
                    dt { "Form" } dd { (form.id.as_str()) }
                    dt { "Issued" } dd { (rfc3339(form.issued_on)) }
                    dt { "Due" } dd { (rfc3339(form.due_on)) }
                    dt { "Signed by" } dd { (a.name) ", " (a.title) }
                    dt { "Signed on" } dd { (rfc3339(a.on)) }
                    dt { "From" } dd { @match a.address { Some(ip) => (ip), None => "not recorded" } }
                }
                h2 { "Requirements attested" }
                ol { @for q in a.saq_type.questions() { li { "Requirement " (q.requirement) ": " (q.text) } } }
            }
        }
    };
    Ok(HttpResponse::Ok()
        .content_type(ContentType::html())
        .insert_header((
            "content-security-policy",
            "default-src 'none'; frame-ancestors 'none'",
        ))
        .body(page.into_string()))
}
