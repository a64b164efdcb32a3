//! Webhook subscriptions (spec 2.3, 3.2, 4.2, 4.3) and the dashboard operations on them
//! (spec 4.6: the toggle and resend, offered to operators through the CLI).

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::audit::{Action, Actor};
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{PlatformId, WebhookId};
use crate::page::{Page, PageRequest};
use crate::ports::{Clock, Ids, NotificationQueue, Replacement, WebhookStore};
use crate::webhook::{
    CustomHeader, Description, EndpointUrl, EventList, SECRET_OVERLAP, Subscription,
};

use super::ServiceError;
use super::audit::{Auditor, Target};

/// A subscription as created through the API.
#[derive(Debug, Clone)]
pub struct NewWebhook {
    /// The URL that will receive notifications.
    pub endpoint_url: EndpointUrl,
    /// The event types the subscription receives.
    pub events: EventList,
    /// Optional text, included in the disable email.
    pub description: Option<Description>,
    /// A header to send with every delivery, if any.
    pub custom_header: Option<CustomHeader>,
    /// Whether the subscription delivers from the start.
    pub active: bool,
    /// The platform's own key/value pairs.
    pub metadata: crate::metadata::Metadata,
}

/// Manages webhook subscriptions, their delivery history and resends for a platform.
#[derive(Clone)]
pub struct WebhookService {
    store: Arc<dyn WebhookStore>,
    queue: Arc<dyn NotificationQueue>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    audit: Auditor,
    max_subscriptions: u32,
    secret_overlap: time::Duration,
}

/// Subscriptions a platform may have per mode unless configured otherwise: every one of them
/// is a row written with each event, and a request sent for it.
pub const DEFAULT_MAX_SUBSCRIPTIONS: u32 = 16;

impl WebhookService {
    /// A service over the webhook store and notification queue, with the default subscription
    /// limit and secret overlap, recording every change in the audit log.
    pub fn new(
        store: Arc<dyn WebhookStore>,
        queue: Arc<dyn NotificationQueue>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        audit: Auditor,
    ) -> Self {
        Self {
            store,
            queue,
            clock,
            ids,
            audit,
            max_subscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
            secret_overlap: SECRET_OVERLAP,
        }
    }

    /// How long a rotated-out secret keeps signing (at least a second).
    #[must_use]
    pub fn with_secret_overlap(mut self, overlap: time::Duration) -> Self {
        self.secret_overlap = overlap.max(time::Duration::SECOND);
        self
    }

    /// At most `max` subscriptions per platform and mode (at least one).
    #[must_use]
    pub fn with_max_subscriptions(mut self, max: u32) -> Self {
        self.max_subscriptions = max.max(1);
        self
    }

