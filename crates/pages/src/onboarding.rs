//! `/onboarding/{link}`: the hosted boarding form a merchant fills in, reached through the
//! unguessable link `POST /v1/boarding-forms` issued. A door like the others: it reads the form,
//! calls `BoardingService` and renders; the checks are the domain's.
//!
//! Works without JavaScript (the browser's own field checks from `required` and `pattern`, the
//! server's on every save). Secrets typed here (tax id, account number, IBAN) are never shown
//! again, only their last four characters.

use holdfast_web::client_address::client_address;
use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::Invalid;
use holdfast_domain::boarding::answers::{Answers, BusinessType, MAX_OWNERS, field_label};
use holdfast_domain::boarding::checks::Country;
use holdfast_domain::boarding::form::{BoardingForm, FormStatus};
use holdfast_domain::payment::card::could_hold_card_number;
use holdfast_domain::services::PageError;
use maud::{Markup, html};

use crate::PagesState;
use crate::dashboard::layout::hosted;
use crate::dashboard::{respond, too_many, try_again_in};
use holdfast_web::same_origin::is_same_origin;

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.route("/onboarding/{link}", web::get().to(show))
        .route("/onboarding/{link}", web::post().to(act));
}

/// The words of the page's own fields, beside the form's questions (`answers::FIELDS`).
const PAGE_LABELS: &[(&str, &str)] = &[
    ("signerName", "Your full name"),
    ("confirm", "Confirmation"),
    ("form", "The form"),
];

fn label(field: &str) -> String {
    field_label(field)
        .or_else(|| {
            PAGE_LABELS
                .iter()
                .find(|(f, _)| *f == field)
                .map(|(_, l)| *l)
        })
        .map(str::to_owned)
        .or_else(|| owner_label(field))
        .unwrap_or_else(|| field.to_owned())
}

/// `owner2DateOfBirth` as "Owner 2: date of birth".
fn owner_label(field: &str) -> Option<String> {
    let rest = field.strip_prefix("owner")?;
    let (n, part) = rest.split_at(1);
    let part = match part {
        "Name" => "name",
        "DateOfBirth" => "date of birth",
        "Ownership" => "ownership",
        _ => return None,
    };
    Some(format!("Owner {n}: {part}"))
}

/// Why the page could not do what was asked, as a page.
fn refusal(error: &PageError) -> HttpResponse {
    let (status, title, words) = match error {
        PageError::UnknownLink => (
            StatusCode::NOT_FOUND,
            "Link not found",
            "This link is unknown or was replaced by a newer one. Ask the platform that sent it for a new link.",
        ),
        PageError::Expired => (
            StatusCode::GONE,
            "Link expired",
            "This link has expired. Ask the platform that sent it for a new link: what you saved is kept.",
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The form could not be loaded. Try again in a moment.",
        ),
    };
    if status.is_server_error() {
        tracing::error!(error = %error, "boarding form page failed");
    }
    let body = html! { h1 { (title) } p.error role="alert" { (words) } };
    respond(status, hosted(title, &body))
}

/// An address past its failed-authentication budget is refused before any link is looked
/// at: a right guess inside the lockout is no use.
fn locked_out(req: &HttpRequest, state: &PagesState) -> Option<HttpResponse> {
    let wait = state.rate_limits.locked_out(client_address(req))?;
    Some(too_many_attempts(wait))
}

fn too_many_attempts(wait: std::time::Duration) -> HttpResponse {
    let words = format!(
        "Too many attempts from your address. {}",
        try_again_in(wait)
    );
    let body = html! { h1 { "Too many attempts" } p.error role="alert" { (words) } };
    too_many(wait, hosted("Too many attempts", &body))
}

async fn show(
    req: HttpRequest,
    state: web::Data<PagesState>,
    link: web::Path<String>,
) -> HttpResponse {
    if let Some(refused) = locked_out(&req, &state) {
        return refused;
    }
    match state.boarding.open(&link).await {
        Ok(form) => respond(
            StatusCode::OK,
            form_page(&form, &link, &[], None, &BTreeMap::new()),
        ),
        Err(error) => refused_guess(&req, &state, &error),
    }
}

