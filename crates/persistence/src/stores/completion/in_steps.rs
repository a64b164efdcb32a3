//! The completion on SQLite: step by step in the caller's SQL transaction.

use diesel::prelude::*;
use holdfast_domain::payment::lifecycle::TxnState;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::scope::Scope;

use super::{OriginalChange, Writes, original_change};
use crate::conn::Conn;
use crate::payment_rows::CompletedRow;
use crate::query::StillPending;
use crate::schema::transactions as t;
use crate::stores::client_sessions::complete_held;
use crate::stores::idempotency::write_reply;
use crate::stores::ledger::write_journal;
use crate::stores::one_row;
use crate::stores::outbox::write_event;

/// SQLite, in process, where round trips cost nothing: step by step in the caller's
/// transaction.
pub(super) async fn complete_in_steps(
    conn: &mut Conn,
    x: &Transaction,
    completed: CompletedRow<'_>,
    writes: Writes<'_>,
) -> QueryResult<bool> {
    // Only a pending row is completed: of the request that made it and the reconciliation
    // that found it stale, the first to finish decides.
    let changed = conn
        .execute(
            diesel::update(
                t::table
                    .filter(t::id.eq(x.id.as_str()))
                    .filter(t::state.eq(StillPending)),
            )
            .set(completed),
        )
        .await?;
    one_row(changed)?;
    if let Some(change) = original_change(writes.original) {
        let row = t::table.filter(t::id.eq(change.id()));
        let changed = match change {
            OriginalChange::Close { to, .. } => {
                let closing = row.filter(t::state.eq(TxnState::Closing.as_str()));
                conn.execute(diesel::update(closing).set(t::state.eq(to.as_str())))
                    .await?
            }
            OriginalChange::Release { amount, .. } =>
            {
                #[expect(
                    clippy::arithmetic_side_effects,
                    reason = "SQL arithmetic, done by the database in its own types, not by Rust"
                )]
                conn.execute(
                    diesel::update(row).set(t::refunded_amount.eq(t::refunded_amount - amount)),
                )
                .await?
            }
        };
        one_row(changed)?;
    }
    write_event(conn, writes.event, writes.data).await?;
    write_reply(conn, &x.platform_id, x.mode, writes.reply).await?;
    if let Some(journal) = writes.journal {
        write_journal(conn, journal).await?;
    }
    match writes.session {
        Some(close) => {
            let scope = Scope::new(x.platform_id.clone(), x.mode);
            complete_held(conn, &scope, close, &x.id).await
        }
        None => Ok(false),
    }
}
