//! Completing a pending transaction: its final row, the original's reservation, the
//! `transaction.created` event with its webhook fan-out, the idempotent response and the client
//! session an approved payment closes, all or nothing. This is the write every payment ends
//! with, so each backend does it its own best way: PostgreSQL in one statement (one round trip,
//! one commit), SQLite step by step inside one SQL transaction (`in_steps.rs`: in process, where
//! round trips cost nothing).

use diesel::prelude::*;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::TxnId;
use holdfast_domain::ledger::Journal;
use holdfast_domain::payment::lifecycle::TxnState;
use holdfast_domain::payment::token::SessionClose;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::{Event, OriginalOutcome};
use time::OffsetDateTime;

use crate::conn::{Conn, Db};
use crate::ledger_rows::NewJournalRow;
use crate::payment_rows::CompletedRow;
use crate::pg_statement::{Bind, Statement};
use crate::query::still_pending;

/// How the original moves with the completion (nothing for an auth or sale, or a refund kept).
enum OriginalChange<'a> {
    /// The auth reserved (`closing`) by this follow-up takes its final state `to`.
    Close { id: &'a str, to: TxnState },
    /// A refund that did not go through gives back the `amount` it reserved.
    Release { id: &'a str, amount: i64 },
}

impl<'a> OriginalChange<'a> {
    fn id(&self) -> &'a str {
        match self {
            Self::Close { id, .. } | Self::Release { id, .. } => id,
        }
    }
}

fn original_change(original: Option<&(TxnId, OriginalOutcome)>) -> Option<OriginalChange<'_>> {
    let (id, outcome) = original?;
    let id = id.as_str();
    match *outcome {
        OriginalOutcome::Closed(to) => Some(OriginalChange::Close { id, to }),
        OriginalOutcome::Reopened => Some(OriginalChange::Close {
            id,
            to: TxnState::Authorized,
        }),
        OriginalOutcome::RefundKept | OriginalOutcome::Held => None,
        OriginalOutcome::RefundReleased { amount } => Some(OriginalChange::Release { id, amount }),
    }
}

// The completion's parts, one common table expression each, put together below.
macro_rules! done {
    () => {
        concat!(
            "done AS (
    UPDATE transactions
       SET state = ?, fee = ?, connection_id = ?, connection_name = ?, approved_amount = ?,
           avs = ?, cvv = ?, partial = ?, processor_code = ?, processor_message = ?,
           processor_transaction_id = ?, status = ?, decline_code = ?
     WHERE id = ? AND state = ",
            still_pending!(),
            "
 RETURNING id, platform_id, mode
)"
        )
    };
}

macro_rules! original {
    () => {
        "original AS (
    UPDATE transactions o
       SET state = coalesce(?, o.state), refunded_amount = o.refunded_amount - ?
      FROM done
     WHERE o.id = ? AND o.state = coalesce(?, o.state)
 RETURNING o.id
)"
    };
}

macro_rules! event_and_fan_out {
    () => {
        "event AS (
    INSERT INTO events (id, platform_id, mode, event_type, data, created_on, subject_id)
    SELECT ?, platform_id, mode, ?, ?, ?, id FROM done
 RETURNING id, platform_id, mode, event_type, created_on
), fan_out AS (
    INSERT INTO notifications
           (id, webhook_id, platform_id, mode, event_id, event_type, state, due_on, created_on)
    SELECT 'ntf_' || substr(e.id, 5) || substr(w.id, 4), w.id, e.platform_id, e.mode, e.id,
           e.event_type, 'pending', e.created_on, e.created_on
      FROM event e
      JOIN webhooks w ON w.platform_id = e.platform_id AND w.mode = e.mode AND w.active
                     AND e.event_type = ANY (string_to_array(w.events, ','))
 RETURNING id
)"
    };
}

macro_rules! reply {
    () => {
        "reply AS (
    UPDATE idempotency_keys k
       SET status = ?, body = ?
      FROM done
     WHERE k.platform_id = done.platform_id AND k.mode = done.mode AND k.key = ?
)"
    };
}

macro_rules! session {
    () => {
        "session AS (
    UPDATE client_sessions s
       SET status = 'completed', transaction_id = done.id, closed_on = ?, held_until = NULL
      FROM done
     WHERE s.id = ? AND s.platform_id = done.platform_id AND s.mode = done.mode
       AND s.status = 'open' AND s.held_until = ?
 RETURNING s.id
)"
    };
}

