//! `TransactionStore`: the ledger a payment reads from and writes to (its completion is in
//! `completion.rs`).

use std::collections::BTreeMap;
use std::time::Duration;

use diesel::prelude::*;
use diesel::result::Error::NotFound;

use holdfast_domain::idempotency::{KeyClaim, KeyedAnswer};
use holdfast_domain::ids::{MerchantId, TxnId};
use holdfast_domain::ledger::Journal;
use holdfast_domain::merchant::Merchant;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::routing::ProcessorConnection;
use holdfast_domain::payment::token::SessionClose;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::ports::{
    Event, OriginalOutcome, PaymentSetup, Reservation, StoreError, TransactionStore, TxnFilter,
};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::completion::{Writes, complete};
use super::group_commit::{Completing, Write};
use super::pending::insert_pending;
use crate::conn::{Conn, Db};
use crate::error::{is_busy, query_error, unexpected};
use crate::payment_rows::{ConnectionRow, PlanRow, RouteRow, TxnRow};
use crate::query::scoped;
use crate::rows::{MerchantRow, convert_all};
use crate::schema::{
    merchants as m, plan_routes as r, plans as p, processor_connections as c, transactions as t,
};
use crate::timestamp::Instant;
use narrowed::narrowed;

/// Takes `reservation` on `original` with one conditional UPDATE: the database
/// decides which of concurrent claims wins. How many rows it took: 1 or 0.
async fn reserve(
    conn: &mut Conn,
    scope: &Scope,
    original: &TxnId,
    reservation: Reservation,
) -> QueryResult<usize> {
    let row = scoped(t::table, scope).filter(t::id.eq(original.as_str()));
    match reservation {
        Reservation::CloseAuth => {
            conn.execute(
                diesel::update(
                    row.filter(t::kind.eq(TxnType::Auth.as_str()))
                        .filter(t::state.eq(TxnState::Authorized.as_str())),
                )
                .set(t::state.eq(TxnState::Closing.as_str())),
            )
            .await
        }
        Reservation::Refund { amount } =>
        {
            #[expect(
                clippy::arithmetic_side_effects,
                reason = "SQL arithmetic, done by the database in its own types, not by Rust"
            )]
            conn.execute(
                diesel::update(
                    row.filter(t::state.eq(TxnState::Settled.as_str()))
                        .filter(t::kind.eq_any([TxnType::Sale.as_str(), TxnType::Capture.as_str()]))
                        .filter((t::refunded_amount + amount).le(t::approved_amount)),
                )
                .set(t::refunded_amount.eq(t::refunded_amount + amount)),
            )
            .await
        }
    }
}

/// One row of the payment setup's read: the merchant, its plan, one of the plan's routes and a
/// connection the plan names (its default or that route's).
type SetupRow = (
    MerchantRow,
    Option<PlanRow>,
    Option<RouteRow>,
    Option<ConnectionRow>,
);

/// The setup from its rows: the merchant and plan repeat on each, each route on one or two,
/// each connection on as many as name it.
fn setup_of(rows: Vec<SetupRow>) -> Result<Option<PaymentSetup>, StoreError> {
    let mut rows = rows.into_iter();
    let Some((merchant, plan, route, connection)) = rows.next() else {
        return Ok(None);
    };
    let mut routes = BTreeMap::new();
    let mut connections = BTreeMap::new();
    let rest = rows.map(|(_, _, route, connection)| (route, connection));
    for (route, connection) in std::iter::once((route, connection)).chain(rest) {
        if let Some(route) = route {
            routes.entry(route.position).or_insert(route);
        }
        if let Some(connection) = connection {
            connections
                .entry(connection.id.clone())
                .or_insert(connection);
        }
    }
    Ok(Some(PaymentSetup {
        merchant: Merchant::try_from(merchant)?,
        plan: plan
            .map(|plan| plan.with_routes(routes.into_values().collect()))
            .transpose()?,
        connections: connections
            .into_values()
            .map(ProcessorConnection::try_from)
            .collect::<Result<_, _>>()?,
    }))
}

#[async_trait::async_trait]
impl TransactionStore for SqlStore {
    async fn note_raw_cards(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(
            diesel::update(
                crate::query::scoped(m::table, scope)
                    .filter(m::id.eq(merchant.as_str()))
                    .filter(m::raw_cards_on.is_null()),
            )
            .set(m::raw_cards_on.eq(Some(crate::timestamp::Instant(at)))),
        )
        .await
        .map(drop)
        .map_err(query_error("merchants"))
    }

