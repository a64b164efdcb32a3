//! Recording delivery outcomes: once each (a row already final is left as it is), the
//! consecutive-failure counter with them, and at the limit the subscription disabled and its
//! creator's email queued (spec 6.3); a batch of successes in one statement on PostgreSQL.

use std::collections::HashSet;

use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::QueryFragment;
use diesel::sql_types::Text;
use holdfast_domain::ids::NotificationId;
use holdfast_domain::ports::{Finished, Recorded};
use holdfast_domain::webhook::{Outcome, Subscription, disable_email, failure_disables};
use time::OffsetDateTime;

use crate::conn::{Conn, Db, Loads};
use crate::pg_statement::{Bind, Statement};
use crate::query::{StillPending, still_pending};
use crate::schema::{notifications as n, users as u, webhooks as w};
use crate::timestamp::Instant;
use crate::webhook_rows::WebhookRow;

/// The record of one outcome, `finished`, of the notification `id` if it is still pending.
pub(super) fn outcome_of<'a>(
    id: &'a NotificationId,
    finished: &Finished,
) -> impl Loads<'a, String> + QueryFragment<Pg> + Send {
    diesel::update(pending(id))
        .set(final_columns(finished))
        .returning(n::webhook_id)
}

/// PostgreSQL: a batch of successes and skips recorded in one statement, with the counters of
/// the subscriptions that succeeded reset. The reset writes only a counter that is not already
/// 0, so deliveries to a healthy subscription never lock its row (they all queued on it).
/// Each row is found by its key ([`StillPending`]).
///
/// Its last bind, true when the statement is its own transaction, lets it commit without
/// waiting for the disk unless it reset a counter (docs/decisions.md, "Recorded successes commit
/// asynchronously"): a crash of PostgreSQL may then forget a success, which is sent again, but
/// never a reset, whose loss would let failures that were not consecutive disable a
/// subscription. `relaxed` relies on PostgreSQL evaluating a subquery's volatile output even
/// when nothing reads it.
pub(super) const RECORD_QUIETLY_PG: &str = concat!(
    "\
WITH v AS (
    SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::int4[],
                         ?::timestamptz[])
        AS v (id, state, endpoint_url, request_body, response, requests, attempted_on)
), done AS (
    UPDATE notifications n
       SET state = v.state, endpoint_url = v.endpoint_url, request_body = v.request_body,
           response = v.response, requests = v.requests, attempted_on = v.attempted_on,
           lease_until = NULL
      FROM v
     WHERE n.id = v.id AND n.state = ",
    still_pending!(),
    "
 RETURNING n.id, n.webhook_id, v.state
), reset AS (
    UPDATE webhooks w
       SET consecutive_failures = 0
     WHERE w.id IN (SELECT webhook_id FROM done WHERE state = 'succeeded')
       AND w.consecutive_failures <> 0
 RETURNING w.id
)
SELECT done.id
  FROM done,
       (SELECT CASE WHEN ? AND NOT EXISTS (SELECT FROM reset)
                    THEN set_config('synchronous_commit', 'off', true) END) AS relaxed"
);

/// The final columns of one notification.
#[derive(AsChangeset)]
#[diesel(table_name = n, treat_none_as_null = true)]
struct FinalColumns {
    state: &'static str,
    endpoint_url: Option<String>,
    request_body: Option<String>,
    response: Option<String>,
    requests: i32,
    attempted_on: Option<Instant>,
    lease_until: Option<Instant>,
}

fn final_columns(finished: &Finished) -> FinalColumns {
    FinalColumns {
        state: finished.outcome.as_str(),
        endpoint_url: finished.endpoint_url.clone(),
        request_body: finished.request_body.clone(),
        response: finished.response.clone(),
        requests: requests(finished),
        attempted_on: Some(Instant(finished.attempted_on)),
        lease_until: None,
    }
}

fn requests(finished: &Finished) -> i32 {
    i32::try_from(finished.requests).unwrap_or(i32::MAX)
}

/// How a batch of outcomes commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Commit {
    /// In a transaction that records a failure: its counter, disable and email wait for the
    /// disk, and so does everything else in it.
    Durable,
    /// One statement, its own transaction, which need not wait for the disk unless it resets a
    /// counter (`RECORD_QUIETLY_PG`).
    Relaxed,
}

