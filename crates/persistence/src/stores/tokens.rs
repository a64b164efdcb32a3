//! `TokenStore`, written once for both backends.

macro_rules! token_store {
    ($store:ident, $schema:ident) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::TokenStore for $store {
            async fn save(
                &self,
                token: &Token,
                reply: Option<KeyedResponse>,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::tokens as t;
                let mut conn = self.conn().await?;
                let insert = async |conn: &mut <Self as crate::stores::Backend>::Conn| {
                    diesel::insert_into(t::table)
                        .values((
                            t::id.eq(token.id.as_str()),
                            t::platform_id.eq(token.platform_id.as_str()),
                            t::mode.eq(token.mode.as_str()),
                            t::kind.eq(token.kind.as_str()),
                            t::bin.eq(&token.card.bin),
                            t::brand.eq(token.card.brand.as_str()),
                            t::last4.eq(&token.card.last4),
                            t::funding.eq(token.card.funding.as_str()),
                            t::key_id.eq(&token.sealed.key_id),
                            t::nonce.eq(&token.sealed.nonce),
                            t::ciphertext.eq(&token.sealed.ciphertext),
                            t::created_on.eq(token.created_on),
                            t::expires_on.eq(token.expires_on),
                            t::used_on.eq(token.used_on),
                        ))
                        .execute(conn)
                        .await
                        .map(drop)
                };
                with_reply!(
                    $schema,
                    conn,
                    token.platform_id,
                    token.mode,
                    reply,
                    insert(conn)
                )
                .map_err(query_error("tokens"))
            }

            async fn take(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &TokenId,
                now: OffsetDateTime,
            ) -> Result<Option<Token>, StoreError> {
                use crate::schema::$schema::tokens as t;
                let mut conn = self.conn().await?;
                let scoped = t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::id.eq(id.as_str()));
                // A single-use token is marked used by the statement that hands it out: of two
                // racing payments, one gets it. Its sealed card is erased in the same SQL
                // transaction, once read: the payment holds the only copy left.
                let single_use = conn
                    .transaction::<_, diesel::result::Error, _>(async |conn| {
                        let taken = diesel::update(
                            scoped
                                .filter(t::kind.eq(TokenKind::SingleUse.as_str()))
                                .filter(t::used_on.is_null())
                                .filter(t::expires_on.gt(now)),
                        )
                        .set(t::used_on.eq(Some(now)))
                        .get_result::<TokenRow>(conn)
                        .await
                        .optional()?;
                        if taken.is_some() {
                            diesel::update(t::table.filter(t::id.eq(id.as_str())))
                                .set((
                                    t::nonce.eq(Vec::<u8>::new()),
                                    t::ciphertext.eq(Vec::<u8>::new()),
                                ))
                                .execute(conn)
                                .await?;
                        }
                        Ok(taken)
                    })
                    .await
                    .map_err(query_error("tokens"))?;
                let row = match single_use {
                    Some(row) => Some(row),
                    None => scoped
                        .filter(t::kind.eq(TokenKind::Vault.as_str()))
                        .first::<TokenRow>(&mut conn)
                        .await
                        .optional()
                        .map_err(query_error("tokens"))?,
                };
                row.map(Token::try_from).transpose()
            }

            async fn find(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &TokenId,
            ) -> Result<Option<Token>, StoreError> {
                use crate::schema::$schema::tokens as t;
                let mut conn = self.conn().await?;
                t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::id.eq(id.as_str()))
                    .first::<TokenRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("tokens"))?
                    .map(Token::try_from)
                    .transpose()
            }

            async fn erase_expired(&self, now: OffsetDateTime) -> Result<usize, StoreError> {
                use crate::schema::$schema::tokens as t;
                let mut conn = self.conn().await?;
                diesel::update(
                    t::table
                        .filter(t::kind.eq(TokenKind::SingleUse.as_str()))
                        .filter(t::expires_on.le(now))
                        .filter(t::ciphertext.ne(Vec::<u8>::new())),
                )
                .set((
                    t::nonce.eq(Vec::<u8>::new()),
                    t::ciphertext.eq(Vec::<u8>::new()),
                ))
                .execute(&mut conn)
                .await
                .map_err(query_error("tokens"))
            }
        }
    };
}
