//! The Transaction Log (spec 4.6, 6.4): the mode's transactions, filtered by type, state,
//! merchant and date; a transaction's details and its Webhook Deliveries tab; a delivery's
//! details and, for an admin, Resend Webhook: queued, with a new id, to the subscription's
//! current URL (the refusals of spec 6.4 in words).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::ids::{MerchantId, NotificationId, TxnId};
use holdfast_domain::instant;
use holdfast_domain::page::PageRequest;
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::TxnFilter;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::Signed;
use super::layout::when;
use super::{DashboardError, layout, respond};
use crate::PagesState;

pub const PATH: &str = "/dashboard/transactions";

mod deliveries;

use deliveries::{deliveries, delivery, resend};

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(list))
        .service(web::resource("/dashboard/transactions/{id}").get(details))
        .service(web::resource("/dashboard/transactions/{id}/deliveries").get(deliveries))
        .service(web::resource("/dashboard/transactions/{id}/deliveries/{delivery}").get(delivery))
        .service(
            web::resource("/dashboard/transactions/{id}/deliveries/{delivery}/resend").post(resend),
        );
}

/// The filters as the form sends them: every one optional, an empty one unused.
#[derive(Debug, Default, Deserialize)]
struct Filters {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    state: String,
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    after: String,
}

/// A `YYYY-MM-DD` date's first instant in UTC.
/// A filter's value: none when left empty; none, and `ignored` set, when it does not parse.
fn optional<T>(raw: &str, parse: impl Fn(&str) -> Option<T>, ignored: &mut bool) -> Option<T> {
    if raw.is_empty() {
        return None;
    }
    let value = parse(raw);
    *ignored |= value.is_none();
    value
}

impl Filters {
    /// The filter asked for; a value that does not parse is dropped and said so, never
    /// repeated.
    fn filter(&self) -> (TxnFilter, bool) {
        let mut ignored = false;
        let filter = TxnFilter {
            kind: optional(&self.kind, |r| r.parse().ok(), &mut ignored),
            state: optional(&self.state, |r| r.parse().ok(), &mut ignored),
            merchant_id: optional(
                &self.merchant,
                |r| MerchantId::parse("merchant", r).ok(),
                &mut ignored,
            ),
            reference: None,
            created_from: optional(&self.from, instant::parse_day, &mut ignored)
                .map(instant::start_of),
            // The "to" day is included whole.
            created_until: optional(&self.to, instant::parse_day, &mut ignored)
                .map(instant::end_of),
        };
        (filter, ignored)
    }
}

async fn list(
    req: HttpRequest,
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let filters: Filters =
        serde_urlencoded::from_str(req.query_string()).map_err(|_| DashboardError::BadForm)?;
    let (filter, ignored) = filters.filter();
    let after = TxnId::parse("after", &filters.after)
        .ok()
        .map(|id| id.to_string());
    let page = PageRequest::new(Some(50), after)?;
    let who = signed.principal();
    let found = state
        .payments
        .list(&who, &filter, &page)
        .await
        .map_err(|e| DashboardError::Internal(e.to_string()))?;
    let merchants = state
        .merchants
        .list(&who, &PageRequest::new(Some(100), None)?)
        .await?;
    let mode = signed.who.session.mode;
    let older = found.data.last().filter(|_| found.has_more).map(|t| {
        // Built from the filters as understood, never from what was typed.
        let mut query = form_urlencoded::Serializer::new(String::new());
        let day_of = |at: time::OffsetDateTime| at.date().to_string();
        for (name, value) in [
            ("type", filter.kind.map(|k| k.as_str().to_owned())),
            ("state", filter.state.map(|s| s.as_str().to_owned())),
            (
                "merchant",
                filter.merchant_id.as_ref().map(ToString::to_string),
            ),
            ("from", filter.created_from.map(day_of)),
            // The "to" day was kept as the end of that day (the start of the next).
            (
                "to",
                filter
                    .created_until
                    .map(|t| instant::day_ending_at(t).to_string()),
            ),
        ] {
            if let Some(value) = value {
                query.append_pair(name, &value);
            }
        }
        query.append_pair("after", t.id.as_str());
        format!("{PATH}?{}", query.finish())
    });
    let body = html! {
        h1 { "Transaction Log" }
        @if ignored { p.error role="alert" { "A filter that could not be read was left out." } }
        form.filters method="get" action=(PATH) {
            div { label for="f-type" { "Type" }
                select #f-type name="type" {
                    option value="" { "Any" }
                    @for &k in TxnType::ALL { option value=(k.as_str()) selected[filter.kind == Some(k)] { (k.as_str()) } }
                } }
            div { label for="f-state" { "State" }
                select #f-state name="state" {
                    option value="" { "Any" }
                    @for &s in TxnState::ALL { option value=(s.as_str()) selected[filter.state == Some(s)] { (s.as_str()) } }
                } }
            div { label for="f-merchant" { "Merchant" }
                select #f-merchant name="merchant" {
                    option value="" { "Any" }
                    @for m in &merchants.data {
                        option value=(m.id.as_str()) selected[filter.merchant_id.as_ref() == Some(&m.id)] { (m.details.name.as_str()) }
                    }
                } }
            div { label for="f-from" { "From (UTC)" } input #f-from type="date" name="from" value=[filter.created_from.map(|_| filters.from.as_str())]; }
            div { label for="f-to" { "To (UTC)" } input #f-to type="date" name="to" value=[filter.created_until.map(|_| filters.to.as_str())]; }
            button type="submit" { "Filter" }
        }
        div.table role="region" aria-label="Transactions" tabindex="0" {
            table {
                caption { "The " (mode) " mode's transactions, newest first" }
                thead { tr {
                    th scope="col" { "Transaction" } th scope="col" { "Type" } th scope="col" { "State" }
                    th scope="col" { "Amount" } th scope="col" { "Card" } th scope="col" { "Created" }
                } }
                tbody {
                    @for t in &found.data {
                        tr {
                            td { a href={ (PATH) "/" (t.id.as_str()) } { code { (t.id.as_str()) } } }
                            td { (t.kind.as_str()) }
                            td { (t.state.as_str()) }
                            td.amount { (holdfast_domain::money::format(t.amount, t.currency)) }
                            td { (t.payment.brand.as_str()) " ····" (t.payment.last4) }
                            td { (when(t.created_on)) }
                        }
                    }
                    @if found.data.is_empty() { tr { td colspan="6" { "No transactions match." } } }
                }
            }
        }
        @if let Some(older) = older { p { a href=(older) { "Older transactions" } } }
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Transaction Log", PATH, &body),
    ))
}