/// An unknown link is a guess at a secret: it counts against the address, like a wrong key,
/// and the guess that spends the budget is answered 429 like the ones after it.
fn refused_guess(req: &HttpRequest, state: &PagesState, error: &PageError) -> HttpResponse {
    if matches!(error, PageError::UnknownLink)
        && let Some(wait) = state.rate_limits.failed(client_address(req))
    {
        return too_many_attempts(wait);
    }
    refusal(error)
}

async fn act(
    req: HttpRequest,
    state: web::Data<PagesState>,
    link: web::Path<String>,
    form: web::Form<BTreeMap<String, String>>,
) -> HttpResponse {
    if !is_same_origin(&req) {
        let body = html! { h1 { "Refused" } p.error role="alert" { "This form did not come from this page." } };
        return respond(StatusCode::FORBIDDEN, hosted("Refused", &body));
    }
    if let Some(refused) = locked_out(&req, &state) {
        return refused;
    }
    let typed = form.into_inner();
    let action = typed.get("action").map_or("save", String::as_str);
    let done = match action {
        "submit" => {
            let confirmed = typed.get("confirm").is_some_and(|v| v == "yes");
            let signer = typed.get("signerName").map_or("", String::as_str);
            let address = client_address(&req);
            state
                .boarding
                .submit(&link, signer, confirmed, address)
                .await
        }
        _ => state.boarding.save(&link, &typed).await,
    };
    match done {
        Ok(form) if action == "review" => respond(StatusCode::OK, review_page(&form, &link, &[])),
        Ok(form) => {
            let notice = form
                .status
                .is_editable()
                .then_some("Your answers are saved. Come back with the same link to carry on.");
            respond(
                StatusCode::OK,
                form_page(&form, &link, &[], notice, &BTreeMap::new()),
            )
        }
        // The page again with the refusals; what was saved before stays.
        Err(PageError::Refused(errors, form)) if action == "submit" => {
            respond(StatusCode::BAD_REQUEST, review_page(&form, &link, &errors))
        }
        Err(PageError::Refused(errors, form)) => respond(
            StatusCode::BAD_REQUEST,
            form_page(&form, &link, &errors, None, &typed),
        ),
        Err(PageError::Closed(form)) => respond(
            StatusCode::CONFLICT,
            form_page(&form, &link, &[], None, &BTreeMap::new()),
        ),
        Err(error) => refused_guess(&req, &state, &error),
    }
}

fn alert(errors: &[Invalid]) -> Markup {
    html! {
        @if !errors.is_empty() {
            div.error #form-errors role="alert" tabindex="-1" {
                p { "Please check these answers; nothing was saved:" }
                ul {
                    @for e in errors {
                        li { a href={ "#" (e.field) } { (label(e.field)) } ": " (e.message) }
                    }
                }
            }
        }
    }
}

/// One text field with its label, saved value and, when refused, its error beside it (as the
/// hosted payment fields show theirs), tied to the input for screen readers.
fn field(name: &str, value: Option<&str>, errors: &[Invalid], attrs: &FieldAttrs<'_>) -> Markup {
    let error = errors.iter().find(|e| e.field == name);
    let described: Vec<String> = [
        attrs.hint.map(|_| format!("{name}-hint")),
        error.map(|_| format!("{name}-error")),
    ]
    .into_iter()
    .flatten()
    .collect();
    html! {
        label for=(name) { (label(name)) @if !attrs.required { " (optional)" } }
        @if let Some(hint) = attrs.hint { span.hint #{ (name) "-hint" } { (hint) } }
        @if let Some(error) = error { span.field-error #{ (name) "-error" } { (error.message) } }
        input #(name) name=(name) type=(attrs.kind) value=[value]
            autocomplete=[attrs.autocomplete] inputmode=[attrs.inputmode] pattern=[attrs.pattern]
            maxlength=(attrs.maxlength)
            aria-invalid=[error.map(|_| "true")]
            aria-describedby=[(!described.is_empty()).then(|| described.join(" "))];
    }
}

#[derive(Clone, Copy)]
struct FieldAttrs<'a> {
    kind: &'a str,
    required: bool,
    hint: Option<&'a str>,
    autocomplete: Option<&'a str>,
    inputmode: Option<&'a str>,
    pattern: Option<&'a str>,
    maxlength: u32,
}

const TEXT: FieldAttrs<'static> = FieldAttrs {
    kind: "text",
    required: true,
    hint: None,
    autocomplete: None,
    inputmode: None,
    pattern: None,
    maxlength: 200,
};

