//! `WebhookStore`, written once for both backends.

macro_rules! webhook_store {
    ($store:ident, $schema:ident) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::WebhookStore for $store {
            async fn insert_webhook(
                &self,
                s: &Subscription,
                max: u32,
                reply: Option<KeyedResponse>,
            ) -> Result<bool, StoreError> {
                use crate::schema::$schema::webhooks as w;
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    // The lock is its own statement: under READ COMMITTED a count in the same
                    // statement would still let two concurrent creates both see room for one.
                    diesel::sql_query(<Self as crate::stores::Backend>::WEBHOOK_CREATE_LOCK)
                        .execute(conn)
                        .await?;
                    let have: i64 = w::table
                        .filter(w::platform_id.eq(s.platform_id.as_str()))
                        .filter(w::mode.eq(s.mode.as_str()))
                        .count()
                        .get_result(conn)
                        .await?;
                    if have >= i64::from(max) {
                        return Ok(false);
                    }
                    diesel::insert_into(w::table)
                        .values((
                            (
                                w::id.eq(s.id.as_str()),
                                w::platform_id.eq(s.platform_id.as_str()),
                                w::mode.eq(s.mode.as_str()),
                                w::endpoint_url.eq(s.endpoint_url.as_str()),
                                w::events.eq(encode_events(&s.events)),
                                w::description.eq(s.description.as_ref().map(|d| d.as_str())),
                                w::header_name.eq(s.custom_header.as_ref().map(|h| h.name())),
                            ),
                            (
                                w::header_value.eq(s.custom_header.as_ref().map(|h| h.value())),
                                w::active.eq(s.active),
                                w::secret.eq(&s.secret),
                                w::creator_id.eq(s.creator.as_str()),
                                w::consecutive_failures
                                    .eq(i32::try_from(s.consecutive_failures).unwrap_or(i32::MAX)),
                                w::created_on.eq(s.created_on),
                                w::updated_on.eq(s.updated_on),
                                w::previous_secret
                                    .eq(s.previous_secret.as_ref().map(|p| p.secret.as_str())),
                                w::previous_secret_until
                                    .eq(s.previous_secret.as_ref().map(|p| p.until)),
                            ),
                        ))
                        .execute(conn)
                        .await?;
                    write_reply!($schema, conn, s.platform_id, s.mode, reply.as_ref()).await?;
                    Ok(true)
                })
                .await
                .map_err(query_error("webhooks"))
            }

            async fn rotate_secret(
                &self,
                rotated: &Subscription,
                expected: &str,
                reply: Option<KeyedResponse>,
            ) -> Result<bool, StoreError> {
                use crate::schema::$schema::webhooks as w;
                let previous = rotated.previous_secret.as_ref();
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    let this = w::table
                        .filter(w::platform_id.eq(rotated.platform_id.as_str()))
                        .filter(w::mode.eq(rotated.mode.as_str()))
                        .filter(w::id.eq(rotated.id.as_str()));
                    let n = diesel::update(this.filter(w::secret.eq(expected)))
                        .set((
                            w::secret.eq(&rotated.secret),
                            w::previous_secret.eq(previous.map(|p| p.secret.as_str())),
                            w::previous_secret_until.eq(previous.map(|p| p.until)),
                            w::updated_on.eq(rotated.updated_on),
                        ))
                        .execute(conn)
                        .await?;
                    if n == 0 {
                        let exists: i64 = this.count().get_result(conn).await?;
                        return if exists == 0 {
                            Err(diesel::result::Error::NotFound)
                        } else {
                            Ok(false)
                        };
                    }
                    write_reply!(
                        $schema,
                        conn,
                        rotated.platform_id,
                        rotated.mode,
                        reply.as_ref()
                    )
                    .await?;
                    Ok(true)
                })
                .await
                .map_err(query_error("webhooks"))
            }

            async fn get_webhook(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &WebhookId,
            ) -> Result<Option<Subscription>, StoreError> {
                use crate::schema::$schema::webhooks as w;
                let mut conn = self.conn().await?;
                w::table
                    .filter(w::platform_id.eq(platform.as_str()))
                    .filter(w::mode.eq(mode.as_str()))
                    .filter(w::id.eq(id.as_str()))
                    .first::<WebhookRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("webhooks"))?
                    .map(Subscription::try_from)
                    .transpose()
            }

            async fn list_webhooks(
                &self,
                platform: &PlatformId,
                mode: Mode,
                page: &PageRequest,
            ) -> Result<Page<Subscription>, StoreError> {
                use crate::schema::$schema::webhooks as w;
                let mut conn = self.conn().await?;
                let query = newest_first!(
                    w::table
                        .filter(w::platform_id.eq(platform.as_str()))
                        .filter(w::mode.eq(mode.as_str())),
                    w::id,
                    page
                );
                let rows = query
                    .load::<WebhookRow>(&mut conn)
                    .await
                    .map_err(query_error("webhooks"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
            }

            async fn replace_webhook(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &WebhookId,
                r: &Replacement,
                at: OffsetDateTime,
            ) -> Result<Subscription, StoreError> {
                use crate::schema::$schema::webhooks as w;
                let mut conn = self.conn().await?;
                diesel::update(
                    w::table
                        .filter(w::platform_id.eq(platform.as_str()))
                        .filter(w::mode.eq(mode.as_str()))
                        .filter(w::id.eq(id.as_str())),
                )
                .set((
                    w::endpoint_url.eq(r.endpoint_url.as_str()),
                    w::events.eq(encode_events(&r.events)),
                    w::description.eq(r.description.as_ref().map(|d| d.as_str())),
                    w::header_name.eq(r.custom_header.as_ref().map(|h| h.name())),
                    w::header_value.eq(r.custom_header.as_ref().map(|h| h.value())),
                    r.active.map(|a| w::active.eq(a)),
                    w::updated_on.eq(at),
                ))
                .get_result::<WebhookRow>(&mut conn)
                .await
                .map_err(query_error("webhooks"))
                .and_then(Subscription::try_from)
            }

            async fn delete_webhook(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &WebhookId,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::{notifications as n, webhooks as w};
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    // The history goes with it (spec 3.2), in the caller's scope only; a
                    // subscription of another platform or mode is not found and nothing is
                    // deleted (the transaction rolls back).
                    diesel::delete(
                        n::table
                            .filter(n::webhook_id.eq(id.as_str()))
                            .filter(n::platform_id.eq(platform.as_str()))
                            .filter(n::mode.eq(mode.as_str())),
                    )
                    .execute(conn)
                    .await?;
                    let n = diesel::delete(
                        w::table
                            .filter(w::platform_id.eq(platform.as_str()))
                            .filter(w::mode.eq(mode.as_str()))
                            .filter(w::id.eq(id.as_str())),
                    )
                    .execute(conn)
                    .await?;
                    if n == 0 {
                        return Err(diesel::result::Error::NotFound);
                    }
                    Ok(())
                })
                .await
                .map_err(query_error("webhooks"))
            }

            async fn toggle_webhook(
                &self,
                platform: &PlatformId,
                id: &WebhookId,
                active: bool,
                at: OffsetDateTime,
            ) -> Result<Subscription, StoreError> {
                use crate::schema::$schema::webhooks as w;
                let mut conn = self.conn().await?;
                diesel::update(
                    w::table
                        .filter(w::platform_id.eq(platform.as_str()))
                        .filter(w::id.eq(id.as_str())),
                )
                // Spec 3.2: setting a subscription active in the dashboard resets its counter;
                // setting it inactive leaves the counter as it is.
                .set((
                    w::active.eq(active),
                    active.then_some(w::consecutive_failures.eq(0)),
                    w::updated_on.eq(at),
                ))
                .get_result::<WebhookRow>(&mut conn)
                .await
                .map_err(query_error("webhooks"))
                .and_then(Subscription::try_from)
            }

            async fn list_deliveries(
                &self,
                platform: &PlatformId,
                mode: Option<Mode>,
                webhook: &WebhookId,
                page: &PageRequest,
            ) -> Result<Page<Delivery>, StoreError> {
                use crate::schema::$schema::{notifications as n, webhooks as w};
                let mut conn = self.conn().await?;
                let mut exists = w::table
                    .filter(w::platform_id.eq(platform.as_str()))
                    .filter(w::id.eq(webhook.as_str()))
                    .select(w::id)
                    .into_boxed();
                if let Some(mode) = mode {
                    exists = exists.filter(w::mode.eq(mode.as_str()));
                }
                exists
                    .first::<String>(&mut conn)
                    .await
                    .map_err(query_error("webhooks"))?;
                let query = newest_first!(
                    n::table.filter(n::webhook_id.eq(webhook.as_str())),
                    n::id,
                    page
                );
                let rows = query
                    .load::<NotificationRow>(&mut conn)
                    .await
                    .map_err(query_error("notifications"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
            }
        }
    };
}
