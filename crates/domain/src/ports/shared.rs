//! Shared handles to a port are the port: services take `Arc<dyn KeyStore>` as readily as a
//! concrete store or a mock.

use std::sync::Arc;

use async_trait::async_trait;
use time::OffsetDateTime;

use super::{
    BinInfo, BinLookup, CardVault, Clock, Event, Ids, KeyStore, MerchantStore, NewPlatform,
    OriginalOutcome, PaymentSetup, PaymentStore, PlatformStore, Processor, ProcessorError,
    ProcessorReply, ProcessorRequest, Reservation, Sealed, StoreError, StoredEvent, TokenStore,
    TxnFilter, UserStore, VaultError,
};
use crate::api_key::{ApiKey, KeyHash, KeyName, KeyStatus};
use crate::idempotency::KeyedResponse;
use crate::ids::{ConnectionId, PlanId, TokenId, TxnId};
use crate::ids::{KeyId, MerchantId, PlatformId, UserId};
use crate::merchant::{Merchant, MerchantPatch};
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::token::Token;
use crate::payment::transaction::Transaction;
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
    async fn create_platform_atomically(&self, new: &NewPlatform) -> Result<(), StoreError> {
        (**self).create_platform_atomically(new).await
    }
    async fn create_first_platform_atomically(
        &self,
        new: &NewPlatform,
    ) -> Result<bool, StoreError> {
        (**self).create_first_platform_atomically(new).await
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
    async fn insert_merchant_with_event(
        &self,
        m: &Merchant,
        event: &crate::ids::EventId,
        reply: Option<KeyedResponse>,
    ) -> Result<(), StoreError> {
        (**self).insert_merchant_with_event(m, event, reply).await
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
    async fn update_merchant_with_event(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &MerchantId,
        patch: &MerchantPatch,
        at: OffsetDateTime,
        event: &crate::ids::EventId,
    ) -> Result<Merchant, StoreError> {
        (**self)
            .update_merchant_with_event(p, mode, id, patch, at, event)
            .await
    }
    async fn delete_merchant_with_event(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &MerchantId,
        at: OffsetDateTime,
        event: &crate::ids::EventId,
    ) -> Result<(), StoreError> {
        (**self)
            .delete_merchant_with_event(p, mode, id, at, event)
            .await
    }
}

impl<T: BinLookup + ?Sized> BinLookup for Arc<T> {
    fn lookup(&self, bin: &str) -> BinInfo {
        (**self).lookup(bin)
    }
}

#[async_trait]
impl<T: Processor + ?Sized> Processor for Arc<T> {
    async fn call(
        &self,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) -> Result<ProcessorReply, ProcessorError> {
        (**self).call(connection, request).await
    }
}

#[async_trait]
impl<T: PaymentStore + ?Sized> PaymentStore for Arc<T> {
    async fn insert_connection(
        &self,
        c: &ProcessorConnection,
        reply: Option<KeyedResponse>,
    ) -> Result<(), StoreError> {
        (**self).insert_connection(c, reply).await
    }
    async fn list_connections(
        &self,
        p: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<ProcessorConnection>, StoreError> {
        (**self).list_connections(p, mode, page).await
    }
    async fn get_connection(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError> {
        (**self).get_connection(p, mode, id).await
    }
    async fn insert_plan(
        &self,
        plan: &Plan,
        reply: Option<KeyedResponse>,
    ) -> Result<(), StoreError> {
        (**self).insert_plan(plan, reply).await
    }
    async fn list_plans(
        &self,
        p: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<Plan>, StoreError> {
        (**self).list_plans(p, mode, page).await
    }
    async fn get_plan(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &PlanId,
    ) -> Result<Option<Plan>, StoreError> {
        (**self).get_plan(p, mode, id).await
    }
    async fn default_plan(&self, p: &PlatformId, mode: Mode) -> Result<Option<Plan>, StoreError> {
        (**self).default_plan(p, mode).await
    }
    async fn insert_pending_transaction(&self, txn: &Transaction) -> Result<(), StoreError> {
        (**self).insert_pending_transaction(txn).await
    }
    async fn payment_setup(
        &self,
        p: &PlatformId,
        mode: Mode,
        merchant: &MerchantId,
    ) -> Result<Option<PaymentSetup>, StoreError> {
        (**self).payment_setup(p, mode, merchant).await
    }
    async fn complete_transaction_with_event(
        &self,
        txn: &Transaction,
        original: Option<(TxnId, OriginalOutcome)>,
        event: &Event,
        reply: Option<crate::idempotency::KeyedResponse>,
    ) -> Result<(), StoreError> {
        (**self)
            .complete_transaction_with_event(txn, original, event, reply)
            .await
    }
    async fn reserve_with_pending(
        &self,
        platform: &PlatformId,
        mode: Mode,
        original: &TxnId,
        reservation: Reservation,
        pending: &Transaction,
    ) -> Result<bool, StoreError> {
        (**self)
            .reserve_with_pending(platform, mode, original, reservation, pending)
            .await
    }
    async fn get_transaction(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &TxnId,
    ) -> Result<Option<Transaction>, StoreError> {
        (**self).get_transaction(p, mode, id).await
    }
    async fn stale_pending(
        &self,
        before: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<Transaction>, StoreError> {
        (**self).stale_pending(before, limit).await
    }
    async fn list_transactions(
        &self,
        p: &PlatformId,
        mode: Mode,
        filter: &TxnFilter,
        page: &PageRequest,
    ) -> Result<Page<Transaction>, StoreError> {
        (**self).list_transactions(p, mode, filter, page).await
    }
    async fn list_events(
        &self,
        p: &PlatformId,
        mode: Mode,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        (**self).list_events(p, mode).await
    }
}

impl<T: CardVault + ?Sized> CardVault for Arc<T> {
    fn seal(&self, context: &str, secret: &str) -> Sealed {
        (**self).seal(context, secret)
    }
    fn open(&self, context: &str, sealed: &Sealed) -> Result<String, VaultError> {
        (**self).open(context, sealed)
    }
}

#[async_trait]
impl<T: TokenStore + ?Sized> TokenStore for Arc<T> {
    async fn save(&self, token: &Token, reply: Option<KeyedResponse>) -> Result<(), StoreError> {
        (**self).save(token, reply).await
    }
    async fn take(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &TokenId,
        now: OffsetDateTime,
    ) -> Result<Option<Token>, StoreError> {
        (**self).take(p, mode, id, now).await
    }
    async fn find(
        &self,
        p: &PlatformId,
        mode: Mode,
        id: &TokenId,
    ) -> Result<Option<Token>, StoreError> {
        (**self).find(p, mode, id).await
    }
    async fn erase_expired(&self, now: OffsetDateTime) -> Result<usize, StoreError> {
        (**self).erase_expired(now).await
    }
}

#[async_trait]
impl<T: super::WebhookStore + ?Sized> super::WebhookStore for Arc<T> {
    async fn insert_webhook(
        &self,
        s: &crate::webhook::Subscription,
        max: u32,
        reply: Option<KeyedResponse>,
    ) -> Result<bool, StoreError> {
        (**self).insert_webhook(s, max, reply).await
    }
    async fn rotate_secret(
        &self,
        rotated: &crate::webhook::Subscription,
        expected: &str,
        reply: Option<KeyedResponse>,
    ) -> Result<bool, StoreError> {
        (**self).rotate_secret(rotated, expected, reply).await
    }
    async fn get_webhook(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &crate::ids::WebhookId,
    ) -> Result<Option<crate::webhook::Subscription>, StoreError> {
        (**self).get_webhook(platform, mode, id).await
    }
    async fn list_webhooks(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<crate::webhook::Subscription>, StoreError> {
        (**self).list_webhooks(platform, mode, page).await
    }
    async fn replace_webhook(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &crate::ids::WebhookId,
        replacement: &super::Replacement,
        at: OffsetDateTime,
    ) -> Result<crate::webhook::Subscription, StoreError> {
        (**self)
            .replace_webhook(platform, mode, id, replacement, at)
            .await
    }
    async fn delete_webhook(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &crate::ids::WebhookId,
    ) -> Result<(), StoreError> {
        (**self).delete_webhook(platform, mode, id).await
    }
    async fn toggle_webhook(
        &self,
        platform: &PlatformId,
        id: &crate::ids::WebhookId,
        active: bool,
        at: OffsetDateTime,
    ) -> Result<crate::webhook::Subscription, StoreError> {
        (**self).toggle_webhook(platform, id, active, at).await
    }
    async fn list_deliveries(
        &self,
        platform: &PlatformId,
        mode: Option<Mode>,
        webhook: &crate::ids::WebhookId,
        page: &PageRequest,
    ) -> Result<Page<super::Delivery>, StoreError> {
        (**self)
            .list_deliveries(platform, mode, webhook, page)
            .await
    }
}

#[async_trait]
impl<T: super::NotificationQueue + ?Sized> super::NotificationQueue for Arc<T> {
    async fn claim_notifications(
        &self,
        now: OffsetDateTime,
        lease_until: OffsetDateTime,
        limits: super::ClaimLimits,
    ) -> Result<Vec<super::Claimed>, StoreError> {
        (**self).claim_notifications(now, lease_until, limits).await
    }
    async fn complete_notification(
        &self,
        id: &crate::ids::NotificationId,
        finished: &super::Finished,
        service_name: &str,
    ) -> Result<super::Recorded, StoreError> {
        (**self)
            .complete_notification(id, finished, service_name)
            .await
    }
    async fn archive_deliveries(&self, before: OffsetDateTime) -> Result<u64, StoreError> {
        (**self).archive_deliveries(before).await
    }
    async fn resend(
        &self,
        platform: &PlatformId,
        id: &crate::ids::NotificationId,
        new_id: &crate::ids::NotificationId,
        now: OffsetDateTime,
    ) -> Result<super::Delivery, super::ResendError> {
        (**self).resend(platform, id, new_id, now).await
    }
}
