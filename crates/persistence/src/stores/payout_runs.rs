//! Scheduled payout runs (`PayoutStore::pay_out_scheduled`): set-based SQL that makes one
//! payout of each due merchant's available balance per currency, with its journal, in one
//! transaction under the payouts' lock; then each payout's event (docs/money.md).

use std::collections::HashMap;

use diesel::prelude::*;
use diesel::sql_types::Text;
use holdfast_domain::payout::{Payout, weekday_name};
use holdfast_domain::ports::{AnnouncePayout, ScheduledRun};

use super::outbox::write_event_to;
use crate::conn::{Conn, Db, Lock};
use crate::schema::{payouts as po, webhooks as w};
use crate::timestamp::{Instant, Ts};
use crate::webhook_rows::WebhookRow;

/// The payouts of a run: each due merchant's available balance per currency, paid to its
/// newest approved form's account (a test merchant without one: the sandbox paying account,
/// last four `6789`). A live payout goes by ACH: only in USD, to a US account (its form's
/// answers name a routing number), as `POST /v1/payouts` refuses the others. A merchant paid out by a schedule since the day began is not read again,
/// nor a deleted one. Binds, in the order they first appear (SQLite numbers them so): the ids'
/// prefix, the run's time, its weekday, the day's start. `{number}` is the backend's way of
/// writing the payout's number in ten digits.
const MAKE: &str = "
INSERT INTO payouts (id, platform_id, mode, merchant_id, currency, amount, state, method,
                     bank_form_id, bank_last4, failure_code, created_on, updated_on)
SELECT 'po_' || $1 || {number}, b.platform_id, b.mode, b.merchant_id, b.currency, b.available,
       'pending', 'scheduled', f.id, COALESCE(f.bank_last4, '6789'), NULL, $2, $2
  FROM (SELECT j.platform_id, j.mode, j.merchant_id, j.currency,
               CAST(-sum(j.merchant_available) AS BIGINT) AS available, s.minimum
          FROM payout_schedules s
          JOIN merchants m ON m.id = s.merchant_id AND m.deleted_on IS NULL
          JOIN ledger_journals j ON j.merchant_id = s.merchant_id
                                AND j.platform_id = s.platform_id AND j.mode = s.mode
         WHERE (s.every = 'daily' OR (s.every = 'weekly' AND s.weekday = $3))
           AND NOT EXISTS (SELECT 1 FROM payouts p
                            WHERE p.merchant_id = s.merchant_id AND p.method = 'scheduled'
                              AND p.created_on >= $4)
         GROUP BY j.platform_id, j.mode, j.merchant_id, j.currency, s.minimum) b
  LEFT JOIN (SELECT merchant_id, max(id) AS id FROM boarding_forms
              WHERE status = 'approved' AND bank_sealed IS NOT NULL
              GROUP BY merchant_id) a ON a.merchant_id = b.merchant_id
  LEFT JOIN boarding_forms f ON f.id = a.id
 WHERE b.available > 0 AND b.available >= b.minimum
   AND (b.mode = 'test'
        OR (f.id IS NOT NULL AND b.currency = 'USD' AND f.answers LIKE '%\"routingNumber\":\"%'))";

/// Each payout of the run takes its amount from available to in transit (`Payout::journal_for`
/// of a payout made). Binds: the run's first and last possible ids (its payouts are found by
/// their key, whatever else was made at the same instant).
const POST: &str = "
INSERT INTO ledger_journals (source_id, kind, platform_id, mode, merchant_id, currency,
                             posted_on, merchant_available, merchant_in_transit)
SELECT id, 'payout', platform_id, mode, merchant_id, currency, created_on, amount, -amount
  FROM payouts WHERE id BETWEEN $1 AND $2";

/// The first and last id a run with ids `prefix` can give.
fn run_ids(prefix: &str) -> (String, String) {
    (
        format!("po_{prefix}0000000000"),
        format!("po_{prefix}9999999999"),
    )
}

/// The run, in the caller's SQL transaction: how many payouts it made.
pub async fn pay_out_scheduled(
    conn: &mut Conn,
    run: &ScheduledRun,
    announce: &dyn AnnouncePayout,
) -> QueryResult<u64> {
    conn.lock(Lock::Payouts).await?;
    let day_began = run.now.replace_time(time::Time::MIDNIGHT);
    let number = match conn.db {
        Db::Pg(_) => {
            "lpad(CAST(row_number() OVER (ORDER BY b.merchant_id, b.currency) AS TEXT), 10, '0')"
        }
        Db::Sqlite(_) => {
            "substr('0000000000' || row_number() OVER (ORDER BY b.merchant_id, b.currency), -10)"
        }
    };
    let made = conn
        .execute(
            diesel::sql_query(MAKE.replace("{number}", number))
                .bind::<Text, _>(run.id_prefix.as_str())
                .bind::<Ts, _>(Instant(run.now))
                .bind::<Text, _>(weekday_name(run.now.weekday()))
                .bind::<Ts, _>(Instant(day_began)),
        )
        .await?;
    if made == 0 {
        return Ok(0);
    }
    let (first, last) = run_ids(&run.id_prefix);
    conn.execute(
        diesel::sql_query(POST)
            .bind::<Text, _>(first.as_str())
            .bind::<Text, _>(last.as_str()),
    )
    .await?;
    announce_each(conn, (&first, &last), announce).await?;
    Ok(u64::try_from(made).unwrap_or(0))
}

/// Writes the event of each payout of the run (ids `first` to `last`), reading each platform's
/// subscriptions once.
async fn announce_each(
    conn: &mut Conn,
    (first, last): (&str, &str),
    announce: &dyn AnnouncePayout,
) -> QueryResult<()> {
    let rows: Vec<super::payouts::PayoutRow> = conn
        .load(
            po::table
                .filter(po::id.between(first, last))
                .order(po::id.asc()),
        )
        .await?;
    let mut subscriptions: HashMap<(String, String), Vec<WebhookRow>> = HashMap::new();
    for row in rows {
        let payout = Payout::try_from(row)
            .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))?;
        let event = announce.event_for(&payout);
        let scope = (
            payout.platform_id.to_string(),
            payout.mode.as_str().to_owned(),
        );
        if !subscriptions.contains_key(&scope) {
            let active: Vec<WebhookRow> = conn
                .load(
                    w::table
                        .filter(w::platform_id.eq(&scope.0))
                        .filter(w::mode.eq(&scope.1))
                        .filter(w::active.eq(true)),
                )
                .await?;
            subscriptions.insert(scope.clone(), active);
        }
        let event_type = event.data.event_type();
        let subscribed: Vec<WebhookRow> = subscriptions
            .get(&scope)
            .into_iter()
            .flatten()
            .filter(|row| row.events.split(',').any(|t| t == event_type.as_str()))
            .cloned()
            .collect();
        let data = serde_json::to_string(&event.data)
            .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
        write_event_to(conn, &event, &data, subscribed).await?;
    }
    Ok(())
}
