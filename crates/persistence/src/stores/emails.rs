//! `EmailOutbox`: the emails waiting for the SMTP worker, claimed under a lease.

use diesel::prelude::*;
use holdfast_domain::ports::{EmailOutbox, OutgoingEmail, QueuedEmail, StoreError};
use time::OffsetDateTime;

use super::{SqlStore, one_row};
use crate::conn::{Conn, Db, Lock};
use crate::email_bodies;
use crate::error::query_error;
use crate::schema::emails as m;
use crate::timestamp::Instant;

type EmailRow = (String, String, String, String, i32);

#[derive(Debug, Insertable)]
#[diesel(table_name = m)]
struct NewEmailRow<'a> {
    id: &'a str,
    recipient: &'a str,
    subject: &'a str,
    body: &'a str,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    due_on: OffsetDateTime,
}

/// Queues `email` as `id`, due at once, in the caller's transaction.
pub(crate) async fn queue_email(
    conn: &mut Conn,
    id: &str,
    email: &OutgoingEmail,
    at: OffsetDateTime,
) -> QueryResult<()> {
    let body = conn.email_body_at_rest(id, &email.body);
    conn.execute(diesel::insert_into(m::table).values(NewEmailRow {
        id,
        recipient: &email.to,
        subject: &email.subject,
        body: &body,
        created_on: at,
        due_on: at,
    }))
    .await
    .map(drop)
}

/// Leases up to `limit` due emails and reads them.
async fn lease(
    conn: &mut Conn,
    now: OffsetDateTime,
    lease_until: OffsetDateTime,
    limit: u32,
) -> QueryResult<Vec<EmailRow>> {
    conn.lock(Lock::QueueWrite).await?;
    let due = m::table
        .select(m::id)
        .filter(m::sent_on.is_null())
        .filter(m::failed_on.is_null())
        .filter(m::due_on.le(Instant(now)))
        .filter(m::lease_until.is_null().or(m::lease_until.le(Instant(now))))
        .order(m::due_on.asc())
        .limit(i64::from(limit));
    let ids: Vec<String> = match conn.db {
        // Workers skip each other's rows instead of waiting on them.
        Db::Pg(ref mut pg) => {
            diesel_async::RunQueryDsl::load(due.for_update().skip_locked(), &mut **pg).await?
        }
        // The single writer serialises claims: the lock above already holds it.
        Db::Sqlite(_) => conn.load(due).await?,
    };
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    conn.execute(
        diesel::update(m::table.filter(m::id.eq_any(&ids)))
            .set(m::lease_until.eq(Some(lease_until))),
    )
    .await?;
    conn.load(m::table.filter(m::id.eq_any(&ids)).select((
        m::id,
        m::recipient,
        m::subject,
        m::body,
        m::attempts,
    )))
    .await
}

/// How an attempt at an email ended: sent, to retry, or failed for good (the columns that are
/// `Some` are written).
#[derive(Debug, Default, AsChangeset)]
#[diesel(table_name = m)]
struct AttemptEnd {
    /// Emptied once the email has gone or never will: a body can carry a one-time link, a
    /// credential the outbox has no reason to keep.
    body: Option<&'static str>,
    sent_on: Option<Instant>,
    failed_on: Option<Instant>,
    due_on: Option<Instant>,
    last_error: Option<String>,
}

impl SqlStore {
    /// Ends the attempt at email `id` as `end` says: its lease ends and the attempt is counted.
    async fn end_attempt(&self, id: &str, end: AttemptEnd) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        #[expect(
            clippy::arithmetic_side_effects,
            reason = "SQL arithmetic, done by the database in its own types, not by Rust"
        )]
        conn.execute(diesel::update(m::table.filter(m::id.eq(id))).set((
            end,
            m::lease_until.eq(None::<OffsetDateTime>),
            m::attempts.eq(m::attempts + 1),
        )))
        .await
        .and_then(one_row)
        .map_err(query_error("emails"))
    }
}

#[async_trait::async_trait]
impl EmailOutbox for SqlStore {
    async fn claim_emails(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<QueuedEmail>, StoreError> {
        let mut conn = self.conn().await?;
        let rows = conn
            .transaction(async |conn| lease(conn, now, lease_until, limit).await)
            .await
            .map_err(query_error("emails"))?;
        let mut queued = Vec::with_capacity(rows.len());
        let mut unopenable = Vec::new();
        for (id, to, subject, stored, attempts) in rows {
            match email_bodies::open(conn.email_sealer(), &id, stored) {
                Ok(body) => queued.push(QueuedEmail {
                    id,
                    email: OutgoingEmail { to, subject, body },
                    attempts: u32::try_from(attempts).unwrap_or(0),
                }),
                Err(why) => unopenable.push((id, why)),
            }
        }
        drop(conn);
        // Never sent as ciphertext, never retried in vain: a failure, with its reason.
        for (id, why) in unopenable {
            tracing::error!(email = %id, error = %why, "an email cannot be sent");
            self.email_failed(&id, &why.to_string(), now).await?;
        }
        Ok(queued)
    }

    async fn email_sent(&self, id: &str, at: OffsetDateTime) -> Result<(), StoreError> {
        self.end_attempt(
            id,
            AttemptEnd {
                sent_on: Some(Instant(at)),
                body: Some(""),
                ..AttemptEnd::default()
            },
        )
        .await
    }

    async fn email_retry(
        &self,
        id: &str,
        error: &str,
        next_try: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.end_attempt(
            id,
            AttemptEnd {
                due_on: Some(Instant(next_try)),
                last_error: Some(error.to_owned()),
                ..AttemptEnd::default()
            },
        )
        .await
    }

    async fn email_failed(
        &self,
        id: &str,
        error: &str,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        self.end_attempt(
            id,
            AttemptEnd {
                failed_on: Some(Instant(at)),
                last_error: Some(error.to_owned()),
                body: Some(""),
                ..AttemptEnd::default()
            },
        )
        .await
    }
}
