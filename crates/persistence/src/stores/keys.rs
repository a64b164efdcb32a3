//! `KeyStore`, written once for both backends.

/// The key `$id` of platform `$platform`: every key query but the hash lookup goes through it.
macro_rules! platform_key {
    ($k:ident, $platform:expr, $id:expr) => {
        $k::table
            .filter($k::platform_id.eq($platform.as_str()))
            .filter($k::id.eq($id.as_str()))
    };
}

macro_rules! key_store {
    ($store:ident, $schema:ident) => {
        impl $store {
            async fn insert_key_on(
                conn: &mut <Self as crate::stores::Backend>::Conn,
                key: &ApiKey,
            ) -> diesel::QueryResult<()> {
                use crate::schema::$schema::api_keys as k;
                diesel::insert_into(k::table)
                    .values((
                        k::id.eq(key.id.as_str()),
                        k::platform_id.eq(key.platform_id.as_str()),
                        k::name.eq(key.name.as_str()),
                        k::key_type.eq(key.key_type.as_str()),
                        k::mode.eq(key.mode.as_str()),
                        k::value_hash.eq(key.hash.as_bytes().as_slice()),
                        k::last4.eq(&key.last4),
                        k::active.eq(key.is_active()),
                        k::created_by.eq(key.created_by.as_str()),
                        k::created_on.eq(key.created_on),
                        k::last_used_on.eq(key.last_used_on),
                    ))
                    .execute(conn)
                    .await
                    .map(drop)
            }
        }

        #[async_trait::async_trait]
        impl holdfast_domain::ports::KeyStore for $store {
            async fn insert_key(&self, key: &ApiKey) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                Self::insert_key_on(&mut conn, key)
                    .await
                    .map_err(query_error("api_keys.value_hash"))
            }

            async fn find_key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                k::table
                    .filter(k::value_hash.eq(hash.as_bytes().as_slice()))
                    .first::<KeyRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("api_keys"))?
                    .map(ApiKey::try_from)
                    .transpose()
            }

            async fn get_key(
                &self,
                platform: &PlatformId,
                id: &KeyId,
            ) -> Result<Option<ApiKey>, StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                platform_key!(k, platform, id)
                    .first::<KeyRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("api_keys"))?
                    .map(ApiKey::try_from)
                    .transpose()
            }

            async fn list_keys(&self, platform: &PlatformId) -> Result<Vec<ApiKey>, StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                let rows = k::table
                    .filter(k::platform_id.eq(platform.as_str()))
                    .order(k::id.asc())
                    .load::<KeyRow>(&mut conn)
                    .await
                    .map_err(query_error("api_keys"))?;
                convert_all(rows)
            }

            async fn rename_key(
                &self,
                platform: &PlatformId,
                id: &KeyId,
                name: &KeyName,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                let n = diesel::update(platform_key!(k, platform, id))
                    .set(k::name.eq(name.as_str()))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("api_keys"))?;
                expect_one_row(n)
            }

            async fn set_key_status(
                &self,
                platform: &PlatformId,
                id: &KeyId,
                status: KeyStatus,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                let n = diesel::update(platform_key!(k, platform, id))
                    .set(k::active.eq(status == KeyStatus::Active))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("api_keys"))?;
                expect_one_row(n)
            }

            async fn delete_key(
                &self,
                platform: &PlatformId,
                id: &KeyId,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                let n = diesel::delete(platform_key!(k, platform, id))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("api_keys"))?;
                expect_one_row(n)
            }

            async fn touch_key(
                &self,
                platform: &PlatformId,
                id: &KeyId,
                at: OffsetDateTime,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::api_keys as k;
                let mut conn = self.conn().await?;
                diesel::update(platform_key!(k, platform, id))
                    .set(k::last_used_on.eq(Some(at)))
                    .execute(&mut conn)
                    .await
                    .map(drop)
                    .map_err(query_error("api_keys"))
            }
        }
    };
}
