//! `IdempotencyStore`, written once for both backends, and `write_reply!`, which stores a
//! request's answer inside the SQL transaction of the change it reports.

/// Stores a request's idempotent `reply` (`Option<&KeyedResponse>`) inside the caller's open
/// transaction (`$conn`), so the answer and the change it reports commit together or not at
/// all; evaluates to `QueryResult<()>`.
macro_rules! write_reply {
    ($schema:ident, $conn:expr, $platform:expr, $mode:expr, $reply:expr) => {
        async {
            use crate::schema::$schema::idempotency_keys as k;
            let Some(reply) = $reply else {
                return Ok(());
            };
            let reply: &KeyedResponse = reply;
            diesel::update(
                k::table
                    .filter(k::platform_id.eq($platform.as_str()))
                    .filter(k::mode.eq($mode.as_str()))
                    .filter(k::key.eq(reply.key.as_str())),
            )
            .set((
                k::status.eq(Some(i32::from(reply.response.status))),
                k::body.eq(Some(&reply.response.body)),
            ))
            .execute($conn)
            .await
            .map(drop)
        }
    };
}

/// Runs `$write` (an expression using `$conn`, a `&mut` connection) and, when the request has a
/// `$reply`, stores it in the same SQL transaction. Without one, `$write` runs alone: a single
/// statement needs no BEGIN and COMMIT. `$conn` names the pooled connection; evaluates to
/// `QueryResult<()>`.
macro_rules! with_reply {
    ($schema:ident, $conn:ident, $platform:expr, $mode:expr, $reply:expr, $write:expr) => {
        match $reply {
            None => {
                let $conn = &mut *$conn;
                $write.await
            }
            Some(reply) => {
                $conn
                    .transaction::<_, diesel::result::Error, _>(async |$conn| {
                        $write.await?;
                        write_reply!($schema, $conn, $platform, $mode, Some(&reply)).await
                    })
                    .await
            }
        }
    };
}

macro_rules! idempotency_store {
    ($store:ident, $schema:ident) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::IdempotencyStore for $store {
            async fn begin(
                &self,
                platform: &PlatformId,
                mode: Mode,
                key: &IdempotencyKey,
                fingerprint: &[u8; 32],
                now: OffsetDateTime,
            ) -> Result<Begun, StoreError> {
                use crate::schema::$schema::idempotency_keys as t;
                let mut conn = self.conn().await?;
                let claim = async |conn: &mut <Self as crate::stores::Backend>::Conn| {
                    diesel::insert_into(t::table)
                        .values((
                            t::platform_id.eq(platform.as_str()),
                            t::mode.eq(mode.as_str()),
                            t::key.eq(key.as_str()),
                            t::fingerprint.eq(fingerprint.as_slice()),
                            t::created_on.eq(now),
                        ))
                        .on_conflict_do_nothing()
                        .execute(conn)
                        .await
                };
                // The unique key decides: of two concurrent first requests, one inserts. The
                // common case (a new key) is this one statement, outside any transaction.
                if claim(&mut conn)
                    .await
                    .map_err(query_error("idempotency_keys"))?
                    == 1
                {
                    return Ok(Begun::Started);
                }
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    if claim(conn).await? == 1 {
                        return Ok(Begun::Started);
                    }
                    let row = t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str()))
                        .filter(t::key.eq(key.as_str()));
                    let (stored_fp, created_on, status, body): (
                        Vec<u8>,
                        OffsetDateTime,
                        Option<i32>,
                        Option<String>,
                    ) = row
                        .select((t::fingerprint, t::created_on, t::status, t::body))
                        .first(conn)
                        .await?;
                    let record = KeyRecord {
                        fingerprint: stored_fp.try_into().unwrap_or([0; 32]),
                        created_on,
                        response: match (status, body) {
                            (Some(status), Some(body)) => Some(StoredResponse {
                                status: u16::try_from(status).unwrap_or(500),
                                body,
                            }),
                            _ => None,
                        },
                    };
                    match on_seen(&record, fingerprint, now) {
                        Seen::Restart => {
                            // Only the stale record this request saw is replaced; a newer one
                            // (another request restarting it first) wins.
                            diesel::delete(row.filter(t::created_on.eq(created_on)))
                                .execute(conn)
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
                platform: &PlatformId,
                mode: Mode,
                key: &IdempotencyKey,
                response: &StoredResponse,
            ) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                let reply = KeyedResponse {
                    key: key.clone(),
                    response: response.clone(),
                };
                write_reply!($schema, &mut conn, platform, mode, Some(&reply))
                    .await
                    .map_err(query_error("idempotency_keys"))
            }

            async fn release(
                &self,
                platform: &PlatformId,
                mode: Mode,
                key: &IdempotencyKey,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::idempotency_keys as t;
                let mut conn = self.conn().await?;
                diesel::delete(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str()))
                        .filter(t::key.eq(key.as_str()))
                        .filter(t::status.is_null()),
                )
                .execute(&mut conn)
                .await
                .map(drop)
                .map_err(query_error("idempotency_keys"))
            }

            async fn purge(&self, before: OffsetDateTime) -> Result<u64, StoreError> {
                use crate::schema::$schema::idempotency_keys as t;
                let mut conn = self.conn().await?;
                let n = diesel::delete(t::table.filter(t::created_on.lt(before)))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("idempotency_keys"))?;
                Ok(u64::try_from(n).unwrap_or(0))
            }
        }
    };
}
