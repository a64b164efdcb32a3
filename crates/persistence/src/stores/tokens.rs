//! `TokenStore`.

use diesel::dsl::Eq;
use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::ClientSessionId;
use holdfast_domain::ids::TokenId;
use holdfast_domain::payment::client_session::ClientSession;
use holdfast_domain::payment::token::{TakeTerms, Taken, Token, TokenKind};
use holdfast_domain::payment::wallet::WalletKind;
use holdfast_domain::ports::{StoreError, TokenStore};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::client_sessions::free_at;
use super::idempotency::with_reply;
use crate::client_session_rows::ClientSessionRow;
use crate::conn::Conn;
use crate::error::query_error;
use crate::query::scoped;
use crate::schema::client_sessions as cs;
use crate::schema::tokens as t;
use crate::schema::wallet_payments as wp;
use crate::timestamp::Instant;
use crate::token_rows::{NewTokenRow, TokenRow};

/// A sealed card, erased: what a token keeps once its card may no longer be used.
fn erased() -> (Eq<t::nonce, Vec<u8>>, Eq<t::ciphertext, Vec<u8>>) {
    (t::nonce.eq(Vec::new()), t::ciphertext.eq(Vec::new()))
}

#[async_trait::async_trait]
impl TokenStore for SqlStore {
    async fn save(&self, token: &Token, reply: Option<KeyedAnswer>) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        with_reply(
            &mut conn,
            &token.platform_id,
            token.mode,
            reply.as_ref(),
            async |conn| {
                conn.execute(diesel::insert_into(t::table).values(NewTokenRow::from(token)))
                    .await
                    .map(drop)
            },
        )
        .await
        .map_err(query_error("tokens"))
    }

    async fn take(
        &self,
        scope: &Scope,
        id: &TokenId,
        terms: &TakeTerms,
    ) -> Result<Taken, StoreError> {
        let mut conn = self.conn().await?;
        // One SQL transaction decides: the token's UPDATE, then its session's, each conditional,
        // so that of two payments racing for one token or for one session's tokens one wins;
        // every refusal rolls back whatever was marked.
        let outcome = conn
            .transaction(async |conn| take_in(conn, scope, id, terms).await)
            .await;
        match outcome {
            Ok(token) => Ok(Taken::Token(Box::new(token))),
            Err(Abort::Refused(refused)) => Ok(refused),
            Err(Abort::Store(e)) => Err(e),
        }
    }

    async fn find(&self, scope: &Scope, id: &TokenId) -> Result<Option<Token>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<TokenRow, _>(scoped(t::table, scope).filter(t::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("tokens"))?
            .map(Token::try_from)
            .transpose()
    }

    async fn delete(&self, scope: &Scope, id: &TokenId) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        let deleted = conn
            .execute(diesel::delete(
                scoped(t::table, scope).filter(t::id.eq(id.as_str())),
            ))
            .await
            .map_err(query_error("tokens"))?;
        super::one_row(deleted).map_err(query_error("tokens"))
    }

    async fn erase_expired(&self, now: OffsetDateTime) -> Result<usize, StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(
            diesel::update(
                t::table
                    .filter(t::kind.eq(TokenKind::SingleUse.as_str()))
                    .filter(t::expires_on.le(Instant(now)))
                    .filter(t::ciphertext.ne(Vec::<u8>::new())),
            )
            .set(erased()),
        )
        .await
        .map_err(query_error("tokens"))
    }

    async fn claim_wallet_payment(
        &self,
        wallet: WalletKind,
        message_id: &str,
        now: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        let inserted = conn
            .execute(
                diesel::insert_into(wp::table)
                    .values((
                        wp::wallet.eq(wallet.as_str()),
                        wp::message_id.eq(message_id),
                        wp::seen_on.eq(Instant(now)),
                    ))
                    .on_conflict_do_nothing(),
            )
            .await
            .map_err(query_error("wallet_payments"))?;
        Ok(inserted == 1)
    }
}

/// Why a take's SQL transaction was rolled back.
enum Abort {
    Refused(Taken),
    Store(StoreError),
}

impl From<diesel::result::Error> for Abort {
    fn from(e: diesel::result::Error) -> Self {
        Self::Store(query_error("tokens")(e))
    }
}

impl From<StoreError> for Abort {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

/// The body of `take`, inside its SQL transaction.
async fn take_in(
    conn: &mut Conn,
    scope: &Scope,
    id: &TokenId,
    terms: &TakeTerms,
) -> Result<Token, Abort> {
    let now = terms.now;
    let this = scoped(t::table, scope).filter(t::id.eq(id.as_str()));
    // A single-use token is marked used by the statement that reads it; the row it returns
    // still holds the sealed card, erased below once everything else holds.
    let single_use: Option<TokenRow> = conn
        .get_result(
            diesel::update(
                this.filter(t::kind.eq(TokenKind::SingleUse.as_str()))
                    .filter(t::used_on.is_null())
                    .filter(t::expires_on.gt(Instant(now))),
            )
            .set(t::used_on.eq(Some(now))),
        )
        .await
        .optional()?;
    let erase = single_use.is_some();
    let row = match single_use {
        Some(row) => row,
        None => conn
            .first::<TokenRow, _>(this.filter(t::kind.eq(TokenKind::Vault.as_str())))
            .await
            .optional()?
            .ok_or(Abort::Refused(Taken::Unusable))?,
    };
    let token = Token::try_from(row)?;
    let session = match &token.client_session_id {
        None => None,
        Some(session) => Some(hold(conn, scope, session, &token, terms).await?),
    };
    terms
        .admit(&token, session.as_ref())
        .map_err(|invalid| Abort::Refused(Taken::Refused(invalid)))?;
    if erase {
        conn.execute(diesel::update(this).set(erased())).await?;
    }
    Ok(token)
}

/// Holds the token's client session for the payment, if it is free; else says why not.
async fn hold(
    conn: &mut Conn,
    scope: &Scope,
    id: &ClientSessionId,
    token: &Token,
    terms: &TakeTerms,
) -> Result<ClientSession, Abort> {
    let this = scoped(cs::table, scope).filter(cs::id.eq(id.as_str()));
    let held: Option<ClientSessionRow> = conn
        .get_result(
            diesel::update(this.filter(free_at(terms.now)))
                .set(cs::held_until.eq(Some(Instant(terms.hold_until())))),
        )
        .await
        .optional()?;
    if let Some(row) = held {
        return Ok(ClientSession::try_from(row)?);
    }
    // Closed, expired or held: the domain's rules name the first two.
    let current = conn
        .first::<ClientSessionRow, _>(this)
        .await
        .optional()?
        .map(ClientSession::try_from)
        .transpose()?;
    Err(Abort::Refused(match terms.admit(token, current.as_ref()) {
        Err(invalid) => Taken::Refused(invalid),
        Ok(()) => Taken::SessionHeld,
    }))
}
