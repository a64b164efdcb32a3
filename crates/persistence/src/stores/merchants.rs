//! `MerchantStore`, written once for both backends.

macro_rules! merchant_store {
    ($store:ident, $schema:ident) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::MerchantStore for $store {
            async fn insert_merchant(&self, m: &Merchant) -> Result<(), StoreError> {
                use crate::schema::$schema::merchants as t;
                let mut conn = self.conn().await?;
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
                    .execute(&mut conn)
                    .await
                    .map(drop)
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
                let mut query = t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::deleted_on.is_null())
                    .order(t::id.desc())
                    .limit(page.fetch_count())
                    .into_boxed();
                if let Some(cursor) = &page.starting_after {
                    query = query.filter(t::id.lt(cursor.as_str()));
                }
                let rows = query
                    .load::<MerchantRow>(&mut conn)
                    .await
                    .map_err(query_error("merchants"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
            }

            async fn update_merchant(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &MerchantId,
                patch: &MerchantPatch,
                at: OffsetDateTime,
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
                diesel::update(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str()))
                        .filter(t::id.eq(id.as_str()))
                        .filter(t::deleted_on.is_null()),
                )
                .set(changes)
                .get_result::<MerchantRow>(&mut conn)
                .await
                .optional()
                .map_err(query_error("merchants"))?
                .map(Merchant::try_from)
                .transpose()?
                .ok_or(StoreError::NotFound)
            }

            async fn delete_merchant(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &MerchantId,
                at: OffsetDateTime,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::merchants as t;
                let mut conn = self.conn().await?;
                let n = diesel::update(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str()))
                        .filter(t::id.eq(id.as_str()))
                        .filter(t::deleted_on.is_null()),
                )
                .set(t::deleted_on.eq(Some(at)))
                .execute(&mut conn)
                .await
                .map_err(query_error("merchants"))?;
                expect_one_row(n)
            }
        }
    };
}