impl Commit {
    pub(super) fn of(outcomes: &[(NotificationId, Finished)]) -> Self {
        if outcomes
            .iter()
            .any(|(_, finished)| matches!(finished.outcome, Outcome::Failed))
        {
            Self::Durable
        } else {
            Self::Relaxed
        }
    }
}

/// Records successes and skips (no failure among `outcomes`), marking in `recorded` those that
/// were still pending.
async fn record_quietly(
    conn: &mut Conn,
    outcomes: &[(NotificationId, Finished)],
    recorded: &mut [Recorded],
    commit: Commit,
) -> QueryResult<()> {
    if outcomes.is_empty() {
        return Ok(());
    }
    let done: HashSet<String> = match conn.db {
        Db::Pg(ref mut pg) => {
            let ids: Vec<&str> = outcomes.iter().map(|(id, _)| id.as_str()).collect();
            let states: Vec<&str> = outcomes.iter().map(|(_, f)| f.outcome.as_str()).collect();
            let column = |pick: fn(&Finished) -> Option<&str>| -> Vec<Option<&str>> {
                outcomes.iter().map(|(_, f)| pick(f)).collect()
            };
            let urls = column(|f| f.endpoint_url.as_deref());
            let bodies = column(|f| f.request_body.as_deref());
            let responses = column(|f| f.response.as_deref());
            let counts: Vec<i32> = outcomes.iter().map(|(_, f)| requests(f)).collect();
            let times: Vec<OffsetDateTime> = outcomes.iter().map(|(_, f)| f.attempted_on).collect();
            let statement = Statement::<Text>::new(
                RECORD_QUIETLY_PG,
                vec![
                    Bind::Texts(&ids),
                    Bind::Texts(&states),
                    Bind::OptTexts(&urls),
                    Bind::OptTexts(&bodies),
                    Bind::OptTexts(&responses),
                    Bind::Ints(&counts),
                    Bind::Times(&times),
                    Bind::Bool(commit == Commit::Relaxed),
                ],
            );
            // Prepared, and planned once on a delivery connection (`DELIVERY_PLANNING`).
            let done: Vec<String> = diesel_async::RunQueryDsl::load(statement, &mut **pg).await?;
            done.into_iter().collect()
        }
        Db::Sqlite(_) => {
            let mut done = HashSet::new();
            let mut succeeded = Vec::new();
            for (id, finished) in outcomes {
                if let Some(webhook) = record_one(conn, id, finished).await? {
                    done.insert(id.to_string());
                    if matches!(finished.outcome, Outcome::Succeeded) {
                        succeeded.push(webhook);
                    }
                }
            }
            if !succeeded.is_empty() {
                conn.execute(
                    diesel::update(
                        w::table
                            .filter(w::id.eq_any(&succeeded))
                            .filter(w::consecutive_failures.ne(0)),
                    )
                    .set(w::consecutive_failures.eq(0)),
                )
                .await?;
            }
            done
        }
    };
    for ((id, _), recorded) in outcomes.iter().zip(recorded) {
        recorded.recorded = done.contains(id.as_str());
    }
    Ok(())
}

/// Records `outcomes` in their order: successes and skips together, failures one by one between
/// them, so the counter sees the outcomes in their order. In the caller's transaction when it
/// writes more than one statement (`Commit::Durable`).
#[expect(
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    reason = "`recorded` is as long as `outcomes`, and every index and range comes from \
              enumerating `outcomes`"
)]
pub(super) async fn record_in_order(
    conn: &mut Conn,
    outcomes: &[(NotificationId, Finished)],
    service_name: &str,
    commit: Commit,
) -> QueryResult<Vec<Recorded>> {
    let mut recorded = vec![Recorded::NOT; outcomes.len()];
    let mut quiet_from = 0;
    for (i, (id, finished)) in outcomes.iter().enumerate() {
        if matches!(finished.outcome, Outcome::Failed) {
            let quiet = quiet_from..i;
            let (before, marks) = (&outcomes[quiet.clone()], &mut recorded[quiet]);
            record_quietly(conn, before, marks, Commit::Durable).await?;
            recorded[i] = record_failure(conn, id, finished, service_name).await?;
            quiet_from = i + 1;
        }
    }
    let rest = quiet_from..;
    record_quietly(conn, &outcomes[rest.clone()], &mut recorded[rest], commit).await?;
    Ok(recorded)
}

