//! `PayoutStore`: payouts made under one lock from the available balance the ledger holds, and
//! moved with their journals and events in the SQL transaction of the move.

use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Nullable};
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{BoardingFormId, MerchantId, PayoutId, PlatformId};
use holdfast_domain::ledger::Journal;
use holdfast_domain::merchant::Currency;
use holdfast_domain::mode::Mode;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::payout::{
    Payout, PayoutFailure, PayoutSchedule, PayoutState, ReturnCode, parse_weekday, weekday_name,
};
use holdfast_domain::ports::{
    AnnouncePayout, Event, Made, PayoutFilter, PayoutMove, PayoutStore, ScheduledRun, StoreError,
};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::write_reply;
use super::ledger::write_journal;
use super::outbox::write_event_data;
use crate::conn::{Conn, Lock};
use crate::error::query_error;
use crate::query::load_page;
use crate::rows::{corrupt, parse};
use crate::schema::{ledger_journals as j, payout_schedules as ps, payouts as po};
use crate::timestamp::Instant;

#[derive(Debug, Queryable)]
pub(super) struct PayoutRow {
    id: String,
    platform_id: String,
    mode: String,
    merchant_id: String,
    currency: String,
    amount: i64,
    state: String,
    method: String,
    bank_form_id: Option<String>,
    bank_last4: String,
    failure_code: Option<String>,
    created_on: OffsetDateTime,
    updated_on: OffsetDateTime,
    /// Read only through `trace_number`: a payout names its file by its entry's trace.
    _ach_file_id: Option<String>,
    trace_number: Option<String>,
}

