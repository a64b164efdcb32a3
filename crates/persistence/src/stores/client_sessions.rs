//! `ClientSessionStore`.

use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{ClientSessionId, TxnId};
use holdfast_domain::payment::client_session::{ClientSession, SessionStatus};
use holdfast_domain::ports::{ClientSessionStore, StoreError};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::with_reply;
use crate::client_session_rows::{ClientSessionRow, NewClientSessionRow};
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

    async fn close(
        &self,
        scope: &Scope,
        id: &ClientSessionId,
        to: SessionStatus,
        transaction: Option<TxnId>,
        now: OffsetDateTime,
    ) -> Result<Option<ClientSession>, StoreError> {
        let mut conn = self.conn().await?;
        // One statement decides: of two racing closes (two payments, a payment and a cancel),
        // only the first finds the session open.
        conn.get_result::<ClientSessionRow, _>(
            diesel::update(
                scoped(cs::table, scope)
                    .filter(cs::id.eq(id.as_str()))
                    .filter(cs::status.eq(SessionStatus::Open.as_str()))
                    .filter(cs::expires_on.gt(Instant(now))),
            )
            .set((
                cs::status.eq(to.as_str()),
                cs::transaction_id.eq(transaction.as_ref().map(TxnId::as_str)),
                cs::closed_on.eq(Some(now)),
            )),
        )
        .await
        .optional()
        .map_err(query_error("client_sessions"))?
        .map(ClientSession::try_from)
        .transpose()
    }
}