const OPTIONAL: FieldAttrs<'static> = FieldAttrs {
    required: false,
    ..TEXT
};

fn on_file(what: &str, last4: Option<&str>) -> Markup {
    html! {
        @if let Some(last4) = last4 {
            p.hint { (what) " on file ends in " code { (last4) } ". Type it again only to change it." }
        }
    }
}

fn status_banner(form: &BoardingForm) -> Markup {
    html! {
        @match form.status {
            FormStatus::Open => {}
            FormStatus::NeedsInformation => {
                div.notice role="status" {
                    p { "Underwriting needs more information. Please check: "
                        (form.requested_fields.iter().map(|f| label(f)).collect::<Vec<_>>().join(", ")) "." }
                    @if let Some(reason) = &form.reason { p { (reason) } }
                }
            }
            status => {
                div.notice role="status" {
                    p { "This form is " strong { (status_words(status)) } "." }
                    @if let Some(s) = &form.submission { p { "Submitted by " (s.name) " on " (crate::dashboard::layout::when(s.on)) "." } }
                    @if let Some(reason) = &form.reason { p { (reason) } }
                }
            }
        }
    }
}

fn status_words(status: FormStatus) -> &'static str {
    match status {
        FormStatus::Open => "open",
        FormStatus::Submitted => "submitted and waiting for underwriting",
        FormStatus::Approved => "approved",
        FormStatus::Declined => "declined",
        FormStatus::NeedsInformation => "waiting for more information",
    }
}

/// What a field shows: what was just typed (a refused save keeps nothing, but the page keeps
/// what the person typed, secrets aside), else what was saved.
struct Shown<'a> {
    saved: &'a Answers,
    typed: &'a BTreeMap<String, String>,
    refused: &'a [Invalid],
}

impl Shown<'_> {
    fn value(&self, name: &str, saved: Option<&str>) -> Option<String> {
        let refused = self.refused.iter().any(|e| e.field == name);
        self.typed
            .get(name)
            .filter(|v| !v.trim().is_empty())
            // A refused answer is put back to be mended, beside its error, unless it may hold a
            // card number pasted in the wrong place: that is never echoed.
            .filter(|v| !(refused && could_hold_card_number(v)))
            .cloned()
            .or_else(|| saved.map(str::to_owned))
    }
}

fn form_page(
    form: &BoardingForm,
    link: &str,
    errors: &[Invalid],
    notice: Option<&str>,
    typed: &BTreeMap<String, String>,
) -> Markup {
    let a = &Shown {
        saved: &form.answers,
        typed,
        refused: errors,
    };
    let editable = form.status.is_editable();
    let action = format!("/onboarding/{link}");
    let body = html! {
        h1 { "Tell us about your business" }
        (status_banner(form))
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        (alert(errors))
        @if editable {
            p { "Fill in what you can and save; come back with the same link until "
                (crate::dashboard::layout::when(form.expires_on)) ". Your tax id and account number are encrypted, and only their last four characters are shown again." }
            form.stack method="post" action=(action) novalidate[!errors.is_empty()] {
                (business_section(a, form, errors))
                (address_section(a, errors))
                (sales_section(a, errors))
                (owners_section(a, errors))
                (bank_section(a, form, errors))
                div.actions {
                    button type="submit" name="action" value="save" { "Save progress" }
                    button type="submit" name="action" value="review" { "Review and submit" }
                }
            }
        }
    };
    hosted("Boarding form", &body)
}

