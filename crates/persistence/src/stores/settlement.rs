//! Settlement runs (`LedgerStore::settle`): set-based SQL that moves every due charge's net
//! from pending to available in one transaction, with one event per merchant and the run's
//! own row (docs/money.md).
//!
//! A run reads only the window of charges that can still be unsettled: from the oldest one
//! the last run left pending (less `LATE_COMMIT_GRACE`), through `ledger_journals_charges_idx`.

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use holdfast_domain::ids::{MerchantId, PlatformId};
use holdfast_domain::ledger::{
    LATE_COMMIT_GRACE, MerchantSettled, SettledAmount, SettlementReport, SettlementRun,
};
use holdfast_domain::loan::Loan;
use holdfast_domain::merchant::Currency;
use holdfast_domain::ports::{Announce, Changed, StoreError};
use std::collections::HashMap;
use time::OffsetDateTime;

use super::outbox::write_event_data;
use crate::conn::{Conn, Lock};
use crate::rows::corrupt;
use crate::schema::{plans as p, settlement_runs as r};
use crate::timestamp::{Instant, Ts};

/// Each due charge of plans with one delay: what it left pending moved to available, posted
/// at the run's time. Binds: the run's time, the window's start, the delay's cutoff, the delay.
const SETTLE: &str = "
INSERT INTO ledger_journals
       (source_id, kind, platform_id, mode, merchant_id, currency, posted_on, merchant_pending,
        merchant_available)
SELECT c.source_id, 'settlement', c.platform_id, c.mode, c.merchant_id, c.currency, $1,
       -c.merchant_pending, c.merchant_pending
  FROM ledger_journals c
  JOIN transactions t ON t.id = c.source_id AND t.state = 'settled'
  JOIN plans p ON p.id = t.plan_id
 WHERE c.kind = 'charge' AND c.merchant_pending <> 0
   AND c.posted_on >= $2 AND c.posted_on <= $3
   AND p.settlement_delay_days = $4
   AND NOT EXISTS (SELECT 1 FROM ledger_journals s
                    WHERE s.source_id = c.source_id AND s.kind = 'settlement')";

/// What this run settled, per merchant and currency (its settlements are posted at its time),
/// as the merchant reads it.
const SETTLED: &str = "
SELECT platform_id, mode, merchant_id, currency,
       CAST(-sum(merchant_available) AS BIGINT) AS amount,
       CAST(count(*) AS BIGINT) AS transactions
  FROM ledger_journals
 WHERE kind = 'settlement' AND posted_on = $1
 GROUP BY platform_id, mode, merchant_id, currency
 ORDER BY platform_id, mode, merchant_id, currency";

/// The oldest charge in the window still pending after the run (of the charges a run settles:
/// a transaction still settled, on a plan).
const UNSETTLED_FROM: &str = "
SELECT min(c.posted_on) AS oldest
  FROM ledger_journals c
  JOIN transactions t ON t.id = c.source_id AND t.state = 'settled'
  JOIN plans p ON p.id = t.plan_id
 WHERE c.kind = 'charge' AND c.merchant_pending <> 0 AND c.posted_on >= $1
   AND NOT EXISTS (SELECT 1 FROM ledger_journals s
                    WHERE s.source_id = c.source_id AND s.kind = 'settlement')";

#[derive(QueryableByName)]
struct Settled {
    #[diesel(sql_type = Text)]
    platform_id: String,
    #[diesel(sql_type = Text)]
    mode: String,
    #[diesel(sql_type = Text)]
    merchant_id: String,
    #[diesel(sql_type = Text)]
    currency: String,
    #[diesel(sql_type = BigInt)]
    amount: i64,
    #[diesel(sql_type = BigInt)]
    transactions: i64,
}

#[derive(QueryableByName)]
struct Oldest {
    #[diesel(sql_type = Nullable<Ts>)]
    oldest: Option<OffsetDateTime>,
}

