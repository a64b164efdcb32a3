//! `KeyStore`.

use diesel::prelude::*;
use holdfast_domain::api_key::{ApiKey, KeyHash, KeyName, KeyStatus};
use holdfast_domain::ids::{KeyId, PlatformId};
use holdfast_domain::ports::{KeyStore, StoreError};
use time::OffsetDateTime;

use super::{SqlStore, one_row};
use crate::error::query_error;
use crate::rows::{KeyRow, NewKeyRow, convert_all};
use crate::schema::api_keys as k;

/// The key `id` of `platform`: every key query but the hash lookup goes through it.
#[diesel::dsl::auto_type(no_type_alias)]
fn platform_key<'a>(platform: &'a str, id: &'a str) -> _ {
    k::table
        .filter(k::platform_id.eq(platform))
        .filter(k::id.eq(id))
}

#[async_trait::async_trait]
impl KeyStore for SqlStore {
    async fn insert_key(&self, key: &ApiKey) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::insert_into(k::table).values(NewKeyRow::from(key)))
            .await
            .map(drop)
            .map_err(query_error("api_keys.value_hash"))
    }

    async fn find_key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<KeyRow, _>(k::table.filter(k::value_hash.eq(hash.as_bytes().as_slice())))
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
        let mut conn = self.conn().await?;
        conn.first::<KeyRow, _>(platform_key(platform.as_str(), id.as_str()))
            .await
            .optional()
            .map_err(query_error("api_keys"))?
            .map(ApiKey::try_from)
            .transpose()
    }

    async fn list_keys(&self, platform: &PlatformId) -> Result<Vec<ApiKey>, StoreError> {
        let mut conn = self.conn().await?;
        let rows = conn
            .load::<KeyRow, _>(
                k::table
                    .filter(k::platform_id.eq(platform.as_str()))
                    .order(k::id.asc()),
            )
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
        let mut conn = self.conn().await?;
        conn.execute(
            diesel::update(platform_key(platform.as_str(), id.as_str()))
                .set(k::name.eq(name.as_str())),
        )
        .await
        .and_then(one_row)
        .map_err(query_error("api_keys"))
    }

    async fn set_key_status(
        &self,
        platform: &PlatformId,
        id: &KeyId,
        status: KeyStatus,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(
            diesel::update(platform_key(platform.as_str(), id.as_str()))
                .set(k::active.eq(status == KeyStatus::Active)),
        )
        .await
        .and_then(one_row)
        .map_err(query_error("api_keys"))
    }

    async fn delete_key(&self, platform: &PlatformId, id: &KeyId) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::delete(platform_key(platform.as_str(), id.as_str())))
            .await
            .and_then(one_row)
            .map_err(query_error("api_keys"))
    }

    async fn touch_key(
        &self,
        platform: &PlatformId,
        id: &KeyId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(
            diesel::update(platform_key(platform.as_str(), id.as_str()))
                .set(k::last_used_on.eq(Some(at))),
        )
        .await
        .map(drop)
        .map_err(query_error("api_keys"))
    }
}
