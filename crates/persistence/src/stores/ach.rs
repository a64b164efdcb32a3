//! `AchStore`: the live rail's NACHA files, recorded with the payouts they carry in one SQL
//! transaction under the payouts' lock, and put in the outbox from here (docs/money.md).

use std::sync::Arc;

use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use holdfast_domain::Invalid;
use holdfast_domain::ids::{AchFileId, PayoutId};
use holdfast_domain::mode::Mode;
use holdfast_domain::payout::ach::FileNumbers;
use holdfast_domain::payout::{Payout, PayoutState};
use holdfast_domain::ports::{
    AchHandOver, AchStore, FileRecorded, Sealed, StoreError, UnsentAchFile, WriteAchFile,
};
use time::{Date, OffsetDateTime};

use super::SqlStore;
use super::payouts::PayoutRow;
use crate::conn::{Conn, Db, Lock};
use crate::error::query_error;
use crate::schema::{ach_files as f, payouts as po};
use crate::timestamp::Instant;

/// How many payout ids one statement names (SQLite binds each).
const IDS_PER_STATEMENT: usize = 5_000;

/// Each payout of a file takes its entry's trace number: the originating bank's first eight
/// digits and its sequence number, counting on from the file's first in the order of the
/// payouts' ids (the order the file lists them in). Binds, in the order they first appear
/// (SQLite numbers them so): the eight digits, the first sequence number, the file's id.
/// `{sequence}` is the backend's way of writing seven digits.
const TRACES: &str = "
UPDATE payouts SET trace_number = n.trace
  FROM (SELECT id, $1 || {sequence} AS trace FROM payouts WHERE ach_file_id = $3) n
 WHERE payouts.id = n.id";

/// Why a file was not recorded.
enum NotRecorded {
    /// The file could not be written (the day's modifiers are used up, a total too large).
    Refused(Invalid),
    /// The database failed.
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for NotRecorded {
    fn from(e: diesel::result::Error) -> Self {
        Self::Db(e)
    }
}

/// The day as the table keeps it.
fn day(d: Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// The numbers the next file of `entries` credits through `odfi` on `day` takes.
async fn next_numbers(
    conn: &mut Conn,
    odfi: &str,
    on: &str,
    entries: usize,
) -> Result<FileNumbers, NotRecorded> {
    let last: Option<i64> = conn
        .first(
            f::table
                .filter(f::odfi.eq(odfi))
                .order((f::created_on.desc(), f::id.desc()))
                .select(f::last_trace),
        )
        .await
        .optional()?;
    let today: i64 = conn
        .get_result(
            f::table
                .filter(f::odfi.eq(odfi))
                .filter(f::created_day.eq(on))
                .count(),
        )
        .await?;
    let last = last.map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    FileNumbers::next(last, usize::try_from(today).unwrap_or(usize::MAX), entries)
        .map_err(NotRecorded::Refused)
}

/// The recording, in the caller's SQL transaction.
async fn record(
    conn: &mut Conn,
    hand_over: &AchHandOver,
    write: &dyn WriteAchFile,
) -> Result<FileRecorded, NotRecorded> {
    conn.lock(Lock::Payouts).await?;
    let file_id = hand_over.id.as_str();
    for ids in hand_over.payouts.chunks(IDS_PER_STATEMENT) {
        let ids: Vec<&str> = ids.iter().map(PayoutId::as_str).collect();
        conn.execute(
            diesel::update(
                po::table
                    .filter(po::id.eq_any(ids))
                    .filter(po::mode.eq(Mode::Live.as_str()))
                    .filter(po::state.eq(PayoutState::Pending.as_str())),
            )
            .set((
                po::state.eq(PayoutState::InTransit.as_str()),
                po::ach_file_id.eq(file_id),
                po::updated_on.eq(Instant(hand_over.created_on)),
            )),
        )
        .await?;
    }
    let rows: Vec<PayoutRow> = conn
        .load(
            po::table
                .filter(po::ach_file_id.eq(file_id))
                .order(po::id.asc()),
        )
        .await?;
    let moved = rows
        .into_iter()
        .map(Payout::try_from)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| diesel::result::Error::DeserializationError(Box::new(e)))?;
    if moved.is_empty() {
        return Ok(FileRecorded {
            payouts: 0,
            total: 0,
        });
    }
    let created_day = day(hand_over.created_on.date());
    let numbers = next_numbers(conn, &hand_over.odfi, &created_day, moved.len()).await?;
    let sealed = write.write(numbers, &moved).map_err(NotRecorded::Refused)?;
    let total: i64 = moved.iter().map(|p| p.amount).sum();
    let entries = i64::try_from(moved.len()).unwrap_or(i64::MAX);
    conn.execute(
        diesel::insert_into(f::table).values((
            f::id.eq(file_id),
            f::odfi.eq(&hand_over.odfi),
            f::created_on.eq(Instant(hand_over.created_on)),
            f::created_day.eq(&created_day),
            f::modifier.eq(numbers.modifier.to_string()),
            f::effective_on.eq(day(hand_over.effective_on)),
            f::first_trace.eq(i64::from(numbers.first_trace)),
            f::last_trace.eq(i64::from(numbers.first_trace)
                .saturating_add(entries)
                .saturating_sub(1)),
            f::entries.eq(entries),
            f::total.eq(total),
            f::body_key.eq(&sealed.key_id),
            f::body_nonce.eq(&sealed.nonce),
            f::body_sealed.eq(&sealed.ciphertext),
        )),
    )
    .await?;
    let sequence = match conn.db {
        Db::Pg(_) => "lpad(CAST($2 - 1 + row_number() OVER (ORDER BY id) AS TEXT), 7, '0')",
        Db::Sqlite(_) => "substr('0000000' || ($2 - 1 + row_number() OVER (ORDER BY id)), -7)",
    };
    conn.execute(
        diesel::sql_query(TRACES.replace("{sequence}", sequence))
            .bind::<Text, _>(hand_over.odfi.get(..8).unwrap_or_default())
            .bind::<BigInt, _>(i64::from(numbers.first_trace))
            .bind::<Text, _>(file_id),
    )
    .await?;
    Ok(FileRecorded {
        payouts: u64::try_from(entries).unwrap_or(0),
        total,
    })
}

#[async_trait::async_trait]
impl AchStore for SqlStore {
    async fn record_ach_file(
        &self,
        hand_over: &AchHandOver,
        write: Arc<dyn WriteAchFile>,
    ) -> Result<FileRecorded, StoreError> {
        if hand_over.odfi.len() < 8 {
            return Err(StoreError::Unexpected("odfi: not a routing number".into()));
        }
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| record(conn, hand_over, &*write).await)
            .await
            .map_err(|e| match e {
                NotRecorded::Refused(why) => StoreError::Unexpected(format!("ach file: {why}")),
                NotRecorded::Db(e) => query_error("ach_files")(e),
            })
    }

