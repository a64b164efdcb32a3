//! `LedgerStore::balance_transactions`: the journals of a platform and mode, newest first, each
//! as its merchant reads it, paged by where the cursor's journal stands (docs/money.md).

use diesel::prelude::*;
use holdfast_domain::ids::{MerchantId, PlatformId};
use holdfast_domain::ledger::{
    BalanceTransaction, BalanceTransactionId, Entry, Heading, Journal, JournalKind, Position,
    Purpose,
};
use holdfast_domain::merchant::Currency;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{BalanceTransactionFilter, StoreError};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::payouts::unused;
use crate::conn::Conn;
use crate::query::load_page;
use crate::rows::{corrupt, parse};
use crate::schema::ledger_journals as j;
use crate::timestamp::Instant;

#[derive(Debug, Queryable)]
pub(super) struct JournalRow {
    source_id: String,
    kind: String,
    platform_id: String,
    mode: String,
    merchant_id: String,
    currency: String,
    posted_on: OffsetDateTime,
    merchant_pending: i64,
    merchant_available: i64,
    merchant_in_transit: i64,
    platform_fees: i64,
    processor_receivable: i64,
    loan_receivable: i64,
    loan_fees: i64,
    platform_funding: i64,
}

impl TryFrom<JournalRow> for BalanceTransaction {
    type Error = StoreError;
    fn try_from(row: JournalRow) -> Result<Self, StoreError> {
        let heading = Heading {
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            currency: Currency::from_stored(&row.currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?,
            kind: parse("journal kind", &row.kind)?,
            source: row.source_id,
            posted_on: row.posted_on,
        };
        let entries = [
            (Purpose::MerchantPending, row.merchant_pending),
            (Purpose::MerchantAvailable, row.merchant_available),
            (Purpose::MerchantInTransit, row.merchant_in_transit),
            (Purpose::PlatformFees, row.platform_fees),
            (Purpose::ProcessorReceivable, row.processor_receivable),
            (Purpose::LoanReceivable, row.loan_receivable),
            (Purpose::LoanFees, row.loan_fees),
            (Purpose::PlatformFunding, row.platform_funding),
        ]
        .map(|(purpose, amount)| Entry { purpose, amount });
        let journal =
            Journal::new(heading, &entries).map_err(|e| corrupt("journal", format!("{e:?}")))?;
        Ok(Self::of(&journal))
    }
}

/// Where the cursor `raw` stands; before every journal when it names none (the service
/// refuses such cursors first).
fn position(raw: &str) -> Position {
    BalanceTransactionId::from_trusted(raw.to_owned())
        .position()
        .unwrap_or(Position {
            posted_on: OffsetDateTime::UNIX_EPOCH,
            source: String::new(),
            kind: JournalKind::Charge,
        })
}

/// The page, in the caller's connection.
pub(super) async fn list(
    conn: &mut Conn,
    scope: &Scope,
    filter: &BalanceTransactionFilter,
    page: &PageRequest,
) -> Result<Page<BalanceTransaction>, StoreError> {
    let merchant = filter.merchant.as_ref().map_or("", MerchantId::as_str);
    let kind = filter.kind.map_or("", JournalKind::as_str);
    let source = filter.source.as_deref().unwrap_or("");
    let newest = j::table
        .filter(j::platform_id.eq(scope.platform.as_str()))
        .filter(j::mode.eq(scope.mode.as_str()))
        .filter(
            j::merchant_id
                .eq(merchant)
                .or(unused(filter.merchant.is_some())),
        )
        .filter(j::kind.eq(kind).or(unused(filter.kind.is_some())))
        .filter(j::source_id.eq(source).or(unused(filter.source.is_some())))
        .order((j::posted_on.desc(), j::source_id.desc(), j::kind.desc()))
        .limit(page.fetch_count());
    load_page::<JournalRow, _, _, _, _, _, _>(
        conn,
        "ledger_journals",
        newest,
        page,
        |q, after| {
            let p = position(after);
            let at = Instant(p.posted_on);
            q.filter(
                j::posted_on.lt(at).or(j::posted_on.eq(at).and(
                    j::source_id
                        .lt(p.source.clone())
                        .or(j::source_id.eq(p.source).and(j::kind.lt(p.kind.as_str()))),
                )),
            )
        },
        |q, before| {
            let p = position(before);
            let at = Instant(p.posted_on);
            q.filter(
                j::posted_on.gt(at).or(j::posted_on.eq(at).and(
                    j::source_id
                        .gt(p.source.clone())
                        .or(j::source_id.eq(p.source).and(j::kind.gt(p.kind.as_str()))),
                )),
            )
            .order((j::posted_on.asc(), j::source_id.asc(), j::kind.asc()))
        },
    )
    .await
}
