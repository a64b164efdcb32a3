//! `NoticeStore`: what processors tell Holdfast later, each item kept once with what applying
//! it did, and a follow-up's outcome written with it.

use diesel::prelude::*;
use holdfast_domain::ids::{ConnectionId, TxnId};
use holdfast_domain::payment::follow_up::OriginalMove;
use holdfast_domain::payment::routing::ProcessorConnection;
use holdfast_domain::ports::{
    NoticeEffect, NoticeRecorded, NoticeStore, ProcessorNotice, Settlement, StoreError,
};

use super::ledger::write_journal;
use super::outbox::write_event_data;
use super::{SqlStore, one_row};
use crate::conn::Conn;
use crate::error::query_error;
use crate::payment_rows::{CompletedRow, ConnectionRow};
use crate::schema::{processor_connections as c, processor_notices as n, transactions as t};
use crate::timestamp::Instant;

#[derive(Insertable)]
#[diesel(table_name = n, treat_none_as_default_value = false)]
struct NewNoticeRow<'a> {
    id: &'a str,
    connection_id: &'a str,
    platform_id: &'a str,
    mode: &'static str,
    event_code: &'a str,
    success: bool,
    psp_reference: &'a str,
    merchant_reference: Option<&'a str>,
    item: &'a str,
    outcome: &'static str,
    #[diesel(serialize_as = Instant)]
    received_on: time::OffsetDateTime,
}

/// What the `outcome` column says of a notice.
const APPLIED: &str = "applied";
const STALE: &str = "stale";

/// The follow-up in its final form, if it is still as the settlement found it, its original's
/// move, if the original is as expected, and the journal it posts: all or nothing
/// (`NotFound`).
async fn settle(conn: &mut Conn, settlement: &Settlement) -> QueryResult<()> {
    let txn = &settlement.txn;
    let still = t::table
        .filter(t::id.eq(txn.id.as_str()))
        .filter(t::state.eq(settlement.from.as_str()));
    one_row(
        conn.execute(diesel::update(still).set(CompletedRow::from(txn)))
            .await?,
    )?;
    if let Some((original, moves)) = &settlement.original {
        move_original(conn, original, *moves).await?;
    }
    if let Some(journal) = &settlement.journal {
        write_journal(conn, journal).await?;
    }
    if let Some(at) = settlement.reverses {
        reverse_journals(conn, &txn.id, at).await?;
    }
    write_event_data(conn, &settlement.event).await
}

/// One `reversal` journal of `source`: the negation of everything its journals posted, so its
/// accounts net to zero (a settled charge's net comes back out of available). Binds: the
/// time, the source (in the order they appear: SQLite numbers `$n` by first appearance).
const REVERSE: &str = "
INSERT INTO ledger_journals
       (source_id, kind, platform_id, mode, merchant_id, currency, posted_on, merchant_pending,
        merchant_available, merchant_in_transit, platform_fees, processor_receivable)
SELECT j.source_id, 'reversal', j.platform_id, j.mode, j.merchant_id, j.currency, $1,
       -sum(j.merchant_pending), -sum(j.merchant_available), -sum(j.merchant_in_transit),
       -sum(j.platform_fees), -sum(j.processor_receivable)
  FROM ledger_journals j
 WHERE j.source_id = $2
 GROUP BY j.source_id, j.platform_id, j.mode, j.merchant_id, j.currency";

async fn reverse_journals(
    conn: &mut Conn,
    source: &TxnId,
    at: time::OffsetDateTime,
) -> QueryResult<()> {
    conn.execute(
        diesel::sql_query(REVERSE)
            .bind::<crate::timestamp::Ts, _>(Instant(at))
            .bind::<diesel::sql_types::Text, _>(source.as_str()),
    )
    .await
    .map(drop)
}

async fn move_original(conn: &mut Conn, id: &TxnId, moves: OriginalMove) -> QueryResult<()> {
    let row = t::table.filter(t::id.eq(id.as_str()));
    let changed = match moves {
        OriginalMove::None => return Ok(()),
        OriginalMove::State { from, to } => {
            let expected = row.filter(t::state.eq(from.as_str()));
            conn.execute(diesel::update(expected).set(t::state.eq(to.as_str())))
                .await?
        }
        OriginalMove::Release { amount } =>
        {
            #[expect(
                clippy::arithmetic_side_effects,
                reason = "SQL arithmetic, done by the database in its own types, not by Rust"
            )]
            conn.execute(
                diesel::update(row.filter(t::refunded_amount.ge(amount)))
                    .set(t::refunded_amount.eq(t::refunded_amount - amount)),
            )
            .await?
        }
    };
    one_row(changed)
}

#[async_trait::async_trait]
impl NoticeStore for SqlStore {
    async fn connection_for_notices(
        &self,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<ConnectionRow, _>(c::table.filter(c::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("processor_connections"))?
            .map(ProcessorConnection::try_from)
            .transpose()
    }

    async fn record_notice(
        &self,
        notice: &ProcessorNotice,
        effect: &NoticeEffect,
    ) -> Result<NoticeRecorded, StoreError> {
        let mut conn = self.conn().await?;
        let row = NewNoticeRow {
            id: notice.id.as_str(),
            connection_id: notice.connection_id.as_str(),
            platform_id: notice.platform_id.as_str(),
            mode: notice.mode.as_str(),
            event_code: &notice.event_code,
            success: notice.success,
            psp_reference: &notice.psp_reference,
            merchant_reference: notice.merchant_reference.as_deref(),
            item: &notice.item,
            outcome: match effect {
                NoticeEffect::Settle(_) => APPLIED,
                NoticeEffect::Keep(note) => note.as_str(),
            },
            received_on: notice.received_on,
        };
        conn.transaction(async |conn| {
            // The item is kept first: a repeat of one kept before changes nothing.
            let kept = conn
                .execute(
                    diesel::insert_into(n::table)
                        .values(row)
                        .on_conflict_do_nothing(),
                )
                .await?;
            if kept == 0 {
                return Ok(NoticeRecorded::Repeated);
            }
            let NoticeEffect::Settle(settlement) = effect else {
                return Ok(NoticeRecorded::Kept);
            };
            match conn
                .transaction(async |conn| settle(conn, settlement).await)
                .await
            {
                Ok(()) => Ok(NoticeRecorded::Applied),
                // The follow-up or its original moved on since it was read: the notice is
                // kept as stale, and nothing else is written.
                Err(diesel::result::Error::NotFound) => {
                    let this = n::table.filter(n::id.eq(notice.id.as_str()));
                    conn.execute(diesel::update(this).set(n::outcome.eq(STALE)))
                        .await?;
                    Ok(NoticeRecorded::Stale)
                }
                Err(other) => Err(other),
            }
        })
        .await
        .map_err(query_error("processor_notices"))
    }
}
