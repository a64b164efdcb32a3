//! Which due notifications a delivery worker takes next: fairly, so one platform's backlog or
//! slow endpoints never hold the slots another platform needs (docs/design/webhook-fairness.md).
//!
//! The query walks only the subscriptions that have pending rows (a loose index scan: a backlog
//! of a million rows on one subscription costs one probe, not a million), takes each one's
//! oldest due rows up to its free slots, then ranks rows within each platform after the
//! attempts that platform already has in flight, and takes them in that order: round robin,
//! least-loaded platform first. "In flight" is `pending` with a lease not yet over, so the
//! counts span every worker process and heal themselves when a worker dies.
//!
//! The claim runs under `Lock::NotificationClaim`, so concurrent claimers see each
//! other's leases and the caps never overshoot. (PostgreSQL refuses `FOR UPDATE` next to window
//! functions, so the lock replaces `SKIP LOCKED` there.)

use diesel::QueryableByName;
use diesel::result::QueryResult;
use diesel::sql_types::{BigInt, Text};
use holdfast_domain::ports::ClaimLimits;
use time::OffsetDateTime;

use crate::conn::{Conn, Db};
use crate::pg_statement::{Bind, Statement, Unprepared};
use crate::timestamp::Ts;

/// The claim around each backend's way of taking a subscription's head rows (`$heads`), with
/// each backend's marks for the binds: `$now`, `$not_ended` (a condition on a leased row: its
/// id is not among the claiming process's ended attempts), `$waiting` (a table of the claiming
/// process's rows waiting in its lines, `(webhook_id, waiting)`: leased, not in flight),
/// `$at_least_zero` (leased less waiting, never below zero: a waiting row may be gone, its
/// subscription deleted, and must not lend its place to the platform's other rows),
/// `$per_sub` (per-subscription cap), `$per_platform` (per-platform cap), `$batch`.
macro_rules! claim_sql {
    ($heads:literal, now: $now:literal, not_ended: $not_ended:literal, waiting: $waiting:literal, at_least_zero: $at_least_zero:literal, per_sub: $per_sub:literal, per_platform: $per_platform:literal, batch: $batch:literal) => {
        concat!(
            "WITH RECURSIVE subs (webhook_id) AS (
    SELECT (SELECT webhook_id FROM notifications
             WHERE state = 'pending' ORDER BY webhook_id LIMIT 1)
    UNION ALL
    SELECT (SELECT n.webhook_id FROM notifications n
             WHERE n.state = 'pending' AND n.webhook_id > s.webhook_id
             ORDER BY n.webhook_id LIMIT 1)
      FROM subs s
     WHERE s.webhook_id IS NOT NULL
), leases AS (
    SELECT platform_id, webhook_id, count(*) AS leased
      FROM notifications
     WHERE state = 'pending' AND lease_until IS NOT NULL AND lease_until > ",
            $now,
            "
       AND ",
            $not_ended,
            "
     GROUP BY platform_id, webhook_id
), leased AS (
    SELECT l.platform_id, l.webhook_id, ",
            $at_least_zero,
            " AS in_flight
      FROM leases l
      LEFT JOIN ",
            $waiting,
            " ON w.webhook_id = l.webhook_id
), platform_load AS (
    SELECT platform_id, sum(in_flight) AS in_flight FROM leased GROUP BY platform_id
), heads AS (",
            $heads,
            "), turns AS (
    SELECT h.id, h.due_on,
           row_number() OVER (PARTITION BY h.platform_id ORDER BY h.due_on, h.id)
             + coalesce(p.in_flight, 0) AS turn
      FROM heads h
      LEFT JOIN platform_load p ON p.platform_id = h.platform_id
     WHERE h.slot <= ",
            $per_sub,
            "
)
SELECT id FROM turns WHERE turn <= ",
            $per_platform,
            " ORDER BY turn, due_on, id LIMIT ",
            $batch
        )
    };
}

/// PostgreSQL: a `pg_statement::Statement`, sent unprepared so it is planned for the values
/// bound each time (docs/decisions.md, "Plans of the batch statements").
/// Its `?` marks take, in order: now, the ended attempts' ids, the waiting rows' subscriptions
/// and their counts, now, now, per-subscription cap, per-subscription cap, per-platform cap,
/// batch.
const CLAIM_PG: &str = claim_sql!(
    "
    SELECT h.id, h.platform_id, h.due_on,
           row_number() OVER (PARTITION BY s.webhook_id ORDER BY h.due_on, h.id)
             + coalesce(l.in_flight, 0) AS slot
      FROM subs s
      LEFT JOIN leased l ON l.webhook_id = s.webhook_id
     CROSS JOIN LATERAL (
            SELECT n.id, n.platform_id, n.due_on
              FROM notifications n
             WHERE n.webhook_id = s.webhook_id AND n.state = 'pending' AND n.due_on <= ?
               AND (n.lease_until IS NULL OR n.lease_until <= ?)
             ORDER BY n.due_on, n.id
             LIMIT ?) h
     WHERE s.webhook_id IS NOT NULL
",
    now: "?",
    not_ended: "NOT (id = ANY (?::text[]))",
    waiting: "unnest(?::text[], ?::int4[]) AS w (webhook_id, waiting)",
    at_least_zero: "greatest(l.leased - coalesce(w.waiting, 0), 0)",
    per_sub: "?",
    per_platform: "?",
    batch: "?"
);

