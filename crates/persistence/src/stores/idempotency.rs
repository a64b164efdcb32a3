//! `IdempotencyStore`, and storing a request's answer inside the SQL transaction of the change
//! it reports.

use diesel::prelude::*;
use diesel_async::AsyncPgConnection;
use holdfast_domain::idempotency::{Answer, IdempotencyKey, KeyRecord, KeyedAnswer, Seen, on_seen};
use holdfast_domain::ids::PlatformId;
use holdfast_domain::mode::Mode;
use holdfast_domain::ports::{Begun, IdempotencyStore, StoreError};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use crate::conn::{Conn, Db, TransactionBody};
use crate::error::query_error;
use crate::pg_statement::{Bind, Statement};
use crate::query::{scoped, scoped_to};
use crate::schema::idempotency_keys as k;
use crate::timestamp::Instant;

/// Stores a request's idempotent `reply`, when it has one, inside the caller's open
/// transaction: the answer and the change it reports commit together or not at all.
pub async fn write_reply(
    conn: &mut Conn,
    platform: &PlatformId,
    mode: Mode,
    reply: Option<&KeyedAnswer>,
) -> QueryResult<()> {
    let Some(reply) = reply else {
        return Ok(());
    };
    conn.execute(
        diesel::update(scoped_to(k::table, platform, mode).filter(k::key.eq(reply.key.as_str())))
            .set((
                k::status.eq(Some(i32::from(reply.answer.status))),
                k::body.eq(Some(&reply.answer.body)),
            )),
    )
    .await
    .map(drop)
}

/// Runs `write` and, when the request has a `reply`, stores it in the same SQL transaction.
/// Without one, `write` runs alone: a single statement needs no BEGIN and COMMIT.
pub async fn with_reply(
    conn: &mut Conn,
    platform: &PlatformId,
    mode: Mode,
    reply: Option<&KeyedAnswer>,
    write: impl for<'r> TransactionBody<'r, QueryResult<()>> + Send,
) -> QueryResult<()> {
    match reply {
        None => write(conn).await,
        Some(reply) => {
            conn.transaction(async |conn| {
                write(conn).await?;
                write_reply(conn, platform, mode, Some(reply)).await
            })
            .await
        }
    }
}

/// Claims `key` in `scope` for a request with `fingerprint` arriving `at`, inside the caller's
/// transaction if any: 1 when it was free, 0 when taken.
pub(super) async fn claim_key(
    conn: &mut Conn,
    scope: (&str, &'static str),
    key: &IdempotencyKey,
    fingerprint: &[u8; 32],
    at: OffsetDateTime,
) -> QueryResult<usize> {
    let (platform_id, mode) = scope;
    let row = NewIdempotencyRow {
        platform_id,
        mode,
        key: key.as_str(),
        fingerprint: fingerprint.as_slice(),
        created_on: at,
    };
    conn.execute(
        diesel::insert_into(k::table)
            .values(row)
            .on_conflict_do_nothing(),
    )
    .await
}

#[derive(Debug, Insertable)]
#[diesel(table_name = k, treat_none_as_default_value = false)]
struct NewIdempotencyRow<'a> {
    platform_id: &'a str,
    mode: &'static str,
    key: &'a str,
    fingerprint: &'a [u8],
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
}

/// The claim on PostgreSQL, committed without waiting for its WAL to reach the disk
/// (docs/decisions.md, "The idempotency claim commits asynchronously"): it is seen by concurrent
/// requests at once, and whatever the request then writes commits synchronously, which flushes
/// the claim first. A crash can lose only a claim whose request has written and answered
/// nothing.
const CLAIM_PG: &str = "\
INSERT INTO idempotency_keys (platform_id, mode, key, fingerprint, created_on)
SELECT ?, ?, ?, ?, ? FROM (SELECT set_config('synchronous_commit', 'off', true)) AS relaxed
    ON CONFLICT DO NOTHING";

async fn claim_pg(
    conn: &mut AsyncPgConnection,
    scope: &Scope,
    key: &IdempotencyKey,
    fingerprint: &[u8; 32],
    now: OffsetDateTime,
) -> QueryResult<usize> {
    use diesel_async::RunQueryDsl;
    Statement::<()>::new(
        CLAIM_PG,
        vec![
            Bind::Text(scope.platform.as_str()),
            Bind::Text(scope.mode.as_str()),
            Bind::Text(key.as_str()),
            Bind::Bytes(fingerprint.as_slice()),
            Bind::Time(now),
        ],
    )
    .execute(conn)
    .await
}