/// The notification `id` while it is pending: of two workers finishing the same notification
/// (a lease that ran out), the first one counts.
fn pending(id: &NotificationId) -> PendingOne<'_> {
    n::table
        .filter(n::id.eq(id.as_str()))
        .filter(n::state.eq(StillPending))
}

type PendingOne<'a> = diesel::dsl::Filter<
    diesel::dsl::Filter<n::table, diesel::dsl::Eq<n::id, &'a str>>,
    diesel::dsl::Eq<n::state, StillPending>,
>;

/// Records `id`'s outcome if it is still pending; its subscription's id if it was.
async fn record_one(
    conn: &mut Conn,
    id: &NotificationId,
    finished: &Finished,
) -> QueryResult<Option<String>> {
    conn.get_result(outcome_of(id, finished)).await.optional()
}

/// Records a failure and counts it against its subscription.
async fn record_failure(
    conn: &mut Conn,
    id: &NotificationId,
    finished: &Finished,
    service_name: &str,
) -> QueryResult<Recorded> {
    let Some(webhook) = record_one(conn, id, finished).await? else {
        return Ok(Recorded::NOT);
    };
    let (disabled, email_queued) =
        count_failure(conn, &webhook, id, finished, service_name).await?;
    Ok(Recorded {
        recorded: true,
        disabled,
        email_queued,
    })
}

/// Counts a failure against `webhook`, disabling it at the limit and queueing the email to its
/// creator; whether it disabled it and whether an email was queued.
async fn count_failure(
    conn: &mut Conn,
    webhook: &str,
    notification: &NotificationId,
    finished: &Finished,
    service_name: &str,
) -> QueryResult<(bool, bool)> {
    let this = w::table.filter(w::id.eq(webhook));
    #[expect(
        clippy::arithmetic_side_effects,
        reason = "SQL arithmetic, done by the database in its own types, not by Rust"
    )]
    let (failures, active): (i32, bool) = conn
        .get_result(
            diesel::update(this)
                .set(w::consecutive_failures.eq(w::consecutive_failures + 1))
                .returning((w::consecutive_failures, w::active)),
        )
        .await?;
    if !active || !failure_disables(u32::try_from(failures).unwrap_or(u32::MAX)) {
        return Ok((false, false));
    }
    let row: WebhookRow = conn
        .get_result(diesel::update(this).set(w::active.eq(false)))
        .await?;
    let to: Option<String> = conn
        .first(
            u::table
                .filter(u::id.eq(&row.creator_id))
                .filter(u::platform_id.eq(&row.platform_id))
                .select(u::email),
        )
        .await
        .optional()?;
    let Some(to) = to else {
        return Ok((true, false));
    };
    let subscription = Subscription::try_from(row)
        .map_err(|e| diesel::result::Error::DeserializationError(e.to_string().into()))?;
    let email = disable_email(service_name, &to, &subscription);
    let suffix = notification
        .as_str()
        .trim_start_matches(NotificationId::PREFIX);
    crate::stores::emails::queue_email(
        conn,
        &format!("eml_{suffix}"),
        &email,
        finished.attempted_on,
    )
    .await?;
    Ok((true, true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_batch_without_a_failure_may_commit_relaxed() {
        use Outcome::{Failed, Skipped, Succeeded};
        let cases = [
            (vec![Succeeded], Commit::Relaxed),
            (vec![Skipped], Commit::Relaxed),
            (vec![Succeeded, Skipped, Succeeded], Commit::Relaxed),
            (vec![Failed], Commit::Durable),
            (vec![Succeeded, Failed, Skipped], Commit::Durable),
        ];
        for (outcomes, expected) in cases {
            let batch: Vec<(NotificationId, Finished)> = outcomes
                .iter()
                .enumerate()
                .map(|(n, &outcome)| {
                    let finished = Finished {
                        outcome,
                        endpoint_url: None,
                        request_body: None,
                        response: None,
                        requests: 1,
                        attempted_on: OffsetDateTime::UNIX_EPOCH,
                    };
                    (NotificationId::from_suffix(&n.to_string()), finished)
                })
                .collect();
            assert_eq!(Commit::of(&batch), expected, "{outcomes:?}");
        }
    }
}
