//! Query pieces every store uses: the platform-and-mode filter and the newest-first page.

use diesel::dsl::{And, Eq, Filter};
use diesel::expression::Expression;
use diesel::prelude::*;
use diesel::query_dsl::methods::FilterDsl;
use diesel::sql_types::Text;
use holdfast_domain::ids::PlatformId;
use holdfast_domain::mode::Mode;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::StoreError;
use holdfast_domain::scope::Scope;

use crate::conn::{Conn, Loads};
use crate::rows::convert_all;
use crate::schema::{
    boarding_forms, client_sessions, compliance_forms, events, idempotency_keys, merchants,
    notifications, plans, processor_connections, tokens, transactions, webhooks,
};

/// A table whose rows each belong to one platform and one mode.
pub trait ScopedTable: Table + Sized {
    type Platform: Column<Table = Self> + Expression<SqlType = Text> + Default;
    type Mode: Column<Table = Self> + Expression<SqlType = Text> + Default;
}

/// The filter `scoped` adds.
pub type ScopeFilter<'a, T> =
    And<Eq<<T as ScopedTable>::Platform, &'a str>, Eq<<T as ScopedTable>::Mode, &'static str>>;

/// `table`'s rows in `scope`: the filter every query a client can reach starts from, so no
/// query can forget half of it.
pub fn scoped<'a, T>(table: T, scope: &'a Scope) -> Filter<T, ScopeFilter<'a, T>>
where
    T: ScopedTable + FilterDsl<ScopeFilter<'a, T>>,
{
    scoped_to(table, &scope.platform, scope.mode)
}

/// `table`'s rows of `platform` in `mode`, for a write that takes them from the row it writes.
pub fn scoped_to<'a, T>(
    table: T,
    platform: &'a PlatformId,
    mode: Mode,
) -> Filter<T, ScopeFilter<'a, T>>
where
    T: ScopedTable + FilterDsl<ScopeFilter<'a, T>>,
{
    table.filter(
        T::Platform::default()
            .eq(platform.as_str())
            .and(T::Mode::default().eq(mode.as_str())),
    )
}

macro_rules! scoped_tables {
    ($($table:ident),*) => {
        $(impl ScopedTable for $table::table {
            type Platform = $table::platform_id;
            type Mode = $table::mode;
        })*
    };
}

scoped_tables!(
    boarding_forms,
    compliance_forms,
    client_sessions,
    events,
    idempotency_keys,
    merchants,
    notifications,
    plans,
    processor_connections,
    tokens,
    transactions,
    webhooks
);

/// One page of rows of `newest`, a query ordered newest first (by id, descending) and limited
/// to `page.fetch_count()`, narrowed by the page's cursor, if it has one: `after` keeps the ids
/// below `startingAfter` (the order stays newest first), `before` the ids above `endingBefore`
/// in ascending order (the page is read oldest first from the cursor, then turned around). The
/// row fetched past the page tells whether there is more.
pub async fn load_rows_page<'q, R, Q, A, B, FA, FB>(
    conn: &mut Conn,
    table: &'static str,
    newest: Q,
    page: &'q PageRequest,
    after: FA,
    before: FB,
) -> Result<Page<R>, StoreError>
where
    R: Send + 'static,
    Q: Loads<'q, R>,
    A: Loads<'q, R>,
    B: Loads<'q, R>,
    FA: FnOnce(Q, &'q str) -> A,
    FB: FnOnce(Q, &'q str) -> B,
{
    let query_error = crate::error::query_error(table);
    if let Some(cursor) = &page.ending_before {
        let rows = conn
            .load(before(newest, cursor))
            .await
            .map_err(query_error)?;
        return Ok(Page::from_overfetch_ascending(rows, page));
    }
    let rows = match &page.starting_after {
        Some(cursor) => conn.load(after(newest, cursor)).await,
        None => conn.load(newest).await,
    }
    .map_err(query_error)?;
    Ok(Page::from_overfetch(rows, page))
}

/// `load_rows_page`, each row converted to `T`.
pub async fn load_page<'q, R, T, Q, A, B, FA, FB>(
    conn: &mut Conn,
    table: &'static str,
    newest: Q,
    page: &'q PageRequest,
    after: FA,
    before: FB,
) -> Result<Page<T>, StoreError>
where
    R: Send + 'static,
    T: TryFrom<R, Error = StoreError>,
    Q: Loads<'q, R>,
    A: Loads<'q, R>,
    B: Loads<'q, R>,
    FA: FnOnce(Q, &'q str) -> A,
    FB: FnOnce(Q, &'q str) -> B,
{
    let rows = load_rows_page(conn, table, newest, page, after, before).await?;
    Ok(Page {
        data: convert_all(rows.data)?,
        has_more: rows.has_more,
    })
}

/// `'pending'`, written so the planner cannot see it: `(SELECT 'pending')`. A statement that
/// finds rows by their key and checks they are still pending compares `state` with this. Written
/// out, `state = 'pending'` makes the partial indexes of pending rows (`transactions_pending_idx`,
/// `notifications_pending_idx`) qualify, and where the statistics count few pending rows (as they
/// do whenever payments complete and deliveries keep up) the planner reads such an index whole and
/// filters it by key, dead entries of every row finished since the last vacuum included, instead
/// of the one key lookup (docs/decisions.md, "Rows found by their key, never by a pending index").
/// Fixed text: a statement using it is still prepared and cached.
#[derive(Debug, Clone, Copy, diesel::query_builder::QueryId)]
pub struct StillPending;

/// The SQL of [`StillPending`], for statements written as text.
macro_rules! still_pending {
    () => {
        "(SELECT 'pending')"
    };
}
pub(crate) use still_pending;

impl Expression for StillPending {
    type SqlType = Text;
}

impl<DB: diesel::backend::Backend> diesel::query_builder::QueryFragment<DB> for StillPending {
    fn walk_ast<'b>(
        &'b self,
        mut out: diesel::query_builder::AstPass<'_, 'b, DB>,
    ) -> QueryResult<()> {
        out.push_sql(still_pending!());
        Ok(())
    }
}

impl<QS> diesel::AppearsOnTable<QS> for StillPending {}

impl<QS> diesel::SelectableExpression<QS> for StillPending {}

impl<GB> diesel::expression::ValidGrouping<GB> for StillPending {
    type IsAggregate = diesel::expression::is_aggregate::Never;
}
