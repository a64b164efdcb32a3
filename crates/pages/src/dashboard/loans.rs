//! Loans: the platform's loans to its merchants, newest first, filtered by state, and one
//! loan's terms and repayments (docs/loans.md); read through the same service as `/v1/loans`.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::ids::LoanId;
use holdfast_domain::loan::{Loan, LoanRepayment, LoanState};
use holdfast_domain::money::format;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::LoanFilter;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::Signed;
use super::layout::when;
use super::{DashboardError, layout, respond};
use crate::PagesState;

pub const PATH: &str = "/dashboard/loans";

/// Loans a page shows, and repayments.
const PAGE: u32 = 50;

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(show));
}

/// The page's query: the state shown, where the list starts, and the loan opened.
#[derive(Debug, Default, Deserialize)]
struct Query {
    #[serde(default)]
    state: String,
    #[serde(default)]
    after: String,
    #[serde(default)]
    loan: String,
}

async fn show(
    req: HttpRequest,
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let query: Query =
        serde_urlencoded::from_str(req.query_string()).map_err(|_| DashboardError::BadForm)?;
    let who = signed.principal();
    // A state or cursor that is not one shows every loan from the newest, never repeated.
    let shown = query.state.parse::<LoanState>().ok();
    let after = LoanId::parse("after", &query.after)
        .ok()
        .map(|id| id.to_string());
    let body = match LoanId::parse("loan", &query.loan) {
        Ok(id) if !query.loan.is_empty() => {
            let page = PageRequest::new(Some(PAGE.into()), None)?;
            let (loan, repayments) = state.loans.with_repayments(&who, &id, &page).await?;
            one(&loan, &repayments)
        }
        _ => list(&state, &who, shown, after).await?,
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Loans", PATH, &body),
    ))
}

async fn list(
    state: &PagesState,
    who: &Principal,
    shown: Option<LoanState>,
    after: Option<String>,
) -> Result<Markup, DashboardError> {
    let filter = LoanFilter {
        merchant: None,
        state: shown,
    };
    let found = state
        .loans
        .list(who, &filter, &PageRequest::new(Some(PAGE.into()), after)?)
        .await?;
    let state_query = shown.map_or(String::new(), |s| format!("state={s}&"));
    let older = found
        .data
        .last()
        .filter(|_| found.has_more)
        .map(|l| format!("{PATH}?{state_query}after={}", l.id));
    Ok(html! {
        h1 { "Loans" }
        p { "Loans offered to your merchants: each is repaid by a share of the merchant's settlements. Offer one with " code { "POST /v1/loans" } "." }
        form.filters method="get" action=(PATH) {
            div { label for="l-state" { "State" }
                select #l-state name="state" {
                    option value="" { "Any" }
                    @for s in LoanState::ALL {
                        option value=(s.as_str()) selected[shown == Some(*s)] { (s.as_str()) }
                    }
                } }
            button type="submit" { "Show" }
        }
        div.table role="region" aria-label="Loans" tabindex="0" {
            table {
                caption { "Your loans, newest first" }
                thead { tr {
                    th scope="col" { "Loan" } th scope="col" { "Merchant" } th scope="col" { "State" }
                    th scope="col" { "Advance" } th scope="col" { "Repaid" } th scope="col" { "Outstanding" }
                    th scope="col" { "Offered" }
                } }
                tbody {
                    @for l in &found.data {
                        tr {
                            td { a href={ (PATH) "?loan=" (l.id.as_str()) } { code { (l.id.as_str()) } } }
                            td { code { (l.merchant_id.as_str()) } }
                            td { (l.state.as_str()) }
                            td.amount { (format(l.terms.advance, l.currency)) }
                            td.amount { (format(l.repaid, l.currency)) }
                            td.amount { (format(l.outstanding(), l.currency)) }
                            td { (when(l.created_on)) }
                        }
                    }
                    @if found.data.is_empty() { tr { td colspan="7" { @if shown.is_some() { "No loans in this state." } @else { "No loans yet." } } } }
                }
            }
        }
        @if let Some(older) = older { p { a href=(older) { "Older loans" } } }
    })
}

fn one(l: &Loan, repayments: &Page<LoanRepayment>) -> Markup {
    let c = l.currency;
    let t = &l.terms;
    html! {
        h1 { "Loan " code { (l.id.as_str()) } }
        p { a href=(PATH) { "All loans" } }
        dl.facts {
            dt { "Merchant" } dd { code { (l.merchant_id.as_str()) } }
            dt { "State" } dd { (l.state.as_str()) }
            dt { "Advance" } dd { (format(t.advance, c)) }
            dt { "Fee" } dd { (format(t.fee, c)) }
            dt { "Total to repay" } dd { (format(t.total(), c)) }
            dt { "Withheld" } dd { (t.rate_percent()) " of each settlement's net" }
            dt { "Minimum per 30 days" } dd { @if let Some(m) = t.minimum_per_30_days { (format(m, c)) } @else { "none" } }
            dt { "Repaid" } dd { (format(l.repaid, c)) }
            dt { "Outstanding" } dd { (format(l.outstanding(), c)) }
            dt { "Accepted" } dd {
                @if let Some(a) = &l.acceptance {
                    (a.name) " (" (a.by.as_str()) "), " (when(a.accepted_on))
                    @if let Some(r) = &a.consent_reference { "; consent " code { (r) } }
                } @else { "not yet" }
            }
            dt { "Payout" } dd { @if let Some(p) = &l.payout_id { code { (p.as_str()) } } @else { "none yet" } }
        }
        section {
            h2 #repayments { "Repayments" }
            div.table role="region" aria-label="Repayments" tabindex="0" {
                table {
                    caption { "Each settlement's withholding and each early repayment, newest first" }
                    thead { tr {
                        th scope="col" { "Repayment" } th scope="col" { "How" } th scope="col" { "Amount" }
                        th scope="col" { "Outstanding after" } th scope="col" { "When" }
                    } }
                    tbody {
                        @for r in &repayments.data {
                            tr {
                                td { code { (r.id.as_str()) } }
                                td { (r.kind.as_str()) }
                                td.amount { (format(r.amount, c)) }
                                td.amount { (format(r.outstanding, c)) }
                                td { (when(r.created_on)) }
                            }
                        }
                        @if repayments.data.is_empty() { tr { td colspan="5" { "Nothing repaid yet." } } }
                    }
                }
            }
        }
    }
}