    /// The creator is the user who generated the calling key; it never changes. Under an
    /// idempotency key (`reply`), the answer is stored with the subscription.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        actor: &Actor,
        new: NewWebhook,
        reply: Option<&Recorder<'_, Subscription>>,
    ) -> Result<Subscription, ServiceError> {
        let now = self.clock.now();
        let subscription = Subscription {
            id: WebhookId::from_suffix(&self.ids.next_id()),
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            endpoint_url: new.endpoint_url,
            events: new.events,
            description: new.description,
            custom_header: new.custom_header,
            active: new.active,
            secret: self.new_secret(),
            previous_secret: None,
            creator: who.user_id.clone(),
            consecutive_failures: 0,
            created_on: now,
            updated_on: now,
            metadata: new.metadata,
        };
        let inserted = self
            .store
            .insert_webhook(
                &subscription,
                self.max_subscriptions,
                reply_for(reply, &subscription),
            )
            .await
            .map_err(ServiceError::Store)?;
        if !inserted {
            return Err(ServiceError::LimitReached(format!(
                "this platform already has the most webhook subscriptions a mode may have ({}); \
                 delete one first",
                self.max_subscriptions
            )));
        }
        self.record(actor, Action::WebhookCreated, &subscription)
            .await;
        Ok(subscription)
    }

    async fn record(&self, actor: &Actor, action: Action, s: &Subscription) {
        let target = Target {
            platform: &s.platform_id,
            mode: Some(s.mode),
            id: s.id.as_str(),
        };
        self.audit.record(actor, action, target).await;
    }

    /// Two 26-character secrets from the CSPRNG: 52 bytes, over 300 bits.
    fn new_secret(&self) -> String {
        let bytes = format!("{}{}", self.ids.key_secret(), self.ids.key_secret());
        format!("whsec_{}", STANDARD.encode(bytes))
    }

    /// A new signing secret; the current one keeps signing beside it for the overlap (24 hours
    /// by default). Under an idempotency key (`reply`), the answer is stored with the change,
    /// so a retry after a crash replays it rather than rotating the secret a receiver still
    /// uses out of the overlap.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn rotate_secret(
        &self,
        who: &Principal,
        actor: &Actor,
        id: &WebhookId,
        reply: Option<&Recorder<'_, Subscription>>,
    ) -> Result<Subscription, ServiceError> {
        let current = self.get(who, id).await?;
        let rotated = current.rotated(self.new_secret(), self.clock.now(), self.secret_overlap);
        let written = self
            .store
            .rotate_secret(&rotated, &current.secret, reply_for(reply, &rotated))
            .await
            .map_err(|e| ServiceError::from_store("webhook", e))?;
        if !written {
            return Err(ServiceError::Conflict {
                field: "id",
                message: "the secret was rotated by another request at the same time; \
                          read the subscription for the secret in use"
                    .into(),
            });
        }
        self.record(actor, Action::WebhookSecretRotated, &rotated)
            .await;
        Ok(rotated)
    }

    /// A subscription in the caller's platform and mode; `NotFound("webhook")` otherwise.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn get(&self, who: &Principal, id: &WebhookId) -> Result<Subscription, ServiceError> {
        self.store
            .get_webhook(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("webhook"))
    }

    /// A subscription shown with its signing secret in the dashboard: recorded, since the
    /// secret is what lets anyone forge a notification.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn reveal_secret(
        &self,
        who: &Principal,
        actor: &Actor,
        id: &WebhookId,
    ) -> Result<Subscription, ServiceError> {
        let s = self.get(who, id).await?;
        self.record(actor, Action::WebhookSecretRevealed, &s).await;
        Ok(s)
    }

    /// The caller's subscriptions in its mode, newest first (spec 4.3).
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn list(
        &self,
        who: &Principal,
        page: &PageRequest,
    ) -> Result<Page<Subscription>, ServiceError> {
        self.store
            .list_webhooks(&who.scope, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// PATCH (spec 4.2): replaces the subscription's fields; the counter, id, secret and creator
    /// stay.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn replace(
        &self,
        who: &Principal,
        actor: &Actor,
        id: &WebhookId,
        replacement: Replacement,
    ) -> Result<Subscription, ServiceError> {
        let replaced = self
            .store
            .replace_webhook(&who.scope, id, &replacement, self.clock.now())
            .await
            .map_err(|e| ServiceError::from_store("webhook", e))?;
        self.record(actor, Action::WebhookReplaced, &replaced).await;
        Ok(replaced)
    }

    /// Deletes the subscription and its delivery history.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn delete(
        &self,
        who: &Principal,
        actor: &Actor,
        id: &WebhookId,
    ) -> Result<(), ServiceError> {
        self.store
            .delete_webhook(&who.scope, id)
            .await
            .map_err(|e| ServiceError::from_store("webhook", e))?;
        let target = Target {
            platform: &who.scope.platform,
            mode: Some(who.scope.mode),
            id: id.as_str(),
        };
        self.audit
            .record(actor, Action::WebhookDeleted, target)
            .await;
        Ok(())
    }

    /// The toggle of spec 3.2's dashboard row, for any subscription of the platform (operators;
    /// the dashboard goes through `set_active`): sets `active`; enabling resets the counter to 0.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn toggle(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        id: &WebhookId,
        active: bool,
    ) -> Result<Subscription, ServiceError> {
        let toggled = self
            .store
            .toggle_webhook(platform, id, active, self.clock.now())
            .await
            .map_err(|e| ServiceError::from_store("webhook", e))?;
        let action = if active {
            Action::WebhookActivated
        } else {
            Action::WebhookDeactivated
        };
        self.record(actor, action, &toggled).await;
        Ok(toggled)
    }

    /// The dashboard's toggle for a subscription of the caller's platform and mode (another
    /// mode's is `NotFound`, as everywhere); see `toggle`.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn set_active(
        &self,
        who: &Principal,
        actor: &Actor,
        id: &WebhookId,
        active: bool,
    ) -> Result<Subscription, ServiceError> {
        self.get(who, id).await?;
        self.toggle(actor, &who.scope.platform, id, active).await
    }
}

mod deliveries;
#[cfg(test)]
mod tests;
