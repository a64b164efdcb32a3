//! A subscription's deliveries: its history (spec 2.4), a test event, a resend (spec 6.4), and
//! the history's retention.

use crate::audit::{Action, Actor};
use crate::auth::Principal;
use crate::ids::{EventId, NotificationId, PlatformId, WebhookId};
use crate::page::{Page, PageRequest};
use crate::ports::{Delivery, Event, EventData, ResendError, TestEvent, TestEventError};
use crate::webhook::HISTORY;

use super::WebhookService;
use crate::services::ServiceError;
use crate::services::audit::Target;

impl WebhookService {
    /// The delivery records of one of the caller's subscriptions, newest first (spec 2.4).
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn deliveries(
        &self,
        who: &Principal,
        id: &WebhookId,
        page: &PageRequest,
    ) -> Result<Page<Delivery>, ServiceError> {
        self.store
            .list_deliveries(&who.scope.platform, Some(who.scope.mode), id, page)
            .await
            .map_err(|e| ServiceError::from_store("webhook", e))
    }

    /// The delivery records of the notifications about `subject` (a transaction's id, say) in
    /// the caller's mode, newest first, at most 100: a transaction's Webhook Deliveries tab.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn deliveries_about(
        &self,
        who: &Principal,
        subject: &str,
    ) -> Result<Vec<Delivery>, ServiceError> {
        self.store
            .deliveries_about(&who.scope, subject, 100)
            .await
            .map_err(ServiceError::Store)
    }

    /// Operators read the history of any subscription of the platform.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn operator_deliveries(
        &self,
        platform: &PlatformId,
        id: &WebhookId,
        page: &PageRequest,
    ) -> Result<Page<Delivery>, ServiceError> {
        self.store
            .list_deliveries(platform, None, id, page)
            .await
            .map_err(|e| ServiceError::from_store("webhook", e))
    }

    /// Archives the delivery records that were past their 15-day history at `as_of` (now
    /// unless given); returns how many.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn archive_deliveries(
        &self,
        as_of: Option<time::OffsetDateTime>,
    ) -> Result<u64, ServiceError> {
        let as_of = as_of.unwrap_or_else(|| self.clock.now());
        self.queue
            .archive_deliveries(as_of - HISTORY)
            .await
            .map_err(ServiceError::Store)
    }

    /// Deletes the delivery records left behind by subscriptions deleted while an event fanned
    /// out to them (spec 3.2: a subscription's history goes with it); returns how many.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn delete_orphaned_deliveries(&self) -> Result<u64, ServiceError> {
        self.queue
            .delete_orphaned_deliveries()
            .await
            .map_err(ServiceError::Store)
    }

    /// Sends the subscription a `webhook.test` event, whatever types it names: a new event (not
    /// a resend, which spec 6.4 keeps to transactions and the dashboard) with one notification,
    /// queued when this returns. Like any notification it is signed, retried, counted and kept
    /// in the delivery history.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn send_test(
        &self,
        who: &Principal,
        actor: &Actor,
        id: &WebhookId,
    ) -> Result<Delivery, TestEventError> {
        let event = Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            data: EventData::WebhookTest(TestEvent {
                webhook_id: id.clone(),
                message: TestEvent::MESSAGE,
            }),
            created_on: self.clock.now(),
        };
        let queued = self.queue.queue_test(&who.scope, id, &event).await?;
        let target = Target {
            platform: &who.scope.platform,
            mode: Some(who.scope.mode),
            id: queued.id.as_str(),
        };
        self.audit
            .record(actor, Action::WebhookTested, target)
            .await;
        Ok(queued)
    }

    /// Resend (spec 6.4): queued, not delivered, when this returns.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn resend(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        id: &NotificationId,
    ) -> Result<Delivery, ResendError> {
        let new_id = NotificationId::from_suffix(&self.ids.next_id());
        let queued = self
            .queue
            .resend(platform, id, &new_id, self.clock.now())
            .await?;
        let target = Target {
            platform,
            mode: Some(queued.mode),
            id: queued.id.as_str(),
        };
        self.audit
            .record(actor, Action::WebhookResent, target)
            .await;
        Ok(queued)
    }
}
