//! `MerchantStore`, written once for both backends.

/// A `merchant.*` event of `merchant`'s platform and mode.
pub(crate) fn merchant_event(
    id: &holdfast_domain::ids::EventId,
    merchant: &holdfast_domain::merchant::Merchant,
    data: holdfast_domain::ports::EventData,
    at: time::OffsetDateTime,
) -> holdfast_domain::ports::Event {
    holdfast_domain::ports::Event {
        id: id.clone(),
        platform_id: merchant.platform_id.clone(),
        mode: merchant.mode,
        data,
        created_on: at,
    }
}

macro_rules! merchant_store {
    ($store:ident, $schema:ident) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::MerchantStore for $store {
            async fn insert_merchant_with_event(
                &self,
                m: &Merchant,
                event: &EventId,
                reply: Option<KeyedResponse>,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::merchants as t;
                let event = merchant_event(
                    event,
                    m,
                    EventData::MerchantCreated(Box::new(m.clone())),
                    m.created_on,
                );
                let data = serde_json::to_string(&event.data).map_err(unexpected)?;
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    diesel::insert_into(t::table)
                        .values((
                            t::id.eq(m.id.as_str()),
                            t::platform_id.eq(m.platform_id.as_str()),
                            t::mode.eq(m.mode.as_str()),
                            t::name.eq(m.details.name.as_str()),
                            t::currency.eq(m.details.currency.as_str()),
                            t::email.eq(m.details.email.as_ref().map(Email::as_str)),
                            t::created_on.eq(m.created_on),
                            t::updated_on.eq(m.updated_on),
                            t::plan_id.eq(m.plan_id.as_ref().map(PlanId::as_str)),
                        ))
                        .execute(conn)
                        .await?;
                    write_event!($schema, conn, &event, &data)?;
                    write_reply!($schema, conn, m.platform_id, m.mode, reply.as_ref()).await
                })
                .await
                .map_err(query_error("merchants"))
            }

            async fn get_merchant(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &MerchantId,
            ) -> Result<Option<Merchant>, StoreError> {
                use crate::schema::$schema::merchants as t;
                let mut conn = self.conn().await?;
                t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::id.eq(id.as_str()))
                    .filter(t::deleted_on.is_null())
                    .first::<MerchantRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("merchants"))?
                    .map(Merchant::try_from)
                    .transpose()
            }

            async fn list_merchants(
                &self,
                platform: &PlatformId,
                mode: Mode,
                page: &PageRequest,
            ) -> Result<Page<Merchant>, StoreError> {
                use crate::schema::$schema::merchants as t;
                let mut conn = self.conn().await?;
                let query = newest_first!(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str()))
                        .filter(t::deleted_on.is_null()),
                    t::id,
                    page
                );
                let rows = query
                    .load::<MerchantRow>(&mut conn)
                    .await
                    .map_err(query_error("merchants"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
            }

            async fn update_merchant_with_event(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &MerchantId,
                patch: &MerchantPatch,
                at: OffsetDateTime,
                event: &EventId,
            ) -> Result<Merchant, StoreError> {
                use crate::schema::$schema::merchants as t;
                let mut conn = self.conn().await?;
                // Only the columns sent are written: a concurrent patch of other fields survives.
                let changes = (
                    patch.name.as_ref().map(|n| t::name.eq(n.as_str())),
                    patch.currency.as_ref().map(|c| t::currency.eq(c.as_str())),
                    patch
                        .email
                        .as_ref()
                        .map(|e| t::email.eq(e.as_ref().map(Email::as_str))),
                    patch
                        .plan_id
                        .as_ref()
                        .map(|p| t::plan_id.eq(p.as_ref().map(PlanId::as_str))),
                    t::updated_on.eq(at),
                );
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    let row = diesel::update(
                        t::table
                            .filter(t::platform_id.eq(platform.as_str()))
                            .filter(t::mode.eq(mode.as_str()))
                            .filter(t::id.eq(id.as_str()))
                            .filter(t::deleted_on.is_null()),
                    )
                    .set(changes)
                    .get_result::<MerchantRow>(conn)
                    .await?;
                    let corrupt = |e: StoreError| {
                        diesel::result::Error::DeserializationError(e.to_string().into())
                    };
                    let merchant = Merchant::try_from(row).map_err(corrupt)?;
                    let event = merchant_event(
                        event,
                        &merchant,
                        EventData::MerchantUpdated(Box::new(merchant.clone())),
                        at,
                    );
                    let data = serde_json::to_string(&event.data)
                        .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
                    write_event!($schema, conn, &event, &data)?;
                    Ok(merchant)
                })
                .await
                .map_err(query_error("merchants"))
            }

            async fn delete_merchant_with_event(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &MerchantId,
                at: OffsetDateTime,
                event: &EventId,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::merchants as t;
                let event = Event {
                    id: event.clone(),
                    platform_id: platform.clone(),
                    mode,
                    data: EventData::MerchantDeleted(Deleted {
                        id: id.to_string(),
                        deleted: true,
                    }),
                    created_on: at,
                };
                let data = serde_json::to_string(&event.data).map_err(unexpected)?;
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    let n = diesel::update(
                        t::table
                            .filter(t::platform_id.eq(platform.as_str()))
                            .filter(t::mode.eq(mode.as_str()))
                            .filter(t::id.eq(id.as_str()))
                            .filter(t::deleted_on.is_null()),
                    )
                    .set(t::deleted_on.eq(Some(at)))
                    .execute(conn)
                    .await?;
                    if n == 0 {
                        // Nothing deleted, nothing to report.
                        return Ok(0);
                    }
                    write_event!($schema, conn, &event, &data)?;
                    Ok(n)
                })
                .await
                .map_err(query_error("merchants"))
                .and_then(expect_one_row)
            }
        }
    };
}