    async fn last_ach_file_on(&self, odfi: &str) -> Result<Option<OffsetDateTime>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first(
            f::table
                .filter(f::odfi.eq(odfi))
                .order((f::created_on.desc(), f::id.desc()))
                .select(f::created_on),
        )
        .await
        .optional()
        .map_err(query_error("ach_files"))
    }

    async fn unsent_ach_files(&self) -> Result<Vec<UnsentAchFile>, StoreError> {
        let mut conn = self.conn().await?;
        let rows: Vec<(String, String, Vec<u8>, Vec<u8>)> = conn
            .load(
                f::table
                    .filter(f::sent_on.is_null())
                    .order((f::created_on.asc(), f::id.asc()))
                    .select((f::id, f::body_key, f::body_nonce, f::body_sealed)),
            )
            .await
            .map_err(query_error("ach_files"))?;
        Ok(rows
            .into_iter()
            .map(|(id, key_id, nonce, ciphertext)| UnsentAchFile {
                id: AchFileId::from_trusted(id),
                sealed: Sealed {
                    key_id,
                    nonce,
                    ciphertext,
                },
            })
            .collect())
    }

    async fn ach_file_sent(&self, id: &AchFileId, at: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(
            diesel::update(f::table.filter(f::id.eq(id.as_str())))
                .set(f::sent_on.eq(Some(Instant(at)))),
        )
        .await
        .map(drop)
        .map_err(query_error("ach_files"))
    }

    async fn payout_by_trace(&self, trace: &str) -> Result<Option<Payout>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<PayoutRow, _>(
            po::table
                .filter(po::trace_number.eq(trace))
                .filter(po::mode.eq(Mode::Live.as_str()))
                .order((po::created_on.desc(), po::id.desc())),
        )
        .await
        .optional()
        .map_err(query_error("payouts"))?
        .map(Payout::try_from)
        .transpose()
    }

    async fn payouts_arrived(
        &self,
        on: Date,
        after: Option<PayoutId>,
        limit: u32,
    ) -> Result<Vec<Payout>, StoreError> {
        let mut conn = self.conn().await?;
        let after = after.map_or_else(String::new, |id| id.to_string());
        let rows: Vec<PayoutRow> = conn
            .load(
                po::table
                    .inner_join(f::table)
                    .filter(po::mode.eq(Mode::Live.as_str()))
                    .filter(po::state.eq(PayoutState::InTransit.as_str()))
                    .filter(f::effective_on.le(day(on)))
                    // A file not yet in the outbox has not reached the bank.
                    .filter(f::sent_on.is_not_null())
                    .filter(po::id.gt(after.as_str()))
                    .order(po::id.asc())
                    .limit(i64::from(limit))
                    .select(po::all_columns),
            )
            .await
            .map_err(query_error("payouts"))?;
        rows.into_iter().map(Payout::try_from).collect()
    }
}
