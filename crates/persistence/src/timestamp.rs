//! `Ts`, the SQL type of every stored instant, on both backends: PostgreSQL keeps a
//! `timestamptz`, SQLite an ISO-8601 text in UTC, exactly as diesel's own type for each does (the
//! conversions below only delegate to them). One type for both is what lets the schema, and so
//! every query, be written once.

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::expression::AsExpression;
use diesel::pg::Pg;
use diesel::query_builder::QueryId;
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::{SqlType, Timestamptz, TimestamptzSqlite};
use diesel::sqlite::Sqlite;
use time::OffsetDateTime;

/// A point in time, with its offset normalised to UTC on the way in.
#[derive(Debug, Clone, Copy, Default, QueryId, SqlType)]
#[diesel(postgres_type(oid = 1184, array_oid = 1185))]
#[diesel(sqlite_type(name = "Text"))]
pub struct Ts;

impl ToSql<Ts, Pg> for OffsetDateTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        ToSql::<Timestamptz, Pg>::to_sql(&storable(*self)?, &mut out.reborrow())
    }
}

impl FromSql<Ts, Pg> for OffsetDateTime {
    fn from_sql(value: <Pg as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        FromSql::<Timestamptz, Pg>::from_sql(value)
    }
}

impl ToSql<Ts, Sqlite> for OffsetDateTime {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Sqlite>) -> serialize::Result {
        storable(*self)?;
        // In range, so diesel's own conversion to UTC cannot panic.
        ToSql::<TimestamptzSqlite, Sqlite>::to_sql(self, out)
    }
}

/// `at` in UTC, or an error instead of diesel's panic when it cannot be stored: diesel converts
/// to UTC with `to_offset`, which panics past year 9999, and on SQLite that panic poisons the
/// connection's lock. The doors refuse such instants first (`holdfast_domain::instant`); this is
/// the floor under every other path.
fn storable(
    at: OffsetDateTime,
) -> Result<OffsetDateTime, Box<dyn std::error::Error + Send + Sync>> {
    holdfast_domain::instant::within_range(at)
        .ok_or_else(|| "an instant outside 0001-01-01..=9999-12-31 UTC cannot be stored".into())
}

impl FromSql<Ts, Sqlite> for OffsetDateTime {
    fn from_sql(value: <Sqlite as Backend>::RawValue<'_>) -> deserialize::Result<Self> {
        FromSql::<TimestamptzSqlite, Sqlite>::from_sql(value)
    }
}

/// An instant to bind as a query parameter. `OffsetDateTime` cannot be one itself (neither it
/// nor diesel's `AsExpression` is ours): bind `Instant(at)`, `Some(at)` for a nullable
/// column, and give a row field `#[diesel(serialize_as = Instant)]`.
#[derive(Debug, Clone, Copy, AsExpression)]
#[diesel(sql_type = Ts)]
pub struct Instant(pub OffsetDateTime);

impl From<OffsetDateTime> for Instant {
    fn from(at: OffsetDateTime) -> Self {
        Self(at)
    }
}

impl<DB: Backend> ToSql<Ts, DB> for Instant
where
    OffsetDateTime: ToSql<Ts, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        self.0.to_sql(out)
    }
}
