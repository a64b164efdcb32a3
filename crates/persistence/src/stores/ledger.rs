//! `LedgerStore`: balances summed from the entries, and the whole ledger checked; and
//! `write_journal`, for the stores that post a journal with what it records.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use holdfast_domain::ids::MerchantId;
use holdfast_domain::ledger::{Journal, JournalKind, Purpose};
use holdfast_domain::merchant::Currency;
use holdfast_domain::ports::{Balance, LedgerCheck, LedgerStore, StoreError};
use holdfast_domain::scope::Scope;

use super::SqlStore;
use crate::conn::Conn;
use crate::error::query_error;
use crate::ledger_rows::{NewJournalRow, entry_rows};
use crate::rows::corrupt;
use crate::schema::{journals as j, ledger_entries as e};

/// Writes `journal` and its entries, in the caller's SQL transaction.
pub async fn write_journal(conn: &mut Conn, journal: &Journal) -> QueryResult<()> {
    conn.execute(diesel::insert_into(j::table).values(NewJournalRow::from(journal)))
        .await?;
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

/// The checks, each a query of what breaks its rule (no row when the books are whole).
const FINDINGS: &[&str] = &[
    // Each journal moves two or more accounts and sums to zero.
    "SELECT j.id AS subject,
            'moves ' || CAST(count(e.journal_id) AS TEXT) || ' accounts and sums to '
              || CAST(coalesce(sum(e.amount), 0) AS TEXT) AS what
       FROM journals j LEFT JOIN ledger_entries e ON e.journal_id = j.id
      GROUP BY j.id
     HAVING count(e.journal_id) < 2 OR coalesce(sum(e.amount), 0) <> 0",
    // Each entry agrees with its journal.
    "SELECT e.journal_id AS subject, 'an entry (' || e.purpose || ') disagrees with its journal on its platform, mode, merchant or currency' AS what
       FROM ledger_entries e JOIN journals j ON j.id = e.journal_id
      WHERE e.platform_id <> j.platform_id OR e.mode <> j.mode
         OR e.merchant_id <> j.merchant_id OR e.currency <> j.currency",
    // Each money-moving transaction has its journal (docs/money.md)…
    "SELECT t.id AS subject, 'a ' || t.kind || ' in state ' || t.state || ' has no journal' AS what
       FROM transactions t
      WHERE ((t.kind IN ('sale', 'capture', 'refund') AND t.state = 'settled')
             OR (t.kind = 'auth' AND t.state IN ('authorized', 'closing', 'captured', 'voided')
                 AND t.fee > 0))
        AND NOT EXISTS (SELECT 1 FROM journals j WHERE j.source_id = t.id)",
    // …and no other transaction has one.
    "SELECT j.source_id AS subject, 'a ' || t.kind || ' in state ' || t.state || ' has a journal' AS what
       FROM journals j JOIN transactions t ON t.id = j.source_id
      WHERE NOT ((t.kind IN ('sale', 'capture', 'refund') AND t.state = 'settled')
                 OR (t.kind = 'auth' AND t.state IN ('authorized', 'closing', 'captured', 'voided')))",
    // Every platform's accounts sum to zero in each mode and currency.
    "SELECT platform_id || ' ' || mode || ' ' || currency AS subject,
            'its accounts sum to ' || CAST(sum(amount) AS TEXT) AS what
       FROM ledger_entries
      GROUP BY platform_id, mode, currency
     HAVING sum(amount) <> 0",
];

/// The query of entries and journals naming no known account or kind.
fn unknown_words() -> String {
    let list = |words: &mut dyn Iterator<Item = &'static str>| {
        words
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "SELECT journal_id AS subject, 'an entry names no known account: ' || purpose AS what
           FROM ledger_entries WHERE purpose NOT IN ({})
         UNION ALL
         SELECT id AS subject, 'names no known kind: ' || kind AS what
           FROM journals WHERE kind NOT IN ({})",
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
            .get_result(diesel::sql_query(count("journals")))
            .await
            .map_err(query_error("journals"))?;
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
                .map_err(query_error("journals"))?;
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
}
