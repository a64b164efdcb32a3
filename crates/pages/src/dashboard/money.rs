//! Money: a merchant's balances, its payouts and its balance transactions (docs/money.md), read
//! through the same services as `/v1/balances`, `/v1/payouts` and `/v1/balance-transactions`;
//! and its balance transactions as CSV, for reconciliation with the bank's statement.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::ids::MerchantId;
use holdfast_domain::ledger::{BalanceTransaction, BalanceTransactionId};
use holdfast_domain::merchant::Merchant;
use holdfast_domain::money::format;
use holdfast_domain::page::PageRequest;
use holdfast_domain::ports::{BalanceTransactionFilter, PayoutFilter};
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::Signed;
use super::layout::when;
use super::{DashboardError, download, layout, respond};
use crate::PagesState;

pub const PATH: &str = "/dashboard/money";

const CSV_PATH: &str = "/dashboard/money/balance-transactions.csv";

/// Balance transactions a page shows, and payouts.
const PAGE: u32 = 50;
const PAYOUTS_SHOWN: u32 = 20;

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(show))
        .service(web::resource(CSV_PATH).get(csv));
}

/// The page's query: the merchant chosen, and where the balance transactions page starts.
#[derive(Debug, Default, Deserialize)]
struct Query {
    #[serde(default)]
    merchant: String,
    #[serde(default)]
    after: String,
}

impl Query {
    fn read(req: &HttpRequest) -> Result<Self, DashboardError> {
        serde_urlencoded::from_str(req.query_string()).map_err(|_| DashboardError::BadForm)
    }
}

/// The merchant `raw` names in the session's platform and mode; `None` when none is chosen.
/// One that cannot be an id names none: not found, never repeated.
async fn chosen(
    state: &PagesState,
    who: &Principal,
    raw: &str,
) -> Result<Option<Merchant>, DashboardError> {
    if raw.is_empty() {
        return Ok(None);
    }
    let id =
        MerchantId::parse("merchant", raw).map_err(|_| DashboardError::NotFound("merchant"))?;
    Ok(Some(state.merchants.get(who, &id).await?))
}

async fn show(
    req: HttpRequest,
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let query = Query::read(&req)?;
    let who = signed.principal();
    let merchants = state
        .merchants
        .list(&who, &PageRequest::new(Some(100), None)?)
        .await?;
    let merchant = chosen(&state, &who, &query.merchant).await?;
    let picker = html! {
        form.filters method="get" action=(PATH) {
            div { label for="m-merchant" { "Merchant" }
                select #m-merchant name="merchant" {
                    option value="" { "Choose one" }
                    @for m in &merchants.data {
                        option value=(m.id.as_str()) selected[merchant.as_ref().is_some_and(|c| c.id == m.id)] { (m.details.name.as_str()) }
                    }
                } }
            button type="submit" { "Show" }
        }
    };
    let body = match &merchant {
        None => html! {
            h1 { "Money" }
            (picker)
            p { "Choose a merchant to see its balances, its payouts and every posting that moved its money." }
        },
        Some(m) => html! {
            h1 { "Money: " (m.details.name.as_str()) }
            (picker)
            (balances(&state, &who, m).await?)
            (payouts(&state, &who, m).await?)
            (transactions(&state, &who, m, &query.after).await?)
        },
    };
    Ok(respond(
        StatusCode::OK,
        layout::page(&signed, "Money", PATH, &body),
    ))
}

async fn balances(
    state: &PagesState,
    who: &Principal,
    m: &Merchant,
) -> Result<Markup, DashboardError> {
    let balances = state.ledger.balances(who, &m.id).await?;
    Ok(html! {
        section {
            h2 #balances { "Balances" }
            div.table role="region" aria-label="Balances" tabindex="0" {
                table {
                    caption { "What the merchant holds, per currency" }
                    thead { tr {
                        th scope="col" { "Currency" } th scope="col" { "Available" }
                        th scope="col" { "Pending" } th scope="col" { "In transit" }
                    } }
                    tbody {
                        @for b in &balances {
                            tr {
                                td { (b.currency.as_str()) }
                                td.amount { (format(b.available, b.currency)) }
                                td.amount { (format(b.pending, b.currency)) }
                                td.amount { (format(b.in_transit, b.currency)) }
                            }
                        }
                    }
                }
            }
        }
    })
}