fn business_section(a: &Shown<'_>, form: &BoardingForm, errors: &[Invalid]) -> Markup {
    let business_type = a.value(
        "businessType",
        a.saved.business_type.map(BusinessType::as_str),
    );
    let country = a.value("country", a.saved.country.map(Country::as_str));
    html! {
        fieldset {
            legend { "Business" }
            (field("legalName", a.value("legalName", a.saved.legal_name.as_deref()).as_deref(), errors, &FieldAttrs { autocomplete: Some("organization"), ..TEXT }))
            (field("dbaName", a.value("dbaName", a.saved.dba_name.as_deref()).as_deref(), errors, &OPTIONAL))
            label for="businessType" { "Business type" }
            select #businessType name="businessType" {
                option value="" { "Choose…" }
                @for t in BusinessType::ALL {
                    option value=(t.as_str()) selected[business_type.as_deref() == Some(t.as_str())] { (t.label()) }
                }
            }
            label for="country" { "Country" }
            select #country name="country" {
                option value="" { "Choose…" }
                @for c in Country::ALL {
                    option value=(c.as_str()) selected[country.as_deref() == Some(c.as_str())] { (c.name()) }
                }
            }
            (field("taxId", None, errors, &FieldAttrs { hint: Some("US: EIN, 9 digits. UK: UTR, 10 digits. EU: VAT number with its country prefix."), autocomplete: Some("off"), maxlength: 20, ..TEXT }))
            (on_file("The tax id", form.tax_id.as_ref().map(|v| v.last4.as_str())))
        }
    }
}

fn address_section(a: &Shown<'_>, errors: &[Invalid]) -> Markup {
    let saved = a.saved;
    html! {
        fieldset {
            legend { "Registered address" }
            (field("addressLine1", a.value("addressLine1", saved.address_line1.as_deref()).as_deref(), errors, &FieldAttrs { autocomplete: Some("address-line1"), ..TEXT }))
            (field("addressLine2", a.value("addressLine2", saved.address_line2.as_deref()).as_deref(), errors, &FieldAttrs { autocomplete: Some("address-line2"), ..OPTIONAL }))
            (field("city", a.value("city", saved.city.as_deref()).as_deref(), errors, &FieldAttrs { autocomplete: Some("address-level2"), maxlength: 100, ..TEXT }))
            (field("region", a.value("region", saved.region.as_deref()).as_deref(), errors, &FieldAttrs { autocomplete: Some("address-level1"), maxlength: 100, ..OPTIONAL }))
            (field("postalCode", a.value("postalCode", saved.postal_code.as_deref()).as_deref(), errors, &FieldAttrs { autocomplete: Some("postal-code"), maxlength: 20, ..TEXT }))
        }
    }
}

fn sales_section(a: &Shown<'_>, errors: &[Invalid]) -> Markup {
    let saved = a.saved;
    let volume = a.value(
        "monthlyVolume",
        saved.monthly_volume.map(|v| v.to_string()).as_deref(),
    );
    html! {
        fieldset {
            legend { "What you sell" }
            (field("website", a.value("website", saved.website.as_deref()).as_deref(), errors, &FieldAttrs { kind: "url", hint: Some("Starting with https://"), autocomplete: Some("url"), ..TEXT }))
            (field("mcc", a.value("mcc", saved.mcc.as_deref()).as_deref(), errors, &FieldAttrs { hint: Some("Four digits, such as 5734 for computer software stores."), inputmode: Some("numeric"), pattern: Some("[0-9]{4}"), maxlength: 4, ..TEXT }))
            (field("monthlyVolume", volume.as_deref(), errors, &FieldAttrs { hint: Some("In whole units of your currency."), inputmode: Some("numeric"), maxlength: 16, ..TEXT }))
        }
    }
}

fn owners_section(a: &Shown<'_>, errors: &[Invalid]) -> Markup {
    html! {
        fieldset {
            legend { "Owners of 25 % or more" }
            p.hint { "List everyone who owns 25 % or more; shares add up to at most 100 %." }
            @for n in 1..=MAX_OWNERS {
                @let owner = n.checked_sub(1).and_then(|at| a.saved.owners.get(at));
                @let (name, dob, share) = (format!("owner{n}Name"), format!("owner{n}DateOfBirth"), format!("owner{n}Ownership"));
                @let share_value = a.value(&share, owner.map(|o| o.ownership.to_string()).as_deref());
                @let name_value = a.value(&name, owner.map(|o| o.name.as_str()));
                @let dob_value = a.value(&dob, owner.map(|o| o.date_of_birth.as_str()));
                (field(&name, name_value.as_deref(), errors, &FieldAttrs { required: n == 1, ..TEXT }))
                (field(&dob, dob_value.as_deref(), errors, &FieldAttrs { kind: "date", required: n == 1, maxlength: 10, ..TEXT }))
                (field(&share, share_value.as_deref(), errors, &FieldAttrs { hint: Some("Percent, 25 to 100."), inputmode: Some("numeric"), required: n == 1, maxlength: 3, ..TEXT }))
            }
        }
    }
}

