//! `WebhookStore`: subscriptions and their delivery history.

use std::sync::Arc;

use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{PlatformId, WebhookId};
use holdfast_domain::mode::Mode;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{Delivery, Replacement, StoreError, SubscriptionChange, WebhookStore};
use holdfast_domain::scope::Scope;
use holdfast_domain::webhook::{CustomHeader, Description, Subscription};
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::write_reply;
use crate::conn::Lock;
use crate::error::query_error;
use crate::query::{load_page, scoped, scoped_to};
use crate::rows::{convert_all, metadata_column};
use crate::schema::{events as e, notifications as n, webhooks as w};
use crate::timestamp::Instant;
use crate::webhook_rows::{NewWebhookRow, NotificationRow, WebhookRow, encode_events};

/// What a replacement writes: every field the client sends, `active` and `metadata` only when
/// given (the dashboard edits no metadata).
#[derive(Debug, AsChangeset)]
#[diesel(table_name = w, treat_none_as_null = true)]
struct ReplacementRow<'a> {
    endpoint_url: &'a str,
    events: String,
    description: Option<&'a str>,
    header_name: Option<&'a str>,
    header_value: Option<&'a str>,
    #[diesel(treat_none_as_null = false)]
    active: Option<bool>,
    #[diesel(treat_none_as_null = false)]
    metadata: Option<String>,
    #[diesel(serialize_as = Instant)]
    updated_on: OffsetDateTime,
}

impl<'a> ReplacementRow<'a> {
    fn of(r: &'a Replacement, at: OffsetDateTime) -> Self {
        Self {
            endpoint_url: r.endpoint_url.as_str(),
            events: encode_events(&r.events),
            description: r.description.as_ref().map(Description::as_str),
            header_name: r.custom_header.as_ref().map(CustomHeader::name),
            header_value: r.custom_header.as_ref().map(CustomHeader::value),
            active: r.active,
            metadata: r.metadata.as_ref().map(metadata_column),
            updated_on: at,
        }
    }
}