#[async_trait::async_trait]
impl IdempotencyStore for SqlStore {
    async fn begin(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        fingerprint: &[u8; 32],
        now: OffsetDateTime,
    ) -> Result<Begun, StoreError> {
        let claim = async |conn: &mut Conn| {
            let scope = (scope.platform.as_str(), scope.mode.as_str());
            claim_key(conn, scope, key, fingerprint, now).await
        };
        let mut conn = self.conn().await?;
        // The unique key decides: of two concurrent first requests, one inserts. The common
        // case (a new key) is this one statement, outside any transaction.
        let first = match conn.db {
            Db::Pg(ref mut pg) => claim_pg(pg, scope, key, fingerprint, now).await,
            Db::Sqlite(_) => claim(&mut conn).await,
        };
        if first.map_err(query_error("idempotency_keys"))? == 1 {
            return Ok(Begun::Started);
        }
        conn.transaction(async |conn| {
            if claim(conn).await? == 1 {
                return Ok(Begun::Started);
            }
            let this = scoped(k::table, scope).filter(k::key.eq(key.as_str()));
            let (stored_fp, created_on, status, body): (
                Vec<u8>,
                OffsetDateTime,
                Option<i32>,
                Option<String>,
            ) = conn
                .first(this.select((k::fingerprint, k::created_on, k::status, k::body)))
                .await?;
            let record = KeyRecord {
                fingerprint: stored_fp.try_into().unwrap_or([0; 32]),
                created_on,
                response: match (status, body) {
                    (Some(status), Some(body)) => Some(Answer {
                        status: u16::try_from(status).unwrap_or(500),
                        body,
                    }),
                    _ => None,
                },
            };
            match on_seen(&record, fingerprint, now) {
                Seen::Restart => {
                    // Only the stale record this request saw is replaced; a newer one (another
                    // request restarting it first) wins.
                    conn.execute(diesel::delete(
                        this.filter(k::created_on.eq(Instant(created_on))),
                    ))
                    .await?;
                    if claim(conn).await? == 1 {
                        Ok(Begun::Started)
                    } else {
                        Ok(Begun::Seen(Seen::InProgress))
                    }
                }
                seen => Ok(Begun::Seen(seen)),
            }
        })
        .await
        .map_err(query_error("idempotency_keys"))
    }

    async fn complete(
        &self,
        scope: &Scope,
        key: &IdempotencyKey,
        answer: &Answer,
    ) -> Result<(), StoreError> {
        let reply = KeyedAnswer {
            key: key.clone(),
            answer: answer.clone(),
        };
        let mut conn = self.conn().await?;
        write_reply(&mut conn, &scope.platform, scope.mode, Some(&reply))
            .await
            .map_err(query_error("idempotency_keys"))
    }

    async fn release(&self, scope: &Scope, key: &IdempotencyKey) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::delete(
            scoped(k::table, scope)
                .filter(k::key.eq(key.as_str()))
                .filter(k::status.is_null()),
        ))
        .await
        .map(drop)
        .map_err(query_error("idempotency_keys"))
    }

    async fn purge(&self, before: OffsetDateTime) -> Result<u64, StoreError> {
        let mut conn = self.conn().await?;
        let n = conn
            .execute(diesel::delete(
                k::table.filter(k::created_on.lt(Instant(before))),
            ))
            .await
            .map_err(query_error("idempotency_keys"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use diesel::pg::Pg;
    use diesel::query_builder::QueryFragment;
    use time::macros::datetime;

    use super::*;

    /// The claim runs before every POST: it must be prepared once per connection, not parsed
    /// on every request (see `transactions::tests`).
    #[test]
    fn the_claim_is_prepared_once() {
        let claim = diesel::insert_into(k::table)
            .values(NewIdempotencyRow {
                platform_id: "pfm_1",
                mode: "test",
                key: "k",
                fingerprint: &[0; 32],
                created_on: datetime!(2026-11-25 10:00 UTC),
            })
            .on_conflict_do_nothing();
        assert!(claim.is_safe_to_cache_prepared(&Pg).unwrap());
    }
}