/// The journal the outcome posts: one row, its amount for each account purpose (`WHERE ?`
/// false when it posts none).
macro_rules! journal {
    () => {
        "journal AS (
    INSERT INTO ledger_journals
           (source_id, kind, platform_id, mode, merchant_id, currency, posted_on,
            merchant_pending, merchant_available, merchant_in_transit, platform_fees,
            processor_receivable)
    SELECT done.id, ?, done.platform_id, done.mode, ?, ?, ?, ?, ?, ?, ?, ?
      FROM done
     WHERE ?
)"
    };
}

/// Everything hangs on `done`, the pending row this statement completed: when another writer
/// completed it first, `done` is empty and nothing else is written. The notification id is
/// `webhook_rows::notification_id` spelt in SQL (`ntf_` + the event's and the webhook's id
/// suffixes); the conformance suite holds the two together.
const COMPLETE_PG: &str = concat!(
    "WITH ",
    done!(),
    ", ",
    original!(),
    ", ",
    event_and_fan_out!(),
    ", ",
    reply!(),
    ", ",
    session!(),
    ", ",
    journal!(),
    "
SELECT (SELECT count(*) FROM done), (SELECT count(*) FROM original),
       (SELECT count(*) FROM session), (SELECT count(*) FROM fan_out)"
);

/// `COMPLETE_PG` for a payment with no original to move and no session to close (every auth and
/// sale but a checkout's): without those two parts, PostgreSQL has two updates, their joins and
/// their counts fewer to set up on every run. Its columns are `COMPLETE_PG`'s.
const COMPLETE_PLAIN_PG: &str = concat!(
    "WITH ",
    done!(),
    ", ",
    event_and_fan_out!(),
    ", ",
    reply!(),
    ", ",
    journal!(),
    "
SELECT (SELECT count(*) FROM done), 0::bigint, 0::bigint, (SELECT count(*) FROM fan_out)"
);

/// This module's statements that find a transaction by its key while it is pending, as
/// PostgreSQL is sent them (`testing::statements_finding_pending_rows_by_key`).
#[cfg(feature = "test-support")]
pub(super) fn keyed_pending_statements() -> Vec<(&'static str, String)> {
    vec![
        ("a payment's completion", super::statement_sql(COMPLETE_PG)),
        (
            "a plain payment's completion",
            super::statement_sql(COMPLETE_PLAIN_PG),
        ),
    ]
}

/// What a completion writes besides the transaction's own row.
#[derive(Clone, Copy)]
pub struct Writes<'a> {
    pub original: Option<&'a (TxnId, OriginalOutcome)>,
    pub event: &'a Event,
    /// `event.data` as stored.
    pub data: &'a str,
    pub reply: Option<&'a KeyedAnswer>,
    pub session: Option<&'a SessionClose>,
    /// The journal the outcome posts, if it moves money.
    pub journal: Option<&'a Journal>,
}

/// Completes `x` (still pending) in one all-or-nothing write, the backend's best statement for
/// it; whether the client session given was completed with it. Its notifications are handed
/// or claimed as `outbox::write_event` says (on PostgreSQL, always claimed: the statement cannot
/// know beforehand how many it writes, so it wakes this process's deliverers instead).
pub async fn complete(conn: &mut Conn, x: &Transaction, writes: Writes<'_>) -> QueryResult<bool> {
    match conn.db {
        Db::Pg(ref mut pg) => {
            let (closed, notifications) = complete_pg(pg, x, writes).await?;
            if notifications > 0 {
                conn.poke_deliverers();
            }
            Ok(closed)
        }
        Db::Sqlite(_) => {
            let completed = CompletedRow::from(x);
            conn.transaction(async |conn| complete_in_steps(conn, x, completed, writes).await)
                .await
        }
    }
}

/// The completion of `x` as one statement: how many rows of the payment, its original, its
/// session and its notifications it wrote.
pub(super) type Completion<'a> = Statement<'a, (BigInt, BigInt, BigInt, BigInt)>;

