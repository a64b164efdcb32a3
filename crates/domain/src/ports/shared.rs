//! Shared handles to a port are the port: services take `Arc<dyn KeyStore>` as readily as a
//! concrete store or a mock.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::{Clock, Ids, KeyStore, MerchantStore, PlatformStore, StoreError, UserStore};
use crate::api_key::{ApiKey, KeyHash, KeyName, KeyStatus};
use crate::ids::{KeyId, MerchantId, PlatformId, UserId};
use crate::merchant::{Merchant, MerchantPatch};
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::platform::Platform;
use crate::user::User;

impl<T: Clock + ?Sized> Clock for Arc<T> {
    fn now(&self) -> OffsetDateTime {
        (**self).now()
    }
}

impl<T: Ids + ?Sized> Ids for Arc<T> {
    fn next_id(&self) -> String {
        (**self).next_id()
    }
    fn key_secret(&self) -> String {
        (**self).key_secret()
    }
}

#[async_trait]
impl<T: PlatformStore + ?Sized> PlatformStore for Arc<T> {
    async fn create_platform_atomically(
        &self,
        platform: &Platform,
        owner: &User,
        keys: &[ApiKey],
    ) -> Result<(), StoreError> {
        (**self)
            .create_platform_atomically(platform, owner, keys)
            .await
    }
    async fn create_first_platform_atomically(
        &self,
        platform: &Platform,
        owner: &User,
        keys: &[ApiKey],
    ) -> Result<bool, StoreError> {
        (**self)
            .create_first_platform_atomically(platform, owner, keys)
            .await
    }
    async fn get_platform(&self, id: &PlatformId) -> Result<Option<Platform>, StoreError> {
        (**self).get_platform(id).await
    }
    async fn list_platforms(&self) -> Result<Vec<Platform>, StoreError> {
        (**self).list_platforms().await
    }
}

#[async_trait]
impl<T: UserStore + ?Sized> UserStore for Arc<T> {
    async fn insert_user(&self, user: &User) -> Result<(), StoreError> {
        (**self).insert_user(user).await
    }
    async fn get_user(&self, p: &PlatformId, id: &UserId) -> Result<Option<User>, StoreError> {
        (**self).get_user(p, id).await
    }
    async fn list_users(&self, p: &PlatformId) -> Result<Vec<User>, StoreError> {
        (**self).list_users(p).await
    }
    async fn delete_user(&self, p: &PlatformId, id: &UserId) -> Result<(), StoreError> {
        (**self).delete_user(p, id).await
    }
}

#[async_trait]
impl<T: KeyStore + ?Sized> KeyStore for Arc<T> {
    async fn insert_key(&self, key: &ApiKey) -> Result<(), StoreError> {
        (**self).insert_key(key).await
    }
    async fn find_key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
        (**self).find_key_by_hash(hash).await
    }
    async fn get_key(&self, p: &PlatformId, id: &KeyId) -> Result<Option<ApiKey>, StoreError> {
        (**self).get_key(p, id).await
    }
    async fn list_keys(&self, p: &PlatformId) -> Result<Vec<ApiKey>, StoreError> {
        (**self).list_keys(p).await
    }
    async fn rename_key(&self, p: &PlatformId, id: &KeyId, n: &KeyName) -> Result<(), StoreError> {
        (**self).rename_key(p, id, n).await
    }
    async fn set_key_status(
        &self,
        p: &PlatformId,
        id: &KeyId,
        status: KeyStatus,
    ) -> Result<(), StoreError> {
        (**self).set_key_status(p, id, status).await
    }
    async fn delete_key(&self, p: &PlatformId, id: &KeyId) -> Result<(), StoreError> {
        (**self).delete_key(p, id).await
    }
    async fn touch_key(
        &self,
        p: &PlatformId,
        id: &KeyId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        (**self).touch_key(p, id, at).await
    }
}

#[async_trait]
impl<T: MerchantStore + ?Sized> MerchantStore for Arc<T> {
    async fn insert_merchant(&self, m: &Merchant) -> Result<(), StoreError> {
        (**self).insert_merchant(m).await
    }
    async fn get_merchant(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &MerchantId,
    ) -> Result<Option<Merchant>, StoreError> {
        (**self).get_merchant(p, mode, id).await
    }
    async fn list_merchants(
        &self,
        p: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<Merchant>, StoreError> {
        (**self).list_merchants(p, mode, page).await
    }
    async fn update_merchant(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &MerchantId,
        patch: &MerchantPatch,
        at: OffsetDateTime,
    ) -> Result<Merchant, StoreError> {
        (**self).update_merchant(p, mode, id, patch, at).await
    }
    async fn delete_merchant(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &MerchantId,
        at: OffsetDateTime,
    ) -> Result<(), StoreError> {
        (**self).delete_merchant(p, mode, id, at).await
    }
}