    async fn payment_setup(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<PaymentSetup>, StoreError> {
        let plan_of_merchant = p::platform_id
            .eq(m::platform_id)
            .and(p::mode.eq(m::mode))
            .and(
                m::plan_id
                    .eq(p::id.nullable())
                    .or(m::plan_id.is_null().and(p::is_default)),
            );
        // The connections the plan names: its default and each route's.
        let named_by_plan = c::platform_id
            .eq(m::platform_id)
            .and(c::mode.eq(m::mode))
            .and(
                c::id
                    .eq(p::default_connection_id)
                    .or(c::id.nullable().eq(r::connection_id.nullable())),
            );
        let mut conn = self.conn().await?;
        let rows: Vec<SetupRow> = conn
            .load(
                scoped(m::table, scope)
                    .left_join(p::table.on(plan_of_merchant))
                    .left_join(r::table.on(r::plan_id.eq(p::id)))
                    .left_join(c::table.on(named_by_plan))
                    .filter(m::id.eq(merchant.as_str()))
                    .filter(m::deleted_on.is_null())
                    .select((
                        m::all_columns,
                        p::all_columns.nullable(),
                        r::all_columns.nullable(),
                        c::all_columns.nullable(),
                    )),
            )
            .await
            .map_err(query_error("merchants"))?;
        setup_of(rows)
    }

    async fn insert_pending_transaction(
        &self,
        x: &Transaction,
        claim: Option<KeyClaim>,
    ) -> Result<bool, StoreError> {
        let pending = || Write::Pending(Box::new((x.clone(), claim.clone())));
        if let Some(written) = self.batchers.write(self, pending).await {
            return Ok(written);
        }
        let mut conn = self.conn().await?;
        insert_pending(&mut conn, x, claim.as_ref())
            .await
            .map_err(query_error("transactions"))
    }

    #[tracing::instrument(skip_all, fields(transaction = %x.id), err)]
    async fn complete_transaction_with_event(
        &self,
        x: &Transaction,
        original: Option<(TxnId, OriginalOutcome)>,
        event: &Event,
        reply: Option<KeyedAnswer>,
        session: Option<SessionClose>,
        journal: Option<Journal>,
    ) -> Result<bool, StoreError> {
        // The processor has answered: this write waits its turn (up to the completion wait)
        // for a connection and, on SQLite, for another process's write lock, rather than
        // answer 500 for a payment that was made. Trying again is safe: only a row still
        // pending is ever completed.
        const BUSY_PAUSE: Duration = Duration::from_millis(25);
        let data = serde_json::to_string(&event.data).map_err(unexpected)?;
        let now = tokio::time::Instant::now();
        let deadline = now.checked_add(self.completion_wait).unwrap_or(now);
        if original.is_none() && session.is_none() {
            let completing = || {
                Write::Complete(Box::new(Completing {
                    txn: x.clone(),
                    event: event.clone(),
                    data: data.clone(),
                    reply: reply.clone(),
                    journal: journal.clone(),
                }))
            };
            match self.batchers.write(self, completing).await {
                Some(true) => return Ok(false),
                Some(false) => return Err(query_error("transactions")(NotFound)),
                None => {}
            }
        }
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let mut conn = self.conn_within(left).await?;
            let writes = Writes {
                original: original.as_ref(),
                event,
                data: &data,
                reply: reply.as_ref(),
                session: session.as_ref(),
                journal: journal.as_ref(),
            };
            let done = complete(&mut conn, x, writes).await;
            match done {
                Err(e)
                    if is_busy(&e)
                        && tokio::time::Instant::now()
                            .checked_add(BUSY_PAUSE)
                            .is_some_and(|next| next < deadline) =>
                {
                    drop(conn);
                    tracing::warn!("database busy; the completion waits its turn");
                    tokio::time::sleep(BUSY_PAUSE).await;
                }
                done => return done.map_err(query_error("transactions")),
            }
        }
    }

    async fn reserve_with_pending(
        &self,
        scope: &Scope,
        original: &TxnId,
        reservation: Reservation,
        pending: &Transaction,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            if reserve(conn, scope, original, reservation).await? != 1 {
                return Ok(false);
            }
            insert_pending(conn, pending, None).await
        })
        .await
        .map_err(query_error("transactions"))
    }

    async fn get_transaction(
        &self,
        scope: &Scope,
        id: &TxnId,
    ) -> Result<Option<Transaction>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<TxnRow, _>(scoped(t::table, scope).filter(t::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("transactions"))?
            .map(Transaction::try_from)
            .transpose()
    }

    async fn stale_pending(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<Transaction>, StoreError> {
        let mut conn = self.conn().await?;
        let rows = conn
            .load::<TxnRow, _>(
                t::table
                    .filter(t::state.eq(TxnState::Pending.as_str()))
                    .filter(t::created_on.lt(Instant(before)))
                    .order(t::created_on.asc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("transactions"))?;
        convert_all(rows)
    }

    async fn list_transactions(
        &self,
        scope: &Scope,
        filter: &TxnFilter,
        page: &PageRequest,
    ) -> Result<Page<Transaction>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(t::table, scope)
            .order(t::id.desc())
            .limit(page.fetch_count());
        let rows: Vec<TxnRow> = match &mut conn.db {
            Db::Pg(pg) => {
                let query = narrowed(newest.into_boxed(), filter, page);
                diesel_async::RunQueryDsl::load(query, &mut **pg).await
            }
            Db::Sqlite(lite) => {
                let query = narrowed(newest.into_boxed(), filter, page);
                diesel_async::RunQueryDsl::load(query, &mut **lite).await
            }
        }
        .map_err(query_error("transactions"))?;
        let rows = convert_all(rows)?;
        Ok(if page.ending_before.is_some() {
            Page::from_overfetch_ascending(rows, page)
        } else {
            Page::from_overfetch(rows, page)
        })
    }
}

mod narrowed;
#[cfg(test)]
pub(super) mod tests;
