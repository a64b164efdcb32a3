//! `ClientSessionStore`.

use diesel::QueryResult;
use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{ClientSessionId, TxnId};
use holdfast_domain::payment::client_session::{ClientSession, SessionStatus};
use holdfast_domain::payment::token::{HeldSession, SessionClose};
use holdfast_domain::ports::{ClientSessionStore, StoreError};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::with_reply;
use crate::client_session_rows::{ClientSessionRow, NewClientSessionRow};
use crate::conn::Conn;
use crate::error::query_error;
use crate::query::scoped;
use crate::schema::client_sessions as cs;
use crate::timestamp::Instant;

#[async_trait::async_trait]
impl ClientSessionStore for SqlStore {
    async fn save(
        &self,
        session: &ClientSession,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        with_reply(
            &mut conn,
            &session.platform_id,
            session.mode,
            reply.as_ref(),
            async |conn| {
                conn.execute(
                    diesel::insert_into(cs::table).values(NewClientSessionRow::from(session)),
                )
                .await
                .map(drop)
            },
        )
        .await
        .map_err(query_error("client_sessions"))
    }

    async fn find(
        &self,
        scope: &Scope,
        id: &ClientSessionId,
    ) -> Result<Option<ClientSession>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<ClientSessionRow, _>(scoped(cs::table, scope).filter(cs::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("client_sessions"))?
            .map(ClientSession::try_from)
            .transpose()
    }

    async fn cancel(
        &self,
        scope: &Scope,
        id: &ClientSessionId,
        now: OffsetDateTime,
    ) -> Result<Option<ClientSession>, StoreError> {
        let mut conn = self.conn().await?;
        // One statement decides: of a cancel racing a payment's take, only the first finds the
        // session open and free.
        conn.get_result::<ClientSessionRow, _>(
            diesel::update(
                scoped(cs::table, scope)
                    .filter(cs::id.eq(id.as_str()))
                    .filter(free_at(now)),
            )
            .set((
                cs::status.eq(SessionStatus::Canceled.as_str()),
                cs::closed_on.eq(Some(now)),
            )),
        )
        .await
        .optional()
        .map_err(query_error("client_sessions"))?
        .map(ClientSession::try_from)
        .transpose()
    }

    async fn release(&self, scope: &Scope, held: &HeldSession) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::update(held_by(scope, held)).set(cs::held_until.eq(None::<Instant>)))
            .await
            .map(drop)
            .map_err(query_error("client_sessions"))
    }
}

/// Completes session `close.held.id` of `scope` with `transaction`, the approved payment whose
/// hold `close.held` is, ending the hold; `false` when the session is not open or the hold is
/// no longer this payment's (it lapsed and another payment holds it). No expiry test: the
/// session was open when the payment took its token and held it.
pub(crate) async fn complete_held(
    conn: &mut Conn,
    scope: &Scope,
    close: &SessionClose,
    transaction: &TxnId,
) -> QueryResult<bool> {
    let completed = conn
        .execute(
            diesel::update(
                held_by(scope, &close.held).filter(cs::status.eq(SessionStatus::Open.as_str())),
            )
            .set((
                cs::status.eq(SessionStatus::Completed.as_str()),
                cs::transaction_id.eq(Some(transaction.as_str())),
                cs::closed_on.eq(Some(Instant(close.on))),
                cs::held_until.eq(None::<Instant>),
            )),
        )
        .await?;
    Ok(completed == 1)
}

/// Session `held.id` of `scope` while `held` is its hold.
fn held_by<'a>(scope: &'a Scope, held: &'a HeldSession) -> HeldBy<'a> {
    scoped(cs::table, scope)
        .filter(cs::id.eq(held.id.as_str()))
        .filter(cs::held_until.eq(Instant(held.until)))
}

/// The rows `held_by` selects.
type HeldBy<'a> = diesel::dsl::Filter<
    diesel::dsl::Filter<
        diesel::dsl::Filter<cs::table, crate::query::ScopeFilter<'a, cs::table>>,
        diesel::dsl::Eq<cs::id, &'a str>,
    >,
    diesel::dsl::Eq<cs::held_until, Instant>,
>;

/// The filter `free_at` builds.
type Free = diesel::dsl::And<
    diesel::dsl::And<
        diesel::dsl::Eq<cs::status, &'static str>,
        diesel::dsl::Gt<cs::expires_on, Instant>,
    >,
    diesel::dsl::Or<
        diesel::dsl::IsNull<cs::held_until>,
        diesel::dsl::LtEq<cs::held_until, Instant>,
    >,
>;

/// A session a payment or a cancel may take at `now`: open, unexpired, held by no payment.
pub(crate) fn free_at(now: OffsetDateTime) -> Free {
    cs::status
        .eq(SessionStatus::Open.as_str())
        .and(cs::expires_on.gt(Instant(now)))
        .and(cs::held_until.is_null().or(cs::held_until.le(Instant(now))))
}
