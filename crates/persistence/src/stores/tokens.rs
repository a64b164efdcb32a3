//! `TokenStore`.

use diesel::dsl::Eq;
use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::TokenId;
use holdfast_domain::payment::token::{Token, TokenKind};
use holdfast_domain::payment::wallet::WalletKind;
use holdfast_domain::ports::{StoreError, TokenStore};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::with_reply;
use crate::error::query_error;
use crate::query::scoped;
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
        now: OffsetDateTime,
    ) -> Result<Option<Token>, StoreError> {
        let this = scoped(t::table, scope).filter(t::id.eq(id.as_str()));
        let mut conn = self.conn().await?;
        // A single-use token is marked used by the statement that hands it out: of two racing
        // payments, one gets it. Its sealed card is erased in the same SQL transaction, once
        // read: the payment holds the only copy left.
        let single_use = conn
            .transaction(async |conn| {
                let taken: Option<TokenRow> = conn
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
                if taken.is_some() {
                    conn.execute(diesel::update(this).set(erased())).await?;
                }
                diesel::QueryResult::Ok(taken)
            })
            .await
            .map_err(query_error("tokens"))?;
        let row = match single_use {
            Some(row) => Some(row),
            None => conn
                .first::<TokenRow, _>(this.filter(t::kind.eq(TokenKind::Vault.as_str())))
                .await
                .optional()
                .map_err(query_error("tokens"))?,
        };
        row.map(Token::try_from).transpose()
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