/// The completion of `x` as one statement (`COMPLETE_PG`, or `COMPLETE_PLAIN_PG` when it has
/// no original and no session), its final row and what else it writes.
pub(super) fn completion_statement<'a>(
    x: &'a Transaction,
    Writes {
        original,
        event,
        data,
        reply,
        session,
        journal,
    }: Writes<'a>,
) -> Completion<'a> {
    let change = original_change(original);
    let plain = change.is_none() && session.is_none();
    let mut binds = CompletedRow::from(x).binds().to_vec();
    binds.push(Bind::Text(x.id.as_str()));
    if !plain {
        // The original's new state, what it gives back, its id, and the state it must be in.
        binds.extend([
            Bind::OptText(match &change {
                Some(OriginalChange::Close { to, .. }) => Some(to.as_str()),
                _ => None,
            }),
            Bind::BigInt(match &change {
                Some(OriginalChange::Release { amount, .. }) => *amount,
                _ => 0,
            }),
            Bind::OptText(change.as_ref().map(OriginalChange::id)),
            Bind::OptText(match &change {
                Some(OriginalChange::Close { .. }) => Some(TxnState::Closing.as_str()),
                _ => None,
            }),
        ]);
    }
    binds.extend([
        Bind::Text(event.id.as_str()),
        Bind::Text(event.data.event_type().as_str()),
        Bind::Text(data),
        Bind::Time(event.created_on),
        Bind::OptInt(reply.map(|r| i32::from(r.answer.status))),
        Bind::OptText(reply.map(|r| r.answer.body.as_str())),
        Bind::OptText(reply.map(|r| r.key.as_str())),
    ]);
    if !plain {
        // The session's close: when, which, and the hold that must still be this payment's.
        binds.extend([
            Bind::OptTime(session.map(|s| s.on)),
            Bind::OptText(session.map(|s| s.held.id.as_str())),
            Bind::OptTime(session.map(|s| s.held.until)),
        ]);
    }
    journal_binds(&mut binds, journal);
    Statement::new(
        if plain {
            COMPLETE_PLAIN_PG
        } else {
            COMPLETE_PG
        },
        binds,
    )
}

/// The binds of `journal!()`: the journal's row (`NewJournalRow`), and whether there is one.
fn journal_binds<'a>(binds: &mut Vec<Bind<'a>>, journal: Option<&'a Journal>) {
    let row = journal.map(NewJournalRow::from);
    binds.extend([
        Bind::Text(row.as_ref().map_or("", |r| r.kind)),
        Bind::Text(row.as_ref().map_or("", |r| r.merchant_id)),
        Bind::Text(row.as_ref().map_or("", |r| r.currency)),
        Bind::Time(
            row.as_ref()
                .map_or(OffsetDateTime::UNIX_EPOCH, |r| r.posted_on),
        ),
    ]);
    let amounts = row.as_ref().map_or([0; 5], |r| {
        [
            r.merchant_pending,
            r.merchant_available,
            r.merchant_in_transit,
            r.platform_fees,
            r.processor_receivable,
        ]
    });
    binds.extend(amounts.map(Bind::BigInt));
    binds.push(Bind::Bool(journal.is_some()));
}

async fn complete_pg(
    conn: &mut AsyncPgConnection,
    x: &Transaction,
    writes: Writes<'_>,
) -> QueryResult<(bool, i64)> {
    let change = original_change(writes.original);
    let statement = completion_statement(x, writes);
    if change.is_none() {
        // One statement is its own transaction: no BEGIN and COMMIT round trips.
        let (done, _, closed, notifications) =
            statement.get_result::<(i64, i64, i64, i64)>(conn).await?;
        return if done == 1 {
            Ok((closed == 1, notifications))
        } else {
            Err(diesel::result::Error::NotFound)
        };
    }
    // The original must move with the completion, or neither may be kept.
    conn.transaction::<_, diesel::result::Error, _>(async |conn| {
        match statement.get_result::<(i64, i64, i64, i64)>(conn).await? {
            (1, 1, closed, notifications) => Ok((closed == 1, notifications)),
            _ => Err(diesel::result::Error::NotFound),
        }
    })
    .await
}

mod in_steps;

use in_steps::complete_in_steps;

#[cfg(test)]
mod tests {
    use diesel::pg::Pg;
    use holdfast_domain::ids::EventId;
    use holdfast_domain::ports::EventData;

    use super::*;

    /// Each form of the statement gets one bind per mark, and the plain form leaves out the
    /// parts it does not need.
    #[test]
    fn both_forms_bind_every_mark() {
        let x = super::super::transactions::tests::pending(None);
        let event = Event {
            id: EventId::from_suffix("1"),
            platform_id: x.platform_id.clone(),
            mode: x.mode,
            data: EventData::TransactionCreated(Box::new(x.clone())),
            created_on: x.created_on,
        };
        let original = (TxnId::from_suffix("0"), OriginalOutcome::Reopened);
        for original in [None, Some(&original)] {
            let writes = Writes {
                original,
                event: &event,
                data: "{}",
                reply: None,
                session: None,
                journal: None,
            };
            let statement = completion_statement(&x, writes);
            // Rendering fails on a mark without its bind, or a bind without its mark.
            let rendered = diesel::debug_query::<Pg, _>(&statement).to_string();
            assert_eq!(rendered.contains("original AS"), original.is_some());
        }
        for part in ["original AS", "session AS"] {
            assert!(!COMPLETE_PLAIN_PG.contains(part));
            assert!(COMPLETE_PG.contains(part));
        }
    }
}
