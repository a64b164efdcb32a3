//! `LedgerStore`: balances summed from the entries, and the whole ledger checked; and
//! `write_journal`, for the stores that post a journal with what it records.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use holdfast_domain::ids::MerchantId;
use holdfast_domain::ledger::{Journal, JournalKind, Purpose};
use holdfast_domain::ledger::{SettlementReport, SettlementRun};
use holdfast_domain::merchant::Currency;
use holdfast_domain::ports::{Announce, Balance, LedgerCheck, LedgerStore, StoreError};
use holdfast_domain::scope::Scope;

use super::SqlStore;
use crate::conn::Conn;
use crate::error::query_error;
use crate::ledger_rows::entry_rows;
use crate::rows::corrupt;
use crate::schema::ledger_entries as e;

/// Writes `journal`'s entries, in the caller's SQL transaction.
pub async fn write_journal(conn: &mut Conn, journal: &Journal) -> QueryResult<()> {
    // One statement per row: diesel has no multi-row insert for SQLite.
    for row in entry_rows(journal) {
        conn.execute(diesel::insert_into(e::table).values(row))
            .await?;
    }
    Ok(())
}

/// A difference `check` found, in words: its first column names it, the second says what.
#[derive(QueryableByName)]
struct Finding {
    #[diesel(sql_type = Text)]
    subject: String,
    #[diesel(sql_type = Text)]
    what: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The checks, each a query of what breaks its rule (no row when the books are whole). A
/// journal is the entries of one source and kind.
const FINDINGS: &[&str] = &[
    // Each journal moves two or more accounts and sums to zero…
    "SELECT source_id || ' (' || kind || ')' AS subject,
            'moves ' || CAST(count(*) AS TEXT) || ' account(s) and sums to '
              || CAST(sum(amount) AS TEXT) AS what
       FROM ledger_entries
      GROUP BY source_id, kind
     HAVING count(*) < 2 OR sum(amount) <> 0",
    // …and its entries agree on its heading.
    "SELECT source_id || ' (' || kind || ')' AS subject,
            'its entries disagree on their platform, mode, merchant, currency or time' AS what
       FROM ledger_entries
      GROUP BY source_id, kind
     HAVING count(DISTINCT platform_id) > 1 OR count(DISTINCT mode) > 1
         OR count(DISTINCT merchant_id) > 1 OR count(DISTINCT currency) > 1
         OR count(DISTINCT posted_on) > 1",
    // Each money-moving transaction has its journal (docs/money.md)…
    "SELECT t.id AS subject, 'a ' || t.kind || ' in state ' || t.state || ' has no journal' AS what
       FROM transactions t
      WHERE t.kind IN ('sale', 'capture', 'refund') AND t.state = 'settled'
        AND NOT EXISTS (SELECT 1 FROM ledger_entries e WHERE e.source_id = t.id)",
    // …and no other transaction has one.
    "SELECT DISTINCT e.source_id AS subject, 'a ' || t.kind || ' in state ' || t.state || ' has a journal' AS what
       FROM ledger_entries e JOIN transactions t ON t.id = e.source_id
      WHERE NOT (t.kind IN ('sale', 'capture', 'refund') AND t.state = 'settled')",
    // A settlement moves exactly what its charge left pending, between the merchant's
    // pending and available accounts.
    "SELECT s.source_id || ' (settlement)' AS subject,
            'moves ' || CAST(s.amount AS TEXT) || ' where its charge left '
              || COALESCE(CAST(-c.amount AS TEXT), 'nothing') || ' pending' AS what
       FROM ledger_entries s
       LEFT JOIN ledger_entries c
         ON c.source_id = s.source_id AND c.kind = 'charge' AND c.purpose = 'merchant_pending'
      WHERE s.kind = 'settlement' AND s.purpose = 'merchant_pending'
        AND (c.amount IS NULL OR s.amount <> -c.amount)
     UNION ALL
     SELECT source_id || ' (settlement)' AS subject,
            'moves an account other than the merchant''s pending and available: ' || purpose AS what
       FROM ledger_entries
      WHERE kind = 'settlement' AND purpose NOT IN ('merchant_pending', 'merchant_available')",
    // Every platform's accounts sum to zero in each mode and currency.
    "SELECT platform_id || ' ' || mode || ' ' || currency AS subject,
            'its accounts sum to ' || CAST(sum(amount) AS TEXT) AS what
       FROM ledger_entries
      GROUP BY platform_id, mode, currency
     HAVING sum(amount) <> 0",
];

/// The query of entries naming no known account or kind.
fn unknown_words() -> String {
    let list = |words: &mut dyn Iterator<Item = &'static str>| {
        words
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "SELECT source_id AS subject, 'an entry names no known account: ' || purpose AS what
           FROM ledger_entries WHERE purpose NOT IN ({})
         UNION ALL
         SELECT DISTINCT source_id AS subject, 'a journal of no known kind: ' || kind AS what
           FROM ledger_entries WHERE kind NOT IN ({})",
        list(&mut Purpose::ALL.iter().map(|p| p.as_str())),
        list(&mut JournalKind::ALL.iter().map(|k| k.as_str())),
    )
}

