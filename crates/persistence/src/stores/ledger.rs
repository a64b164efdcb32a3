//! `LedgerStore`: balances summed from the entries, and the whole ledger checked; and
//! `write_journal`, for the stores that post a journal with what it records.

use diesel::prelude::*;
use diesel::sql_types::BigInt;
use holdfast_domain::ids::MerchantId;
use holdfast_domain::ledger::BalanceTransaction;
use holdfast_domain::ledger::{Journal, JournalKind};
use holdfast_domain::ledger::{SettlementReport, SettlementRun};
use holdfast_domain::merchant::Currency;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{
    Announce, Balance, BalanceTransactionFilter, LedgerCheck, LedgerStore, StoreError,
};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use crate::conn::Conn;
use crate::error::query_error;
use crate::ledger_rows::NewJournalRow;
use crate::rows::corrupt;
use crate::schema::ledger_journals as j;

/// Writes `journal`, in the caller's SQL transaction.
pub async fn write_journal(conn: &mut Conn, journal: &Journal) -> QueryResult<()> {
    conn.execute(diesel::insert_into(j::table).values(NewJournalRow::from(journal)))
        .await
        .map(drop)
}

#[async_trait::async_trait]
impl LedgerStore for SqlStore {
    async fn balance_transactions(
        &self,
        scope: &Scope,
        filter: &BalanceTransactionFilter,
        page: &PageRequest,
    ) -> Result<Page<BalanceTransaction>, StoreError> {
        let mut conn = self.conn().await?;
        super::balance_transactions::list(&mut conn, scope, filter, page).await
    }

    async fn processed_since(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        currency: Currency,
        since: OffsetDateTime,
    ) -> Result<i64, StoreError> {
        let mut conn = self.conn().await?;
        let sum: Option<i64> = conn
            .get_result(
                j::table
                    .filter(j::merchant_id.eq(merchant.as_str()))
                    .filter(j::platform_id.eq(scope.platform.as_str()))
                    .filter(j::mode.eq(scope.mode.as_str()))
                    .filter(j::currency.eq(currency.as_str()))
                    .filter(j::kind.eq(JournalKind::Charge.as_str()))
                    .filter(j::posted_on.ge(crate::timestamp::Instant(since)))
                    .select(diesel::dsl::sql::<diesel::sql_types::Nullable<BigInt>>(
                        "CAST(sum(processor_receivable) AS BIGINT)",
                    )),
            )
            .await
            .map_err(query_error("ledger_journals"))?;
        Ok(sum.unwrap_or(0))
    }

    async fn balances(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Vec<Balance>, StoreError> {
        let mut conn = self.conn().await?;
        let sums: Vec<(String, i64, i64, i64)> = conn
            .load(
                j::table
                    .filter(j::merchant_id.eq(merchant.as_str()))
                    .filter(j::platform_id.eq(scope.platform.as_str()))
                    .filter(j::mode.eq(scope.mode.as_str()))
                    .group_by(j::currency)
                    .select((
                        j::currency,
                        diesel::dsl::sql::<BigInt>("CAST(sum(merchant_available) AS BIGINT)"),
                        diesel::dsl::sql::<BigInt>("CAST(sum(merchant_pending) AS BIGINT)"),
                        diesel::dsl::sql::<BigInt>("CAST(sum(merchant_in_transit) AS BIGINT)"),
                    ))
                    .order(j::currency),
            )
            .await
            .map_err(query_error("ledger_journals"))?;
        // Credits are what the merchant is owed: shown negated.
        let owed = |sum: i64| {
            sum.checked_neg()
                .ok_or_else(|| corrupt("balance", "out of range"))
        };
        let mut balances = Vec::with_capacity(sums.len());
        for (currency, available, pending, in_transit) in sums {
            balances.push(Balance {
                currency: Currency::from_stored(&currency)
                    .ok_or_else(|| corrupt("currency", "not a currency code"))?,
                available: owed(available)?,
                pending: owed(pending)?,
                in_transit: owed(in_transit)?,
            });
        }
        Ok(balances)
    }

    async fn check(&self, now: OffsetDateTime) -> Result<LedgerCheck, StoreError> {
        let mut conn = self.conn().await?;
        super::ledger_check::check(&mut conn, now).await
    }

    async fn settle(
        &self,
        run: &SettlementRun,
        announce: std::sync::Arc<dyn Announce>,
    ) -> Result<SettlementReport, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| super::settlement::settle_due(conn, run, &*announce).await)
            .await
            .map_err(query_error("ledger_journals"))
    }
}