/// The run, in the caller's SQL transaction.
pub async fn settle_due(
    conn: &mut Conn,
    run: &SettlementRun,
    announce: &dyn Announce,
) -> QueryResult<SettlementReport> {
    conn.lock(Lock::SettlementRun).await?;
    let last: Option<(OffsetDateTime, OffsetDateTime)> = conn
        .load(
            r::table
                .order(r::ran_on.desc())
                .select((r::ran_on, r::unsettled_from))
                .limit(1),
        )
        .await?
        .pop();
    let from = last
        .filter(|_| !run.from_start)
        .and_then(|(_, unsettled)| unsettled.checked_sub(LATE_COMMIT_GRACE))
        .unwrap_or(OffsetDateTime::UNIX_EPOCH);
    // A run's settlements are known by their posting time, so each run's is its own: after
    // the last run's, however close the two came (or a clock that stepped back).
    let stamp = last
        .and_then(|(ran_on, _)| ran_on.checked_add(time::Duration::microseconds(1)))
        .map_or(run.now, |after_last| run.now.max(after_last));
    let delays: Vec<i32> = conn
        .load(p::table.select(p::settlement_delay_days).distinct())
        .await?;
    for days in delays {
        let delay = holdfast_domain::ledger::SettlementDelay::new("days", i64::from(days))
            .map_err(|e| unreadable(corrupt("settlement delay", e)))?;
        conn.execute(
            diesel::sql_query(SETTLE)
                .bind::<Ts, _>(Instant(stamp))
                .bind::<Ts, _>(Instant(from))
                .bind::<Ts, _>(Instant(delay.cutoff(run.now)))
                .bind::<Integer, _>(days),
        )
        .await?;
    }
    let settled: Vec<Settled> = conn
        .load(diesel::sql_query(SETTLED).bind::<Ts, _>(Instant(stamp)))
        .await?;
    let mut report = SettlementReport {
        withheld: withhold_for_loans(conn, stamp, &settled, announce).await?,
        ..SettlementReport::default()
    };
    for group in by_merchant(settled, run)? {
        for amount in &group.settled {
            report.transactions = report.transactions.saturating_add(amount.transactions);
        }
        report.merchants = report.merchants.saturating_add(1);
        write_event_data(conn, &announce.event_for(group)).await?;
    }
    let oldest: Oldest = conn
        .get_result(diesel::sql_query(UNSETTLED_FROM).bind::<Ts, _>(Instant(from)))
        .await?;
    conn.execute(diesel::insert_into(r::table).values((
        r::id.eq(run.id.as_str()),
        r::ran_on.eq(Instant(stamp)),
        r::unsettled_from.eq(Instant(oldest.oldest.unwrap_or(run.now).min(run.now))),
        r::transactions.eq(i64::try_from(report.transactions).unwrap_or(i64::MAX)),
        r::merchants.eq(i64::try_from(report.merchants).unwrap_or(i64::MAX)),
    )))
    .await?;
    Ok(report)
}

/// Withholds, for each loan being repaid of a merchant this run settled, what the run decides
/// (`Announce::withholding`: the domain's rule over the net it settled in the loan's currency),
/// posted at the run's time with its repayment, journal, the loan's new standing and its events.
/// Under the payouts' lock, taken after the run's statements, so an early repayment of the same
/// loan waits for the run (and the run for it) but payouts do not wait on the run's long part.
/// How many repayments it made.
async fn withhold_for_loans(
    conn: &mut Conn,
    stamp: OffsetDateTime,
    settled: &[Settled],
    announce: &dyn Announce,
) -> QueryResult<u64> {
    conn.lock(Lock::Payouts).await?;
    let loans = super::loans::repaying_loans_settled_at(conn, stamp).await?;
    if loans.is_empty() {
        return Ok(0);
    }
    let nets: HashMap<(&str, &str, &str, &str), i64> = settled
        .iter()
        .map(|s| {
            let key = (
                s.platform_id.as_str(),
                s.mode.as_str(),
                s.merchant_id.as_str(),
                s.currency.as_str(),
            );
            (key, s.amount)
        })
        .collect();
    let mut withheld = 0_u64;
    for row in loans {
        let loan = Loan::try_from(row).map_err(unreadable)?;
        let key = (
            loan.platform_id.as_str(),
            loan.mode.as_str(),
            loan.merchant_id.as_str(),
            loan.currency.as_str(),
        );
        let net = nets.get(&key).copied().unwrap_or(0);
        let Some(change) = announce.withholding(&loan, net, stamp) else {
            continue;
        };
        // Under the payouts' lock nothing else changes the loan, and a withholding takes
        // nothing from the available balance: anything but written is a fault, and the run's
        // transaction rolls back whole.
        match super::loans::write_change(conn, &change).await? {
            Changed::Changed => withheld = withheld.saturating_add(1),
            other => {
                return Err(unreadable(StoreError::Unexpected(format!(
                    "{}: its withholding was not written ({other:?})",
                    loan.id
                ))));
            }
        }
    }
    Ok(withheld)
}

/// The rows, ordered by merchant, as one `MerchantSettled` per merchant.
fn by_merchant(rows: Vec<Settled>, run: &SettlementRun) -> QueryResult<Vec<MerchantSettled>> {
    let mut groups: Vec<MerchantSettled> = Vec::new();
    for row in rows {
        let amount = SettledAmount {
            currency: Currency::from_stored(&row.currency)
                .ok_or_else(|| unreadable(corrupt("currency", "not a currency code")))?,
            amount: row.amount,
            transactions: u64::try_from(row.transactions).unwrap_or(0),
        };
        match groups.last_mut() {
            Some(last)
                if last.merchant_id.as_str() == row.merchant_id
                    && last.platform_id.as_str() == row.platform_id
                    && last.mode.as_str() == row.mode =>
            {
                last.settled.push(amount);
            }
            _ => groups.push(MerchantSettled {
                merchant_id: MerchantId::from_trusted(row.merchant_id),
                platform_id: PlatformId::from_trusted(row.platform_id),
                mode: crate::rows::parse("mode", &row.mode).map_err(unreadable)?,
                settlement_run_id: run.id.clone(),
                settled: vec![amount],
            }),
        }
    }
    Ok(groups)
}

/// A stored value that does not parse, failing the run's transaction.
fn unreadable(err: holdfast_domain::ports::StoreError) -> diesel::result::Error {
    diesel::result::Error::DeserializationError(Box::new(err))
}