impl TryFrom<PayoutRow> for Payout {
    type Error = StoreError;
    fn try_from(row: PayoutRow) -> Result<Self, StoreError> {
        let failure = row
            .failure_code
            .map(|code| ReturnCode::parse("failure_code", &code).map(PayoutFailure::new))
            .transpose()
            .map_err(|e| corrupt("failure_code", e))?;
        Ok(Self {
            id: PayoutId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            currency: Currency::from_stored(&row.currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?,
            amount: row.amount,
            state: parse("payout state", &row.state)?,
            method: parse("payout method", &row.method)?,
            bank_last4: row.bank_last4,
            bank_form: row.bank_form_id.map(BoardingFormId::from_trusted),
            trace_number: row.trace_number,
            failure,
            created_on: row.created_on,
            updated_on: row.updated_on,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = po)]
struct NewPayoutRow<'a> {
    id: &'a str,
    platform_id: &'a str,
    mode: &'static str,
    merchant_id: &'a str,
    currency: &'a str,
    amount: i64,
    state: &'static str,
    method: &'static str,
    bank_form_id: Option<&'a str>,
    bank_last4: &'a str,
    failure_code: Option<String>,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    updated_on: OffsetDateTime,
}

impl<'a> From<&'a Payout> for NewPayoutRow<'a> {
    fn from(p: &'a Payout) -> Self {
        Self {
            id: p.id.as_str(),
            platform_id: p.platform_id.as_str(),
            mode: p.mode.as_str(),
            merchant_id: p.merchant_id.as_str(),
            currency: p.currency.as_str(),
            amount: p.amount,
            state: p.state.as_str(),
            method: p.method.as_str(),
            bank_form_id: p.bank_form.as_ref().map(BoardingFormId::as_str),
            bank_last4: &p.bank_last4,
            failure_code: p.failure.map(|f| f.code.as_code()),
            created_on: p.created_on,
            updated_on: p.updated_on,
        }
    }
}

/// What the merchant of `payout` has available in its currency, as it reads it, in the
/// caller's SQL transaction.
async fn available(conn: &mut Conn, payout: &Payout) -> QueryResult<i64> {
    available_to(
        conn,
        &payout.merchant_id,
        &payout.platform_id,
        payout.mode,
        payout.currency,
    )
    .await
}

/// What `merchant` has available in `currency`, as it reads it, in the caller's SQL
/// transaction.
pub(super) async fn available_to(
    conn: &mut Conn,
    merchant: &MerchantId,
    platform: &PlatformId,
    mode: Mode,
    currency: Currency,
) -> QueryResult<i64> {
    let sum: Option<i64> = conn
        .get_result(
            j::table
                .filter(j::merchant_id.eq(merchant.as_str()))
                .filter(j::platform_id.eq(platform.as_str()))
                .filter(j::mode.eq(mode.as_str()))
                .filter(j::currency.eq(currency.as_str()))
                .select(sql::<Nullable<BigInt>>(
                    "CAST(sum(merchant_available) AS BIGINT)",
                )),
        )
        .await?;
    // Credits are what the merchant is owed.
    Ok(sum.unwrap_or(0).saturating_neg())
}

/// Writes `payout`'s row, in the caller's SQL transaction.
pub(super) async fn insert_payout(conn: &mut Conn, payout: &Payout) -> QueryResult<()> {
    conn.execute(diesel::insert_into(po::table).values(NewPayoutRow::from(payout)))
        .await
        .map(drop)
}

/// `TRUE` when a filter is not used, so its condition lets every row through.
pub(super) fn unused(filter_used: bool) -> diesel::expression::SqlLiteral<Bool> {
    sql::<Bool>(if filter_used { "FALSE" } else { "TRUE" })
}

#[async_trait::async_trait]
impl PayoutStore for SqlStore {
    async fn make_payout(
        &self,
        payout: &Payout,
        journal: &Journal,
        event: &Event,
        reply: Option<KeyedAnswer>,
    ) -> Result<Made, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            conn.lock(Lock::Payouts).await?;
            let available = available(conn, payout).await?;
            if available < payout.amount {
                return Ok(Made::Short { available });
            }
            insert_payout(conn, payout).await?;
            write_journal(conn, journal).await?;
            write_event_data(conn, event).await?;
            write_reply(conn, &payout.platform_id, payout.mode, reply.as_ref()).await?;
            Ok(Made::Made)
        })
        .await
        .map_err(query_error("payouts"))
    }

    async fn move_payout(
        &self,
        change: &PayoutMove,
        reply: Option<KeyedAnswer>,
    ) -> Result<bool, StoreError> {
        let p = &change.payout;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let moved = conn
                .execute(
                    diesel::update(
                        po::table
                            .filter(po::id.eq(p.id.as_str()))
                            .filter(po::state.eq(change.from.as_str())),
                    )
                    .set((
                        po::state.eq(p.state.as_str()),
                        po::failure_code.eq(p.failure.map(|f| f.code.as_code())),
                        po::updated_on.eq(Instant(p.updated_on)),
                    )),
                )
                .await?;
            if moved == 0 {
                return Ok(false);
            }
            if let Some(journal) = &change.journal {
                write_journal(conn, journal).await?;
            }
            if let Some(event) = &change.event {
                write_event_data(conn, event).await?;
            }
            write_reply(conn, &p.platform_id, p.mode, reply.as_ref()).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("payouts"))
    }

    async fn get_payout(&self, scope: &Scope, id: &PayoutId) -> Result<Option<Payout>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<PayoutRow, _>(
            po::table
                .filter(po::id.eq(id.as_str()))
                .filter(po::platform_id.eq(scope.platform.as_str()))
                .filter(po::mode.eq(scope.mode.as_str())),
        )
        .await
        .optional()
        .map_err(query_error("payouts"))?
        .map(Payout::try_from)
        .transpose()
    }

    async fn list_payouts(
        &self,
        scope: &Scope,
        filter: &PayoutFilter,
        page: &PageRequest,
    ) -> Result<Page<Payout>, StoreError> {
        let mut conn = self.conn().await?;
        let merchant = filter.merchant.as_ref().map_or("", MerchantId::as_str);
        let state = filter.state.map_or("", PayoutState::as_str);
        let newest = po::table
            .filter(po::platform_id.eq(scope.platform.as_str()))
            .filter(po::mode.eq(scope.mode.as_str()))
            .filter(
                po::merchant_id
                    .eq(merchant)
                    .or(unused(filter.merchant.is_some())),
            )
            .filter(po::state.eq(state).or(unused(filter.state.is_some())))
            .order(po::id.desc())
            .limit(page.fetch_count());
        load_page::<PayoutRow, _, _, _, _, _, _>(
            &mut conn,
            "payouts",
            newest,
            page,
            |q, after| q.filter(po::id.lt(after)),
            |q, before| q.filter(po::id.gt(before)).order(po::id.asc()),
        )
        .await
    }

    async fn schedule(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<PayoutSchedule>, StoreError> {
        let mut conn = self.conn().await?;
        let row: Option<(String, Option<String>, i64)> = conn
            .first(
                ps::table
                    .filter(ps::merchant_id.eq(merchant.as_str()))
                    .filter(ps::platform_id.eq(scope.platform.as_str()))
                    .filter(ps::mode.eq(scope.mode.as_str()))
                    .select((ps::every, ps::weekday, ps::minimum)),
            )
            .await
            .optional()
            .map_err(query_error("payout_schedules"))?;
        row.map(|(every, weekday, minimum)| {
            let weekday = weekday
                .map(|day| parse_weekday("weekday", &day).map_err(|e| corrupt("weekday", e)))
                .transpose()?;
            PayoutSchedule::new(parse("payout interval", &every)?, weekday, minimum)
                .map_err(|e| corrupt("payout schedule", e))
        })
        .transpose()
    }

    async fn set_schedule(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        schedule: PayoutSchedule,
        at: OffsetDateTime,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        let row = (
            ps::merchant_id.eq(merchant.as_str()),
            ps::platform_id.eq(scope.platform.as_str()),
            ps::mode.eq(scope.mode.as_str()),
            ps::every.eq(schedule.interval.as_str()),
            ps::weekday.eq(schedule.weekday.map(weekday_name)),
            ps::minimum.eq(schedule.minimum),
            ps::updated_on.eq(Instant(at)),
        );
        conn.transaction(async |conn| {
            // One statement, so two setting the same merchant's schedule at once both succeed.
            conn.execute(
                diesel::insert_into(ps::table)
                    .values(row)
                    .on_conflict(ps::merchant_id)
                    .do_update()
                    .set(row),
            )
            .await?;
            write_reply(conn, &scope.platform, scope.mode, reply.as_ref()).await
        })
        .await
        .map_err(query_error("payout_schedules"))
    }

    async fn pay_out_scheduled(
        &self,
        run: &ScheduledRun,
        announce: std::sync::Arc<dyn AnnouncePayout>,
    ) -> Result<u64, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            super::payout_runs::pay_out_scheduled(conn, run, &*announce).await
        })
        .await
        .map_err(query_error("payouts"))
    }

    async fn payouts_to_hand_over(
        &self,
        mode: Mode,
        state: PayoutState,
        made_by: OffsetDateTime,
        after: Option<(OffsetDateTime, PayoutId)>,
        limit: u32,
    ) -> Result<Vec<Payout>, StoreError> {
        let mut conn = self.conn().await?;
        // Before the first payout there is nothing: the start of time, and an id below any.
        let (from, id) = after.map_or((OffsetDateTime::UNIX_EPOCH, String::new()), |(at, id)| {
            (at, id.to_string())
        });
        let rows: Vec<PayoutRow> = conn
            .load(
                po::table
                    .filter(po::mode.eq(mode.as_str()))
                    .filter(po::state.eq(state.as_str()))
                    .filter(po::created_on.le(Instant(made_by)))
                    .filter(
                        po::created_on
                            .gt(Instant(from))
                            .or(po::created_on.eq(Instant(from)).and(po::id.gt(id.as_str()))),
                    )
                    .order((po::created_on.asc(), po::id.asc()))
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("payouts"))?;
        rows.into_iter().map(Payout::try_from).collect()
    }
}
