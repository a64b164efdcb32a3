//! Key management (spec 3.1, 4.6): generate, rename, activate, deactivate, delete, list.

use std::sync::Arc;

use crate::api_key::{ApiKey, KeyEvent, KeyName, KeyStatus, KeyTransition, KeyValue};
use crate::audit::{Action, Actor};
use crate::ids::{KeyId, PlatformId, UserId};
use crate::mode::{KeyType, Mode};
use crate::ports::{Clock, Ids, KeyStore, UserStore};

use super::ServiceError;
use super::audit::{Auditor, Target};

/// A key just generated, with the one copy of its full value the caller will ever see.
#[derive(Debug, Clone)]
pub struct CreatedKey {
    /// The key as stored: hash and last four characters only.
    pub key: ApiKey,
    /// The full secret value, to hand to the caller now; it cannot be recovered later.
    pub value: KeyValue,
}

/// Builds a new active key and its value; shared with platform creation.
pub(crate) fn new_key(
    clock: &dyn Clock,
    ids: &dyn Ids,
    platform: &PlatformId,
    created_by: &UserId,
    name: KeyName,
    key_type: KeyType,
    mode: Mode,
) -> CreatedKey {
    let value = KeyValue::generate(key_type, mode, &ids.key_secret())
        .expect("the Ids port yields 26 alphanumerics");
    let key = ApiKey {
        id: KeyId::from_suffix(&ids.next_id()),
        platform_id: platform.clone(),
        name,
        key_type,
        mode,
        status: KeyStatus::Active,
        hash: value.hash(),
        last4: value.last4(),
        created_by: created_by.clone(),
        created_on: clock.now(),
        last_used_on: None,
    };
    CreatedKey { key, value }
}

/// Manages a platform's API keys through the dashboard operations of spec 4.6.
#[derive(Clone)]
pub struct KeyService {
    keys: Arc<dyn KeyStore>,
    users: Arc<dyn UserStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    audit: Auditor,
}

impl KeyService {
    /// A service over the key and user stores, with the clock and id source it stamps keys
    /// with, recording every change in the audit log.
    pub fn new(
        keys: Arc<dyn KeyStore>,
        users: Arc<dyn UserStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        audit: Auditor,
    ) -> Self {
        Self {
            keys,
            users,
            clock,
            ids,
            audit,
        }
    }

    async fn record(&self, actor: &Actor, action: Action, key: &ApiKey) {
        let target = Target {
            platform: &key.platform_id,
            mode: Some(key.mode),
            id: key.id.as_str(),
        };
        self.audit.record(actor, action, target).await;
    }

    /// Generates a key (spec 3.1 first row): active at once, value returned once.
    /// Refuses with `NotFound("user")` when `created_by` is not a user of the platform.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, created_by = %created_by))]
    pub async fn generate(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        created_by: &UserId,
        name: KeyName,
        key_type: KeyType,
        mode: Mode,
    ) -> Result<CreatedKey, ServiceError> {
        self.users
            .get_user(platform, created_by)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("user"))?;
        let created = new_key(
            &*self.clock,
            &*self.ids,
            platform,
            created_by,
            name,
            key_type,
            mode,
        );
        self.keys
            .insert_key(&created.key)
            .await
            .map_err(ServiceError::Store)?;
        self.record(actor, Action::KeyGenerated, &created.key).await;
        Ok(created)
    }

    /// Every key of the platform, in both modes, oldest first.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform))]
    pub async fn list(&self, platform: &PlatformId) -> Result<Vec<ApiKey>, ServiceError> {
        self.keys
            .list_keys(platform)
            .await
            .map_err(ServiceError::Store)
    }

    /// Gives a key a new name and returns it; `NotFound("key")` when the platform has no such key.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn rename(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        id: &KeyId,
        name: &KeyName,
    ) -> Result<ApiKey, ServiceError> {
        self.keys
            .rename_key(platform, id, name)
            .await
            .map_err(|e| ServiceError::from_store("key", e))?;
        let key = self.get(platform, id).await?;
        self.record(actor, Action::KeyRenamed, &key).await;
        Ok(key)
    }

    /// Applies a lifecycle event. Returns the key as it now is, or `None` once deleted.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn apply(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        id: &KeyId,
        event: KeyEvent,
    ) -> Result<Option<ApiKey>, ServiceError> {
        let key = self.get(platform, id).await?;
        let transition = key
            .status
            .apply(event)
            .map_err(|e| ServiceError::Conflict {
                field: "status",
                message: e.to_string(),
            })?;
        match transition {
            KeyTransition::To(status) => {
                self.keys
                    .set_key_status(platform, id, status)
                    .await
                    .map_err(|e| ServiceError::from_store("key", e))?;
                let action = match status {
                    KeyStatus::Active => Action::KeyActivated,
                    KeyStatus::Inactive => Action::KeyDeactivated,
                };
                let key = ApiKey { status, ..key };
                self.record(actor, action, &key).await;
                Ok(Some(key))
            }
            KeyTransition::Deleted => {
                self.keys
                    .delete_key(platform, id)
                    .await
                    .map_err(|e| ServiceError::from_store("key", e))?;
                self.record(actor, Action::KeyDeleted, &key).await;
                Ok(None)
            }
        }
    }

    /// A key of the platform; `NotFound("key")` when it has no such key.
    pub async fn get(&self, platform: &PlatformId, id: &KeyId) -> Result<ApiKey, ServiceError> {
        self.keys
            .get_key(platform, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("key"))
    }
}

#[cfg(test)]
mod tests;
