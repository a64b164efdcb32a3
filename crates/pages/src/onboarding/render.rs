//! The boarding form's pages: the form by section, its review, and the refusals shown on it.

use crate::dashboard::layout::hosted;
use holdfast_domain::Invalid;
use holdfast_domain::boarding::answers::{Answers, BusinessType, MAX_OWNERS, field_label};
use holdfast_domain::boarding::checks::Country;
use holdfast_domain::boarding::form::{BoardingForm, FormStatus};
use holdfast_domain::payment::card::could_hold_card_number;
use maud::{Markup, html};
use std::collections::BTreeMap;

/// The words of the page's own fields, beside the form's questions (`answers::FIELDS`).
pub(super) const PAGE_LABELS: &[(&str, &str)] = &[
    ("signerName", "Your full name"),
    ("confirm", "Confirmation"),
    ("form", "The form"),
];

pub(super) fn label(field: &str) -> String {
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
pub(super) fn owner_label(field: &str) -> Option<String> {
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

pub(super) fn alert(errors: &[Invalid]) -> Markup {
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
pub(super) fn field(
    name: &str,
    value: Option<&str>,
    errors: &[Invalid],
    attrs: &FieldAttrs<'_>,
) -> Markup {
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
pub(super) struct FieldAttrs<'a> {
    kind: &'a str,
    required: bool,
    hint: Option<&'a str>,
    autocomplete: Option<&'a str>,
    inputmode: Option<&'a str>,
    pattern: Option<&'a str>,
    maxlength: u32,
}

pub(super) const TEXT: FieldAttrs<'static> = FieldAttrs {
    kind: "text",
    required: true,
    hint: None,
    autocomplete: None,
    inputmode: None,
    pattern: None,
    maxlength: 200,
};

pub(super) const OPTIONAL: FieldAttrs<'static> = FieldAttrs {
    required: false,
    ..TEXT
};

pub(super) fn on_file(what: &str, last4: Option<&str>) -> Markup {
    html! {
        @if let Some(last4) = last4 {
            p.hint { (what) " on file ends in " code { (last4) } ". Type it again only to change it." }
        }
    }
}

pub(super) fn status_banner(form: &BoardingForm) -> Markup {
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

pub(super) fn status_words(status: FormStatus) -> &'static str {
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
pub(super) struct Shown<'a> {
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

pub(super) fn form_page(
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

pub(super) fn business_section(a: &Shown<'_>, form: &BoardingForm, errors: &[Invalid]) -> Markup {
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

pub(super) fn address_section(a: &Shown<'_>, errors: &[Invalid]) -> Markup {
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

pub(super) fn sales_section(a: &Shown<'_>, errors: &[Invalid]) -> Markup {
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

pub(super) fn owners_section(a: &Shown<'_>, errors: &[Invalid]) -> Markup {
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

pub(super) fn bank_section(a: &Shown<'_>, form: &BoardingForm, errors: &[Invalid]) -> Markup {
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

pub(super) fn review_page(form: &BoardingForm, link: &str, errors: &[Invalid]) -> Markup {
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