fn bank_section(a: &Shown<'_>, form: &BoardingForm, errors: &[Invalid]) -> Markup {
    let saved = a.saved;
    html! {
        fieldset {
            legend { "Payout bank account" }
            (field("accountHolder", a.value("accountHolder", saved.account_holder.as_deref()).as_deref(), errors, &TEXT))
            (field("routingNumber", a.value("routingNumber", saved.routing_number.as_deref()).as_deref(), errors, &FieldAttrs { hint: Some("United States only: 9 digits."), inputmode: Some("numeric"), pattern: Some("[0-9]{9}"), maxlength: 9, ..OPTIONAL }))
            (field("accountNumber", None, errors, &FieldAttrs { hint: Some("United States only: 4 to 17 digits."), inputmode: Some("numeric"), autocomplete: Some("off"), maxlength: 17, ..OPTIONAL }))
            (field("iban", None, errors, &FieldAttrs { hint: Some("Outside the United States."), autocomplete: Some("off"), maxlength: 42, ..OPTIONAL }))
            (on_file("The account", form.bank_account.as_ref().map(|v| v.last4.as_str())))
        }
    }
}

fn review_page(form: &BoardingForm, link: &str, errors: &[Invalid]) -> Markup {
    let a = &form.answers;
    let shown = |v: Option<&str>| v.unwrap_or("Not given").to_owned();
    let rows: Vec<(&str, String)> = vec![
        ("Legal name", shown(a.legal_name.as_deref())),
        ("Doing business as", shown(a.dba_name.as_deref())),
        (
            "Business type",
            shown(a.business_type.map(BusinessType::label)),
        ),
        ("Country", shown(a.country.map(Country::name))),
        (
            "Tax id",
            form.tax_id
                .as_ref()
                .map_or("Not given".into(), |v| format!("ending in {}", v.last4)),
        ),
        (
            "Address",
            [
                a.address_line1.as_deref(),
                a.address_line2.as_deref(),
                a.city.as_deref(),
                a.region.as_deref(),
                a.postal_code.as_deref(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", "),
        ),
        ("Website", shown(a.website.as_deref())),
        ("Merchant category code", shown(a.mcc.as_deref())),
        (
            "Expected monthly card volume",
            a.monthly_volume
                .map_or("Not given".into(), |v| v.to_string()),
        ),
        (
            "Owners",
            a.owners
                .iter()
                .map(|o| format!("{} ({} %, born {})", o.name, o.ownership, o.date_of_birth))
                .collect::<Vec<_>>()
                .join("; "),
        ),
        ("Account holder", shown(a.account_holder.as_deref())),
        ("Routing number", shown(a.routing_number.as_deref())),
        (
            "Account",
            form.bank_account
                .as_ref()
                .map_or("Not given".into(), |v| format!("ending in {}", v.last4)),
        ),
    ];
    let action = format!("/onboarding/{link}");
    let body = html! {
        h1 { "Review and submit" }
        (alert(errors))
        dl.facts {
            @for (term, value) in &rows { dt { (term) } dd { (value) } }
        }
        p { a href=(action) { "Change an answer" } }
        form.stack method="post" action=(action) {
            input type="hidden" name="action" value="submit";
            (field("signerName", None, errors, &FieldAttrs { hint: Some("Submitting records your name, the time and your address."), autocomplete: Some("name"), ..TEXT }))
            div.check {
                input #confirm type="checkbox" name="confirm" value="yes" required;
                label for="confirm" { "I confirm that these answers are true and complete, and that I may submit them for the business." }
            }
            button type="submit" { "Submit" }
        }
    };
    hosted("Review your boarding form", &body)
}
