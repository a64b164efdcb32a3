//! `holdfast ledger verify`: the whole ledger checked against the rules of the books, each
//! rule a query of the rows that break it (docs/money.md, "Checking the books").

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use holdfast_domain::ledger::{JournalKind, Purpose};
use holdfast_domain::ports::{LedgerCheck, StoreError};
use time::OffsetDateTime;

use crate::conn::Conn;
use crate::error::query_error;

/// Every journal counted, and every rule of the books that a row breaks, in words.
pub(super) async fn check(conn: &mut Conn, now: OffsetDateTime) -> Result<LedgerCheck, StoreError> {
    let moved = each_account(|c| format!("CASE WHEN {c} <> 0 THEN 1 ELSE 0 END"), " + ");
    let counts: Counts = conn
        .get_result(diesel::sql_query(format!(
            "SELECT CAST(count(*) AS BIGINT) AS journals,
                        CAST(COALESCE(sum({moved}), 0) AS BIGINT) AS entries
                   FROM ledger_journals"
        )))
        .await
        .map_err(query_error("ledger_journals"))?;
    let mut problems = Vec::new();
    for query in findings() {
        problems.extend(found(conn, diesel::sql_query(query)).await?);
    }
    problems.extend(overdue_settlements(conn, now).await?);
    Ok(LedgerCheck {
        journals: u64::try_from(counts.journals).unwrap_or(0),
        entries: u64::try_from(counts.entries).unwrap_or(0),
        problems,
    })
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
struct Counts {
    #[diesel(sql_type = BigInt)]
    journals: i64,
    #[diesel(sql_type = BigInt)]
    entries: i64,
}

/// The accounts a journal row can move, as `sum` spells the SQL of each (its column's name is
/// its purpose's word).
fn each_account(sql: impl Fn(&str) -> String, joined_by: &str) -> String {
    Purpose::ALL
        .iter()
        .map(|p| sql(p.as_str()))
        .collect::<Vec<_>>()
        .join(joined_by)
}

/// What a charge posts, by the rules of `ledger::journal_for`, from its transaction `t` and,
/// for a capture, the auth `a` whose fee it collects: the columns' expected values.
const CHARGE_RULE: &str = "j.processor_receivable = t.approved_amount
         AND j.platform_fees = -(t.fee + COALESCE(a.fee, 0))
         AND j.merchant_pending = t.fee + COALESCE(a.fee, 0) - t.approved_amount
         AND j.merchant_available = 0 AND j.merchant_in_transit = 0";

/// What a refund posts.
const REFUND_RULE: &str = "j.merchant_available = t.approved_amount + t.fee
         AND j.processor_receivable = -t.approved_amount AND j.platform_fees = -t.fee
         AND j.merchant_pending = 0 AND j.merchant_in_transit = 0";

/// The checks, each a query of what breaks its rule (no row when the books are whole). A
/// journal is one row of `ledger_journals`, known by its source and kind.
fn findings() -> Vec<String> {
    let moved = each_account(|c| format!("CASE WHEN {c} <> 0 THEN 1 ELSE 0 END"), " + ");
    let sum = each_account(str::to_owned, " + ");
    let any_left = each_account(|c| format!("sum({c}) <> 0"), " OR ");
    let kinds = JournalKind::ALL
        .iter()
        .map(|k| format!("'{}'", k.as_str()))
        .collect::<Vec<_>>()
        .join(", ");
    vec![
        // Each journal moves two or more accounts and sums to zero (the table's CHECK says the
        // same, unless it was dropped)…
        format!(
            "SELECT source_id || ' (' || kind || ')' AS subject,
                    'moves ' || CAST({moved} AS TEXT) || ' account(s) and sums to '
                      || CAST({sum} AS TEXT) AS what
               FROM ledger_journals
              WHERE {moved} < 2 OR {sum} <> 0"
        ),
        // …is of a known kind…
        format!(
            "SELECT source_id AS subject, 'a journal of no known kind: ' || kind AS what
               FROM ledger_journals WHERE kind NOT IN ({kinds})"
        ),
        // …and agrees with its transaction: whose books, which merchant, which currency.
        "SELECT j.source_id || ' (' || j.kind || ')' AS subject,
                'disagrees with its transaction on its platform, mode, merchant or currency' AS what
           FROM ledger_journals j JOIN transactions t ON t.id = j.source_id
          WHERE j.platform_id <> t.platform_id OR j.mode <> t.mode
             OR j.merchant_id <> t.merchant_id OR j.currency <> t.currency"
            .to_owned(),
        // Each money-moving transaction has its journal (docs/money.md)…
        "SELECT t.id AS subject, 'a ' || t.kind || ' in state ' || t.state || ' has no journal' AS what
           FROM transactions t
          WHERE t.kind IN ('sale', 'capture', 'refund') AND t.state = 'settled'
            AND NOT EXISTS (SELECT 1 FROM ledger_journals j
                             WHERE j.source_id = t.id
                               AND j.kind = CASE t.kind WHEN 'refund' THEN 'refund' ELSE 'charge' END)"
            .to_owned(),
        // …and no other transaction has one: but a capture or refund its processor failed
        // after confirming it keeps what it posted, with the reversal that undoes it.
        "SELECT j.source_id || ' (' || j.kind || ')' AS subject,
                'a ' || COALESCE(t.kind || ' in state ' || t.state, 'transaction that does not exist')
                  || ' has this journal' AS what
           FROM ledger_journals j LEFT JOIN transactions t ON t.id = j.source_id
          WHERE j.kind NOT IN ('payout', 'payout_paid', 'payout_returned', 'loan_advance',
                               'loan_withholding', 'loan_repayment', 'loan_charge_off')
            AND (t.id IS NULL
             OR NOT ((t.state = 'settled' AND (
                        (j.kind IN ('charge', 'settlement') AND t.kind IN ('sale', 'capture'))
                     OR (j.kind = 'refund' AND t.kind = 'refund')))
                  OR (t.state = 'failed' AND EXISTS (
                        SELECT 1 FROM ledger_journals r
                         WHERE r.source_id = j.source_id AND r.kind = 'reversal') AND (
                        (j.kind IN ('charge', 'settlement', 'reversal') AND t.kind = 'capture')
                     OR (j.kind IN ('refund', 'reversal') AND t.kind = 'refund')))))"
            .to_owned(),
        // A reversed transaction's journals net to zero in every account.
        format!(
            "SELECT j.source_id AS subject,
                    'failed, and its journals do not net to zero in every account' AS what
               FROM ledger_journals j JOIN transactions t ON t.id = j.source_id
              WHERE t.state = 'failed'
              GROUP BY j.source_id
             HAVING {any_left}"
        ),
        // Each charge and refund posts what its transaction makes, by the posting rules.
        format!(
            "SELECT j.source_id || ' (' || j.kind || ')' AS subject,
                    'its amounts are not what its transaction posts' AS what
               FROM ledger_journals j
               JOIN transactions t ON t.id = j.source_id
               LEFT JOIN transactions a ON a.id = t.parent_id AND t.kind = 'capture'
              WHERE t.state = 'settled'
                AND ((j.kind = 'charge' AND NOT ({CHARGE_RULE}))
                  OR (j.kind = 'refund' AND NOT ({REFUND_RULE})))"
        ),
        // A settlement moves exactly what its charge left pending, from pending to available.
        "SELECT s.source_id || ' (settlement)' AS subject,
                'moves ' || CAST(s.merchant_pending AS TEXT) || ' where its charge left '
                  || COALESCE(CAST(-c.merchant_pending AS TEXT), 'nothing') || ' pending' AS what
           FROM ledger_journals s
           LEFT JOIN ledger_journals c ON c.source_id = s.source_id AND c.kind = 'charge'
          WHERE s.kind = 'settlement'
            AND (c.merchant_pending IS NULL OR s.merchant_pending <> -c.merchant_pending
                 OR s.merchant_available <> c.merchant_pending OR s.platform_fees <> 0
                 OR s.processor_receivable <> 0 OR s.merchant_in_transit <> 0)"
            .to_owned(),
        PAYOUT_JOURNALS.to_owned(),
        PAYOUT_MOVES.to_owned(),
        LOAN_JOURNALS.to_owned(),
        LOAN_BOOKS.to_owned(),
        // Every platform's accounts sum to zero in each mode and currency.
        format!(
            "SELECT platform_id || ' ' || mode || ' ' || currency AS subject,
                    'its accounts sum to ' || CAST(sum({sum}) AS TEXT) AS what
               FROM ledger_journals
              GROUP BY platform_id, mode, currency
             HAVING sum({sum}) <> 0"
        ),
    ]
}

/// Each payout journal is of a payout, agrees with it, and posts what its move posts
/// (`holdfast_domain::payout`'s table): a loan's payout is paid from the platform's funding
/// where any other is from the processors' receivable.
const PAYOUT_JOURNALS: &str = "
SELECT j.source_id || ' (' || j.kind || ')' AS subject,
       CASE WHEN p.id IS NULL THEN 'a journal of a payout that does not exist'
            WHEN j.platform_id <> p.platform_id OR j.mode <> p.mode
              OR j.merchant_id <> p.merchant_id OR j.currency <> p.currency
            THEN 'disagrees with its payout on its platform, mode, merchant or currency'
            ELSE 'its amounts are not what its payout posts' END AS what
  FROM ledger_journals j
  LEFT JOIN payouts p ON p.id = j.source_id
  LEFT JOIN ledger_journals pd ON pd.source_id = j.source_id AND pd.kind = 'payout_paid'
 WHERE j.kind IN ('payout', 'payout_paid', 'payout_returned')
   AND (p.id IS NULL OR j.platform_id <> p.platform_id OR j.mode <> p.mode
        OR j.merchant_id <> p.merchant_id OR j.currency <> p.currency
        OR j.merchant_pending <> 0 OR j.platform_fees <> 0
        OR j.loan_receivable <> 0 OR j.loan_fees <> 0
        OR (CASE WHEN p.method = 'loan' THEN j.processor_receivable ELSE j.platform_funding END) <> 0
        OR NOT ((j.kind = 'payout' AND j.merchant_available = p.amount
                 AND j.merchant_in_transit = -p.amount
                 AND j.processor_receivable + j.platform_funding = 0)
             OR (j.kind = 'payout_paid' AND j.merchant_available = 0
                 AND j.merchant_in_transit = p.amount
                 AND j.processor_receivable + j.platform_funding = -p.amount)
             -- Returned: from in transit, or from where it was paid from once it was paid.
             OR (j.kind = 'payout_returned' AND j.merchant_available = -p.amount
                 AND ((pd.source_id IS NULL AND j.merchant_in_transit = p.amount
                       AND j.processor_receivable + j.platform_funding = 0)
                   OR (pd.source_id IS NOT NULL AND j.merchant_in_transit = 0
                       AND j.processor_receivable + j.platform_funding = p.amount)))))";

/// Each loan journal is of its loan (an advance, a charge-off) or of one of its repayments,
/// agrees with it, and posts what docs/loans.md's table says.
const LOAN_JOURNALS: &str = "
SELECT j.source_id || ' (' || j.kind || ')' AS subject,
       CASE WHEN l.id IS NULL THEN 'a journal of a loan or repayment that does not exist'
            WHEN j.platform_id <> l.platform_id OR j.mode <> l.mode
              OR j.merchant_id <> l.merchant_id OR j.currency <> l.currency
            THEN 'disagrees with its loan on its platform, mode, merchant or currency'
            ELSE 'its amounts are not what its loan posts' END AS what
  FROM ledger_journals j
  LEFT JOIN loan_repayments r ON r.id = j.source_id
  LEFT JOIN loans l ON l.id = COALESCE(r.loan_id, j.source_id)
 WHERE j.kind IN ('loan_advance', 'loan_withholding', 'loan_repayment', 'loan_charge_off')
   AND (l.id IS NULL OR j.platform_id <> l.platform_id OR j.mode <> l.mode
        OR j.merchant_id <> l.merchant_id OR j.currency <> l.currency
        OR j.merchant_pending <> 0 OR j.merchant_in_transit <> 0 OR j.platform_fees <> 0
        OR j.processor_receivable <> 0
        OR NOT ((j.kind = 'loan_advance' AND r.id IS NULL
                 AND l.state IN ('paid_out', 'past_due', 'repaid', 'charged_off')
                 AND j.loan_receivable = l.advance + l.fee
                 AND j.merchant_available = -l.advance AND j.loan_fees = -l.fee
                 AND j.platform_funding = 0)
             OR (j.kind IN ('loan_withholding', 'loan_repayment') AND r.id IS NOT NULL
                 AND r.kind = CASE j.kind WHEN 'loan_withholding' THEN 'withholding'
                                          ELSE 'early' END
                 AND j.merchant_available = r.amount AND j.loan_receivable = -r.amount
                 AND j.loan_fees = 0 AND j.platform_funding = 0)
             -- Written off: the fee still owed back off the fees (it is repaid last), the rest
             -- against the platform's funding.
             OR (j.kind = 'loan_charge_off' AND r.id IS NULL AND l.state = 'charged_off'
                 AND j.loan_receivable = -(l.advance + l.fee - l.repaid)
                 AND j.loan_fees = CASE WHEN l.fee < l.advance + l.fee - l.repaid THEN l.fee
                                        ELSE l.advance + l.fee - l.repaid END
                 AND j.platform_funding = l.advance + l.fee - l.repaid - j.loan_fees
                 AND j.merchant_available = 0)))";

/// Each loan has repaid what its repayments add up to, each repayment has its journal, and
/// each loan paid out has its advance's journal and payout.
const LOAN_BOOKS: &str = "
SELECT subject,
       CASE WHEN repaid_off THEN 'its repaid amount is not what its repayments add up to'
            WHEN unjournaled THEN 'a repayment of it has no journal'
            ELSE 'paid out without its advance journal or its payout, or has one unpaid' END
         AS what
  FROM (SELECT l.id AS subject,
               l.repaid <> COALESCE((SELECT sum(r.amount) FROM loan_repayments r
                                      WHERE r.loan_id = l.id), 0) AS repaid_off,
               EXISTS (SELECT 1 FROM loan_repayments r
                        WHERE r.loan_id = l.id AND NOT EXISTS (
                              SELECT 1 FROM ledger_journals j WHERE j.source_id = r.id))
                 AS unjournaled,
               (CASE WHEN l.state IN ('paid_out', 'past_due', 'repaid', 'charged_off')
                     THEN 1 ELSE 0 END)
               <> (CASE WHEN EXISTS (SELECT 1 FROM ledger_journals j
                                      WHERE j.source_id = l.id AND j.kind = 'loan_advance')
                         AND EXISTS (SELECT 1 FROM payouts p
                                      WHERE p.id = l.payout_id AND p.method = 'loan'
                                        AND p.amount = l.advance
                                        AND p.merchant_id = l.merchant_id)
                        THEN 1 ELSE 0 END) AS payout_off
          FROM loans l) checked
 WHERE repaid_off OR unjournaled OR payout_off";

/// Each payout has the journals of the moves that brought it where it is, and no other.
const PAYOUT_MOVES: &str = "
SELECT p.id AS subject,
       'a payout in state ' || p.state
         || ' lacks a journal of its moves or has one of a move it never made' AS what
  FROM payouts p
  LEFT JOIN ledger_journals m ON m.source_id = p.id AND m.kind = 'payout'
  LEFT JOIN ledger_journals pd ON pd.source_id = p.id AND pd.kind = 'payout_paid'
  LEFT JOIN ledger_journals r ON r.source_id = p.id AND r.kind = 'payout_returned'
 WHERE m.source_id IS NULL
    OR NOT ((p.state IN ('pending', 'in_transit') AND pd.source_id IS NULL AND r.source_id IS NULL)
         OR (p.state = 'paid' AND pd.source_id IS NOT NULL AND r.source_id IS NULL)
         OR (p.state = 'failed' AND r.source_id IS NOT NULL)
         OR (p.state = 'canceled' AND pd.source_id IS NULL AND r.source_id IS NOT NULL))";

/// Charges of plans with a delay of `$1` days posted at or before `$2` (a day past when they
/// were due) that have not settled: money a run should have moved and did not.
const OVERDUE: &str = "
SELECT c.source_id || ' (charge)' AS subject,
       'due for settlement more than a day ago and still pending' AS what
  FROM ledger_journals c
  JOIN transactions t ON t.id = c.source_id AND t.state = 'settled'
  JOIN plans p ON p.id = t.plan_id
 WHERE c.kind = 'charge' AND c.merchant_pending <> 0
   AND p.settlement_delay_days = $1 AND c.posted_on <= $2
   AND NOT EXISTS (SELECT 1 FROM ledger_journals s
                    WHERE s.source_id = c.source_id AND s.kind = 'settlement')";

/// Each charge overdue for settlement at `now`, in words.
async fn overdue_settlements(
    conn: &mut Conn,
    now: OffsetDateTime,
) -> Result<Vec<String>, StoreError> {
    let delays: Vec<i32> = conn
        .load(
            crate::schema::plans::table
                .select(crate::schema::plans::settlement_delay_days)
                .distinct(),
        )
        .await
        .map_err(query_error("plans"))?;
    let mut problems = Vec::new();
    for days in delays {
        let overdue = time::Duration::days(i64::from(days).saturating_add(1));
        let Some(cutoff) = now.checked_sub(overdue) else {
            continue;
        };
        let overdue = diesel::sql_query(OVERDUE)
            .bind::<diesel::sql_types::Integer, _>(days)
            .bind::<crate::timestamp::Ts, _>(crate::timestamp::Instant(cutoff));
        problems.extend(found(conn, overdue).await?);
    }
    Ok(problems)
}

/// What `query`, a query of what breaks a rule, found, each in words.
async fn found<'q, Q>(conn: &mut Conn, query: Q) -> Result<Vec<String>, StoreError>
where
    Q: crate::conn::Loads<'q, Finding>,
{
    let rows: Vec<Finding> = conn
        .load(query)
        .await
        .map_err(query_error("ledger_journals"))?;
    Ok(rows
        .into_iter()
        .map(|f| format!("{}: {}", f.subject, f.what))
        .collect())
}