/// The transaction of the session's mode, or not found.
async fn transaction(
    state: &PagesState,
    who: &Principal,
    id: &str,
) -> Result<Transaction, DashboardError> {
    let id = TxnId::parse("id", id).map_err(|_| DashboardError::NotFound("transaction"))?;
    state
        .payments
        .get(who, &id)
        .await
        .map_err(|e| DashboardError::Internal(e.to_string()))?
        .ok_or(DashboardError::NotFound("transaction"))
}

/// The transaction's heading and its two tabs.
fn tabs(t: &Transaction, current: &str) -> Markup {
    let base = format!("{PATH}/{}", t.id);
    let tab = |href: String, label: &str| {
        html! {
            li { @if label == current { a href=(href) aria-current="page" { (label) } } @else { a href=(href) { (label) } } }
        }
    };
    html! {
        p.crumbs { a href=(PATH) { "Transaction Log" } }
        h1 { "Transaction " code { (t.id.as_str()) } }
        nav.tabs aria-label="Transaction" {
            ul { (tab(base.clone(), "Details")) (tab(format!("{base}/deliveries"), "Webhook Deliveries")) }
        }
    }
}

async fn details(
    state: web::Data<PagesState>,
    id: web::Path<String>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let t = transaction(&state, &signed.principal(), &id).await?;
    let a = &t.authorization;
    let body = html! {
        (tabs(&t, "Details"))
        dl.facts {
            dt { "Type" } dd { (t.kind.as_str()) }
            dt { "State" } dd { (t.state.as_str()) }
            dt { "Amount" } dd { (holdfast_domain::money::format(t.amount, t.currency)) " (" (t.amount) " in minor units of " (t.currency.as_str()) ")" }
            dt { "Fee" } dd { (holdfast_domain::money::format(t.fee, t.currency)) }
            dt { "Merchant" } dd { code { (t.merchant_id.as_str()) } }
            dt { "Reference" } dd { @if let Some(r) = &t.reference { (r.as_str()) } @else { "none" } }
            (super::layout::metadata_term(&t.metadata))
            dt { "Created" } dd { (when(t.created_on)) }
            dt { "Card" } dd { (t.payment.brand.as_str()) " " (t.payment.funding.as_str()) ", BIN " (t.payment.bin) ", last four " (t.payment.last4) }
            dt { "Plan" } dd { (t.plan.name) }
            dt { "Processor" } dd { (t.processor.name) }
            dt { "Status" } dd { (a.status.as_str()) ": " (a.processor_message) " (" (a.processor_code) ")" }
            dt { "Approved amount" } dd { (holdfast_domain::money::format(a.approved_amount, t.currency)) @if a.partial { " (partial)" } }
            dt { "AVS / CVV" } dd { (a.avs.as_str()) " / " (a.cvv.as_str()) }
            dt { "Processor's id" } dd { code { (a.processor_transaction_id) } }
            @if let Some(parent) = &t.parent_id {
                dt { "Original" } dd { a href={ (PATH) "/" (parent.as_str()) } { code { (parent.as_str()) } } }
            }
            @if t.refunded_amount > 0 { dt { "Refunded" } dd { (holdfast_domain::money::format(t.refunded_amount, t.currency)) } }
        }
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Transaction", PATH, &body),
    ))
}

fn notice(query: &str) -> Option<String> {
    let id = query.strip_prefix("resent=")?;
    let id = NotificationId::parse("resent", id).ok()?;
    Some(format!(
        "Resend accepted: queued as {id}. It is not delivered yet; its outcome appears below when it is."
    ))
}

#[cfg(test)]
mod tests;