#[async_trait::async_trait]
impl LedgerStore for SqlStore {
    async fn balances(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Vec<Balance>, StoreError> {
        let mut conn = self.conn().await?;
        let sums: Vec<(String, String, i64)> = conn
            .load(
                e::table
                    .filter(e::platform_id.eq(scope.platform.as_str()))
                    .filter(e::mode.eq(scope.mode.as_str()))
                    .filter(e::merchant_id.eq(merchant.as_str()))
                    .filter(e::purpose.eq_any([
                        Purpose::MerchantAvailable.as_str(),
                        Purpose::MerchantPending.as_str(),
                        Purpose::MerchantInTransit.as_str(),
                    ]))
                    .group_by((e::currency, e::purpose))
                    .select((
                        e::currency,
                        e::purpose,
                        diesel::dsl::sql::<BigInt>("CAST(sum(amount) AS BIGINT)"),
                    ))
                    .order((e::currency, e::purpose)),
            )
            .await
            .map_err(query_error("ledger_entries"))?;
        let mut balances: Vec<Balance> = Vec::new();
        for (currency, purpose, sum) in sums {
            let currency = Currency::from_stored(&currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?;
            let purpose: Purpose = crate::rows::parse("account purpose", &purpose)?;
            if balances.last().is_none_or(|b| b.currency != currency) {
                balances.push(Balance {
                    currency,
                    available: 0,
                    pending: 0,
                    in_transit: 0,
                });
            }
            let Some(balance) = balances.last_mut() else {
                continue;
            };
            // Credits are what the merchant is owed: shown negated.
            let owed = sum
                .checked_neg()
                .ok_or_else(|| corrupt("balance", "out of range"))?;
            match purpose {
                Purpose::MerchantAvailable => balance.available = owed,
                Purpose::MerchantPending => balance.pending = owed,
                Purpose::MerchantInTransit => balance.in_transit = owed,
                Purpose::PlatformFees | Purpose::ProcessorReceivable => {}
            }
        }
        Ok(balances)
    }

    async fn check(&self) -> Result<LedgerCheck, StoreError> {
        let mut conn = self.conn().await?;
        let count =
            |table: &'static str| format!("SELECT CAST(count(*) AS BIGINT) AS n FROM {table}");
        let journals: Count = conn
            .get_result(diesel::sql_query(count(
                "(SELECT DISTINCT source_id, kind FROM ledger_entries) journals",
            )))
            .await
            .map_err(query_error("ledger_entries"))?;
        let entries: Count = conn
            .get_result(diesel::sql_query(count("ledger_entries")))
            .await
            .map_err(query_error("ledger_entries"))?;
        let mut problems = Vec::new();
        let unknown = unknown_words();
        for query in FINDINGS.iter().copied().chain([unknown.as_str()]) {
            let found: Vec<Finding> = conn
                .load(diesel::sql_query(query))
                .await
                .map_err(query_error("ledger_entries"))?;
            problems.extend(
                found
                    .into_iter()
                    .map(|f| format!("{}: {}", f.subject, f.what)),
            );
        }
        Ok(LedgerCheck {
            journals: u64::try_from(journals.n).unwrap_or(0),
            entries: u64::try_from(entries.n).unwrap_or(0),
            problems,
        })
    }

    async fn settle(
        &self,
        run: &SettlementRun,
        announce: std::sync::Arc<dyn Announce>,
    ) -> Result<SettlementReport, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| super::settlement::settle_due(conn, run, &*announce).await)
            .await
            .map_err(query_error("ledger_entries"))
    }
}