#[async_trait::async_trait]
impl WebhookStore for SqlStore {
    async fn insert_webhook(
        &self,
        s: &Subscription,
        max: u32,
        reply: Option<KeyedAnswer>,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            // The lock is its own statement: under READ COMMITTED a count in the same statement
            // would still let two concurrent creates both see room for one.
            conn.lock(Lock::WebhookCreate).await?;
            let have: i64 = conn
                .get_result(scoped_to(w::table, &s.platform_id, s.mode).count())
                .await?;
            if have >= i64::from(max) {
                return Ok(false);
            }
            conn.execute(diesel::insert_into(w::table).values(NewWebhookRow::from(s)))
                .await?;
            write_reply(conn, &s.platform_id, s.mode, reply.as_ref()).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("webhooks"))
    }

    async fn rotate_secret(
        &self,
        rotated: &Subscription,
        expected: &str,
        reply: Option<KeyedAnswer>,
    ) -> Result<bool, StoreError> {
        let previous = rotated.previous_secret.as_ref();
        let this = scoped_to(w::table, &rotated.platform_id, rotated.mode)
            .filter(w::id.eq(rotated.id.as_str()));
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let changed = conn
                .execute(diesel::update(this.filter(w::secret.eq(expected))).set((
                    w::secret.eq(&rotated.secret),
                    w::previous_secret.eq(previous.map(|p| p.secret.as_str())),
                    w::previous_secret_until.eq(previous.map(|p| p.until)),
                    w::updated_on.eq(Instant(rotated.updated_on)),
                )))
                .await?;
            if changed == 0 {
                let exists: i64 = conn.get_result(this.count()).await?;
                return if exists == 0 {
                    Err(diesel::result::Error::NotFound)
                } else {
                    Ok(false)
                };
            }
            write_reply(conn, &rotated.platform_id, rotated.mode, reply.as_ref()).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("webhooks"))
    }

    async fn get_webhook(
        &self,
        scope: &Scope,
        id: &WebhookId,
    ) -> Result<Option<Subscription>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<WebhookRow, _>(scoped(w::table, scope).filter(w::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("webhooks"))?
            .map(Subscription::try_from)
            .transpose()
    }

    async fn list_webhooks(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<Subscription>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(w::table, scope)
            .order(w::id.desc())
            .limit(page.fetch_count());
        load_page::<WebhookRow, _, _, _, _, _, _>(
            &mut conn,
            "webhooks",
            newest,
            page,
            |q, after| q.filter(w::id.lt(after)),
            |q, before| q.filter(w::id.gt(before)).order(w::id.asc()),
        )
        .await
    }

    async fn replace_webhook(
        &self,
        scope: &Scope,
        id: &WebhookId,
        r: &Replacement,
        at: OffsetDateTime,
    ) -> Result<Subscription, StoreError> {
        let mut conn = self.conn().await?;
        let replaced = conn
            .get_result::<WebhookRow, _>(
                diesel::update(scoped(w::table, scope).filter(w::id.eq(id.as_str())))
                    .set(ReplacementRow::of(r, at)),
            )
            .await
            .map_err(query_error("webhooks"))
            .and_then(Subscription::try_from)?;
        self.subscription_changed(SubscriptionChange::Now(Arc::new(replaced.clone())));
        Ok(replaced)
    }

    async fn delete_webhook(&self, scope: &Scope, id: &WebhookId) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            // The history goes with it (spec 3.2), in the caller's scope only; a subscription
            // of another platform or mode is not found and nothing is deleted (the transaction
            // rolls back).
            conn.execute(diesel::delete(
                scoped(n::table, scope).filter(n::webhook_id.eq(id.as_str())),
            ))
            .await?;
            let deleted = conn
                .execute(diesel::delete(
                    scoped(w::table, scope).filter(w::id.eq(id.as_str())),
                ))
                .await?;
            super::one_row(deleted)
        })
        .await
        .map_err(query_error("webhooks"))?;
        self.subscription_changed(SubscriptionChange::Deleted(id.clone()));
        Ok(())
    }

    async fn toggle_webhook(
        &self,
        platform: &PlatformId,
        id: &WebhookId,
        active: bool,
        at: OffsetDateTime,
    ) -> Result<Subscription, StoreError> {
        let mut conn = self.conn().await?;
        let toggled = conn
            .get_result::<WebhookRow, _>(
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
                    w::updated_on.eq(Instant(at)),
                )),
            )
            .await
            .map_err(query_error("webhooks"))
            .and_then(Subscription::try_from)?;
        self.subscription_changed(SubscriptionChange::Now(Arc::new(toggled.clone())));
        Ok(toggled)
    }

    async fn list_deliveries(
        &self,
        platform: &PlatformId,
        mode: Option<Mode>,
        webhook: &WebhookId,
        page: &PageRequest,
    ) -> Result<Page<Delivery>, StoreError> {
        let mut conn = self.conn().await?;
        let of_platform = w::table
            .filter(w::platform_id.eq(platform.as_str()))
            .filter(w::id.eq(webhook.as_str()))
            .select(w::id);
        match mode {
            Some(mode) => {
                conn.first::<String, _>(of_platform.filter(w::mode.eq(mode.as_str())))
                    .await
            }
            None => conn.first::<String, _>(of_platform).await,
        }
        .map_err(query_error("webhooks"))?;
        let newest = n::table
            .filter(n::webhook_id.eq(webhook.as_str()))
            .order(n::id.desc())
            .limit(page.fetch_count());
        load_page::<NotificationRow, _, _, _, _, _, _>(
            &mut conn,
            "notifications",
            newest,
            page,
            |q, after| q.filter(n::id.lt(after)),
            |q, before| q.filter(n::id.gt(before)).order(n::id.asc()),
        )
        .await
    }

    async fn deliveries_about(
        &self,
        scope: &Scope,
        subject: &str,
        limit: u32,
    ) -> Result<Vec<Delivery>, StoreError> {
        let mut conn = self.conn().await?;
        let events = scoped(e::table, scope)
            .filter(e::subject_id.eq(subject))
            .select(e::id);
        let rows: Vec<NotificationRow> = conn
            .load(
                scoped(n::table, scope)
                    .filter(n::event_id.eq_any(events))
                    .order(n::id.desc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("notifications"))?;
        convert_all(rows)
    }
}