async fn payouts(
    state: &PagesState,
    who: &Principal,
    m: &Merchant,
) -> Result<Markup, DashboardError> {
    let filter = PayoutFilter {
        merchant: Some(m.id.clone()),
        state: None,
    };
    let found = state
        .payouts
        .payouts(
            who,
            &filter,
            &PageRequest::new(Some(PAYOUTS_SHOWN.into()), None)?,
        )
        .await?;
    Ok(html! {
        section {
            h2 #payouts { "Payouts" }
            div.table role="region" aria-label="Payouts" tabindex="0" {
                table {
                    caption { "The merchant's newest payouts" }
                    thead { tr {
                        th scope="col" { "Payout" } th scope="col" { "Amount" } th scope="col" { "State" }
                        th scope="col" { "Account" } th scope="col" { "Trace" } th scope="col" { "Made" }
                    } }
                    tbody {
                        @for p in &found.data {
                            tr {
                                td { code { (p.id.as_str()) } }
                                td.amount { (format(p.amount, p.currency)) }
                                td { (p.state.as_str()) @if let Some(f) = &p.failure { " (" (f.code.as_code()) ": " (f.message) ")" } }
                                td { "····" (p.bank_last4) }
                                td { @if let Some(t) = &p.trace_number { code { (t) } } @else { "none" } }
                                td { (when(p.created_on)) }
                            }
                        }
                        @if found.data.is_empty() { tr { td colspan="6" { "No payouts yet." } } }
                    }
                }
            }
        }
    })
}

async fn transactions(
    state: &PagesState,
    who: &Principal,
    m: &Merchant,
    after: &str,
) -> Result<Markup, DashboardError> {
    // A cursor that is not one starts the list from the newest, never repeated.
    let after = BalanceTransactionId::parse("after", after)
        .ok()
        .filter(|id| id.position().is_some())
        .map(|id| id.to_string());
    let filter = BalanceTransactionFilter {
        merchant: Some(m.id.clone()),
        ..BalanceTransactionFilter::default()
    };
    let found = state
        .ledger
        .balance_transactions(who, &filter, &PageRequest::new(Some(PAGE.into()), after)?)
        .await?;
    let older = found
        .data
        .last()
        .filter(|_| found.has_more)
        .map(|t| format!("{PATH}?merchant={}&after={}", m.id, t.id));
    Ok(html! {
        section {
            h2 #postings { "Balance transactions" }
            p { a href={ (CSV_PATH) "?merchant=" (m.id.as_str()) } download { "Download all as CSV" } }
            div.table role="region" aria-label="Balance transactions" tabindex="0" {
                table {
                    caption { "Every posting that moved the merchant's money, newest first" }
                    thead { tr {
                        th scope="col" { "Type" } th scope="col" { "Source" } th scope="col" { "Amount" }
                        th scope="col" { "Fee" } th scope="col" { "Net" } th scope="col" { "Available" }
                        th scope="col" { "Posted" }
                    } }
                    tbody {
                        @for t in &found.data {
                            tr {
                                td { (t.kind.as_str()) }
                                td { code { (t.source_id) } }
                                td.amount { (format(t.amount, t.currency)) }
                                td.amount { (format(t.fee, t.currency)) }
                                td.amount { (format(t.net, t.currency)) }
                                td.amount { (format(t.balances.available, t.currency)) }
                                td { (when(t.created_on)) }
                            }
                        }
                        @if found.data.is_empty() { tr { td colspan="7" { "Nothing posted yet." } } }
                    }
                }
            }
            @if let Some(older) = older { p { a href=(older) { "Older balance transactions" } } }
        }
    })
}

/// The CSV's header: the API's fields, amounts in minor units.
const CSV_HEADER: &str = "id,type,source_id,payout_id,currency,amount,fee,net,pending,available,in_transit,created_on\r\n";

/// One row: every value ours (ids, words, integers, a timestamp), none a person typed, so none
/// needs quoting and none can be read as a spreadsheet formula.
fn csv_row(t: &BalanceTransaction) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{}\r\n",
        t.id,
        t.kind.as_str(),
        t.source_id,
        t.payout_id.as_ref().map_or("", |p| p.as_str()),
        t.currency.as_str(),
        t.amount,
        t.fee,
        t.net,
        t.balances.pending,
        t.balances.available,
        t.balances.in_transit,
        holdfast_domain::payment::transaction::format_timestamp(t.created_on),
    )
}

/// Every balance transaction of the merchant, newest first, as CSV.
async fn csv(
    req: HttpRequest,
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let query = Query::read(&req)?;
    let who = signed.principal();
    let m = chosen(&state, &who, &query.merchant)
        .await?
        .ok_or(DashboardError::NotFound("merchant"))?;
    let filter = BalanceTransactionFilter {
        merchant: Some(m.id.clone()),
        ..BalanceTransactionFilter::default()
    };
    let mut text = String::from(CSV_HEADER);
    let mut after = None;
    loop {
        let page = PageRequest::new(Some(PageRequest::MAX_LIMIT.into()), after)?;
        let found = state
            .ledger
            .balance_transactions(&who, &filter, &page)
            .await?;
        for t in &found.data {
            text.push_str(&csv_row(t));
        }
        match found.data.last() {
            Some(last) if found.has_more => after = Some(last.id.to_string()),
            _ => break,
        }
    }
    Ok(download(
        &format!("balance-transactions-{}.csv", m.id),
        "text/csv; charset=utf-8",
        text,
    ))
}