/// SQLite has no `LATERAL`: each subscription's head rows come from a correlated
/// `IN (… LIMIT)` instead, and no arrays: the ended attempts' ids come as a JSON array, the
/// waiting rows as a JSON array of `[webhook_id, count]` pairs. It reads `$1` as a named parameter and numbers parameters by first
/// appearance, which is the bind order.
const CLAIM_SQLITE: &str = claim_sql!(
    "
    SELECT n.id, n.platform_id, n.due_on,
           row_number() OVER (PARTITION BY n.webhook_id ORDER BY n.due_on, n.id)
             + coalesce(l.in_flight, 0) AS slot
      FROM subs s
      JOIN notifications n ON n.id IN (
            SELECT m.id FROM notifications m
             WHERE m.webhook_id = s.webhook_id AND m.state = 'pending' AND m.due_on <= $1
               AND (m.lease_until IS NULL OR m.lease_until <= $1)
             ORDER BY m.due_on, m.id
             LIMIT $4)
      LEFT JOIN leased l ON l.webhook_id = s.webhook_id
     WHERE s.webhook_id IS NOT NULL
",
    now: "$1",
    not_ended: "id NOT IN (SELECT value FROM json_each($2))",
    waiting: "(SELECT json_extract(value, '$[0]') AS webhook_id,
                       json_extract(value, '$[1]') AS waiting
                  FROM json_each($3)) AS w",
    at_least_zero: "max(l.leased - coalesce(w.waiting, 0), 0)",
    per_sub: "$4",
    per_platform: "$5",
    batch: "$6"
);

fn caps(limits: ClaimLimits) -> (i64, i64, i64) {
    (
        i64::from(limits.per_subscription.max(1)),
        i64::from(limits.per_platform.max(1)),
        i64::from(limits.batch),
    )
}

/// The ids of the rows the claim takes. (Their order is the fair one, but a worker attempts a
/// whole claim at once: it is not kept.)
pub async fn fair_due_ids(
    conn: &mut Conn,
    now: OffsetDateTime,
    limits: ClaimLimits,
    ended: &[&str],
    waiting: &[(&str, i32)],
) -> QueryResult<Vec<String>> {
    let (per_sub, per_platform, batch) = caps(limits);
    let waiting_webhooks: Vec<&str> = waiting.iter().map(|(webhook, _)| *webhook).collect();
    let waiting_counts: Vec<i32> = waiting.iter().map(|(_, count)| *count).collect();
    match conn.db {
        Db::Pg(ref mut pg) => {
            let claim = Statement::<Text>::new(
                CLAIM_PG,
                vec![
                    Bind::Time(now),
                    Bind::Texts(ended),
                    Bind::Texts(&waiting_webhooks),
                    Bind::Ints(&waiting_counts),
                    Bind::Time(now),
                    Bind::Time(now),
                    Bind::BigInt(per_sub),
                    Bind::BigInt(per_sub),
                    Bind::BigInt(per_platform),
                    Bind::BigInt(batch),
                ],
            );
            diesel_async::RunQueryDsl::load(Unprepared(claim), &mut **pg).await
        }
        Db::Sqlite(_) => {
            let rows: Vec<Due> = conn
                .load(
                    diesel::sql_query(CLAIM_SQLITE)
                        .bind::<Ts, _>(now)
                        .bind::<Text, _>(serde_json::Value::from(ended.to_vec()).to_string())
                        .bind::<Text, _>(json_pairs(waiting))
                        .bind::<BigInt, _>(per_sub)
                        .bind::<BigInt, _>(per_platform)
                        .bind::<BigInt, _>(batch),
                )
                .await?;
            Ok(rows.into_iter().map(|due| due.id).collect())
        }
    }
}

/// `pairs` as a JSON array of `[webhook_id, count]` arrays, for SQLite's `json_each`.
fn json_pairs(pairs: &[(&str, i32)]) -> String {
    pairs
        .iter()
        .map(|(webhook, count)| serde_json::json!([webhook, count]))
        .collect::<serde_json::Value>()
        .to_string()
}

#[derive(QueryableByName)]
struct Due {
    #[diesel(sql_type = Text)]
    id: String,
}
