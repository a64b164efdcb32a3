//! Fixed-text statements for PostgreSQL that diesel-async prepares once per connection.
//!
//! diesel never caches the prepared statement of an `UPDATE` or of `sql_query`: each run is
//! parsed, planned and described again, in a round trip of its own before the one that executes
//! it. On a hot path that costs more than the work itself. A `Statement` is fixed SQL text whose
//! `?` marks take its binds in order; diesel-async caches it by its text, so after the first run
//! on a connection it costs one round trip and no parsing.

use std::marker::PhantomData;

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Binary, Bool, Integer, Nullable, Text, Timestamptz};
use time::OffsetDateTime;

/// One value for a `?` mark.
#[derive(Debug, Clone)]
pub enum Bind<'a> {
    Text(&'a str),
    /// Text the statement owns (JSON written for it).
    OwnedText(String),
    OptText(Option<&'a str>),
    BigInt(i64),
    OptInt(Option<i32>),
    Bool(bool),
    Bytes(&'a [u8]),
    Time(OffsetDateTime),
    OptTime(Option<OffsetDateTime>),
    /// Arrays, for many rows in one statement (`unnest`).
    Texts(&'a [&'a str]),
    OptTexts(&'a [Option<&'a str>]),
    Ints(&'a [i32]),
    Times(&'a [OffsetDateTime]),
}

/// SQL text with `?` marks (so it must not use PostgreSQL's `?` operators) and one bind per mark;
/// `ST` is the SQL type of its result row, `()` for a statement only executed.
#[derive(Debug)]
pub struct Statement<'a, ST = ()> {
    sql: &'static str,
    binds: Vec<Bind<'a>>,
    row: PhantomData<ST>,
}

impl<'a, ST> Statement<'a, ST> {
    pub fn new(sql: &'static str, binds: Vec<Bind<'a>>) -> Self {
        Self {
            sql,
            binds,
            row: PhantomData,
        }
    }
}

/// `Q` (a diesel query or a [`Statement`]), sent unprepared: planned for the values bound, every time. For the statements that take
/// a batch of ids (`= ANY(?)`, `unnest(?)`) on tables that start empty: a prepared statement's
/// plan becomes generic after five runs, planned for the table as it was then; on a new
/// database that is an empty `notifications` table, and a sequential scan that then reads the
/// whole table on every batch until autovacuum's first ANALYZE (a minute or more). A batch's
/// planning costs tens of microseconds, once per batch.
#[derive(Debug, Clone, Copy)]
pub struct Unprepared<Q>(pub Q);

impl<Q: QueryFragment<DB>, DB: diesel::backend::Backend> QueryFragment<DB> for Unprepared<Q> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> diesel::QueryResult<()> {
        out.unsafe_to_cache_prepared();
        self.0.walk_ast(out)
    }
}

impl<Q> QueryId for Unprepared<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Unprepared<Q> {
    type SqlType = Q::SqlType;
}

impl<Q, Conn> diesel::query_dsl::RunQueryDsl<Conn> for Unprepared<Q> {}

#[derive(Debug, thiserror::Error)]
#[error("the statement has {marks} `?` marks but {binds} binds")]
struct BindCount {
    marks: usize,
    binds: usize,
}

impl<ST> QueryFragment<Pg> for Statement<'_, ST> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> diesel::QueryResult<()> {
        let marks = self.sql.matches('?').count();
        if marks != self.binds.len() {
            let count = BindCount {
                marks,
                binds: self.binds.len(),
            };
            return Err(DieselError::QueryBuilderError(Box::new(count)));
        }
        let mut parts = self.sql.split('?');
        out.push_sql(parts.next().unwrap_or_default());
        for (bind, part) in self.binds.iter().zip(parts) {
            match bind {
                Bind::Text(v) => out.push_bind_param::<Text, _>(*v)?,
                Bind::OwnedText(v) => out.push_bind_param::<Text, _>(v)?,
                Bind::OptText(v) => out.push_bind_param::<Nullable<Text>, _>(v)?,
                Bind::BigInt(v) => out.push_bind_param::<BigInt, _>(v)?,
                Bind::OptInt(v) => out.push_bind_param::<Nullable<Integer>, _>(v)?,
                Bind::Bool(v) => out.push_bind_param::<Bool, _>(v)?,
                Bind::Bytes(v) => out.push_bind_param::<Binary, _>(*v)?,
                Bind::Time(v) => out.push_bind_param::<Timestamptz, _>(v)?,
                Bind::OptTime(v) => out.push_bind_param::<Nullable<Timestamptz>, _>(v)?,
                Bind::Texts(v) => out.push_bind_param::<Array<Text>, _>(*v)?,
                Bind::OptTexts(v) => out.push_bind_param::<Array<Nullable<Text>>, _>(*v)?,
                Bind::Ints(v) => out.push_bind_param::<Array<Integer>, _>(*v)?,
                Bind::Times(v) => out.push_bind_param::<Array<Timestamptz>, _>(*v)?,
            }
            out.push_sql(part);
        }
        Ok(())
    }
}

/// No static id: diesel then caches the statement by its SQL text, which is fixed.
impl<ST> QueryId for Statement<'_, ST> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<ST: diesel::sql_types::SqlType + diesel::expression::TypedExpressionType> Query
    for Statement<'_, ST>
{
    type SqlType = ST;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binds_fill_the_marks_in_order() {
        let statement: Statement<'_> = Statement::new(
            "UPDATE t SET a = ?, b = ? WHERE c = ?",
            vec![Bind::Text("x"), Bind::BigInt(1), Bind::OptText(None)],
        );
        let sql = diesel::debug_query::<Pg, _>(&statement).to_string();
        assert!(
            sql.starts_with("UPDATE t SET a = $1, b = $2 WHERE c = $3"),
            "{sql}"
        );
    }

    #[test]
    fn a_missing_bind_is_an_error_not_a_wrong_statement() {
        let statement: Statement<'_> = Statement::new("SELECT ?, ?", vec![Bind::Bool(true)]);
        let mut sql = String::new();
        let mut builder = diesel::pg::PgQueryBuilder::default();
        let err = statement.to_sql(&mut builder, &Pg);
        sql.push_str(&diesel::query_builder::QueryBuilder::finish(builder));
        assert!(err.is_err(), "built {sql}");
    }

    #[test]
    fn fixed_text_is_safe_to_cache() {
        let statement: Statement<'_> = Statement::new("SELECT ?", vec![Bind::BigInt(1)]);
        assert!(statement.is_safe_to_cache_prepared(&Pg).unwrap());
    }

    /// A batch statement is planned for its values every time, never from a cached plan.
    #[test]
    fn a_statement_planned_each_time_is_never_cached() {
        let statement: Statement<'_> = Statement::new("SELECT ?", vec![Bind::BigInt(1)]);
        assert!(
            !Unprepared(statement)
                .is_safe_to_cache_prepared(&Pg)
                .unwrap()
        );
        let query = Unprepared(diesel::select(diesel::dsl::sql::<BigInt>("1")));
        assert!(!query.is_safe_to_cache_prepared(&Pg).unwrap());
    }
}
