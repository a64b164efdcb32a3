//! `NotificationQueue` and `EmailOutbox`, written once for both backends. A notification claim
//! is fair (`claim.rs`) and serialised by `Backend::NOTIFICATION_CLAIM_LOCK`. `$lock` is the row
//! lock an email claim takes: `for_update, skip_locked` on PostgreSQL, so workers never wait on
//! each other's rows; nothing on SQLite, whose single writer serialises claims anyway.

macro_rules! notification_queue {
    ($store:ident, $schema:ident, [$($lock:ident),*]) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::NotificationQueue for $store {
            async fn claim_notifications(
                &self,
                now: OffsetDateTime,
                lease_until: OffsetDateTime,
                limits: ClaimLimits,
            ) -> Result<Vec<Claimed>, StoreError> {
                use crate::schema::$schema::{events as e, notifications as n, webhooks as w};
                if limits.batch == 0 {
                    return Ok(Vec::new());
                }
                let mut conn = self.conn().await?;
                let rows = conn
                    .transaction::<_, diesel::result::Error, _>(async |conn| {
                        diesel::sql_query(<Self as crate::stores::Backend>::NOTIFICATION_CLAIM_LOCK)
                            .execute(conn)
                            .await?;
                        let ids = Self::fair_due_ids_on(conn, now, limits).await?;
                        if ids.is_empty() {
                            return Ok(Vec::new());
                        }
                        // Only what this update leased is handed out: a row another worker finished
                        // since the ids were read is no longer pending, and is not sent again.
                        let leased: Vec<String> = diesel::update(
                            n::table.filter(n::id.eq_any(&ids)).filter(n::state.eq("pending")),
                        )
                        .set(n::lease_until.eq(Some(lease_until)))
                        .returning(n::id)
                        .get_results(conn)
                        .await?;
                        if leased.is_empty() {
                            return Ok(Vec::new());
                        }
                        n::table
                            .inner_join(e::table)
                            .left_join(w::table)
                            .filter(n::id.eq_any(&leased))
                            .select((
                                n::id,
                                n::event_type,
                                e::data,
                                n::created_on,
                                w::all_columns.nullable(),
                            ))
                            .load::<(String, String, String, OffsetDateTime, Option<WebhookRow>)>(conn)
                            .await
                    })
                    .await
                    .map_err(query_error("notifications"))?;
                rows.into_iter()
                    .map(|(id, event_type, event_data, created_on, webhook)| {
                        Ok(Claimed {
                            id: NotificationId::from_trusted(id),
                            event_type,
                            event_data,
                            created_on,
                            subscription: webhook.map(Subscription::try_from).transpose()?,
                        })
                    })
                    .collect()
            }

            #[tracing::instrument(skip_all, fields(notification = %id, outcome = finished.outcome.as_str()), err)]
            async fn complete_notification(
                &self,
                id: &NotificationId,
                finished: &Finished,
                service_name: &str,
            ) -> Result<Recorded, StoreError> {
                use crate::schema::$schema::{emails as m, notifications as n, users as u, webhooks as w};
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    let mut recorded = Recorded { recorded: false, disabled: false, email_queued: false };
                    // Only a pending notification takes an outcome: of two workers finishing
                    // the same notification (a lease that ran out), the first one counts.
                    let webhook: Option<String> = diesel::update(
                        n::table.filter(n::id.eq(id.as_str())).filter(n::state.eq("pending")),
                    )
                    .set((
                        n::state.eq(finished.outcome.as_str()),
                        n::endpoint_url.eq(&finished.endpoint_url),
                        n::request_body.eq(&finished.request_body),
                        n::response.eq(&finished.response),
                        n::requests.eq(i32::try_from(finished.requests).unwrap_or(i32::MAX)),
                        n::attempted_on.eq(Some(finished.attempted_on)),
                        n::lease_until.eq(None::<OffsetDateTime>),
                    ))
                    .returning(n::webhook_id)
                    .get_result(conn)
                    .await
                    .optional()?;
                    let Some(webhook) = webhook else { return Ok(recorded) };
                    recorded.recorded = true;
                    let this = w::table.filter(w::id.eq(&webhook));
                    match finished.outcome {
                        Outcome::Skipped => {}
                        Outcome::Succeeded => {
                            diesel::update(this).set(w::consecutive_failures.eq(0)).execute(conn).await?;
                        }
                        Outcome::Failed => {
                            let (failures, active): (i32, bool) = diesel::update(this)
                                .set(w::consecutive_failures.eq(w::consecutive_failures + 1))
                                .returning((w::consecutive_failures, w::active))
                                .get_result(conn)
                                .await?;
                            if active && failure_disables(u32::try_from(failures).unwrap_or(u32::MAX)) {
                                let row: WebhookRow = diesel::update(this)
                                    .set(w::active.eq(false))
                                    .get_result(conn)
                                    .await?;
                                recorded.disabled = true;
                                let to: Option<String> = u::table
                                    .filter(u::id.eq(&row.creator_id))
                                    .filter(u::platform_id.eq(&row.platform_id))
                                    .select(u::email)
                                    .first(conn)
                                    .await
                                    .optional()?;
                                if let Some(to) = to {
                                    let subscription = Subscription::try_from(row).map_err(|e| {
                                        diesel::result::Error::DeserializationError(e.to_string().into())
                                    })?;
                                    let email = disable_email(service_name, &to, &subscription);
                                    diesel::insert_into(m::table)
                                        .values((
                                            m::id.eq(format!("eml_{}", id.as_str().trim_start_matches(NotificationId::PREFIX))),
                                            m::recipient.eq(&email.to),
                                            m::subject.eq(&email.subject),
                                            m::body.eq(&email.body),
                                            m::created_on.eq(finished.attempted_on),
                                            m::due_on.eq(finished.attempted_on),
                                        ))
                                        .execute(conn)
                                        .await?;
                                    recorded.email_queued = true;
                                }
                            }
                        }
                    }
                    Ok(recorded)
                })
                .await
                .map_err(query_error("notifications"))
            }

            async fn archive_deliveries(&self, before: OffsetDateTime) -> Result<u64, StoreError> {
                use crate::schema::$schema::notifications as n;
                let mut conn = self.conn().await?;
                let archived = diesel::update(
                    n::table
                        .filter(n::archived.eq(false))
                        .filter(n::attempted_on.lt(before)),
                )
                .set((
                    n::archived.eq(true),
                    n::request_body.eq(None::<String>),
                    n::response.eq(None::<String>),
                ))
                .execute(&mut conn)
                .await
                .map_err(query_error("notifications"))?;
                Ok(u64::try_from(archived).unwrap_or(0))
            }

            async fn resend(
                &self,
                platform: &PlatformId,
                id: &NotificationId,
                new_id: &NotificationId,
                now: OffsetDateTime,
            ) -> Result<Delivery, ResendError> {
                use crate::schema::$schema::{notifications as n, webhooks as w};
                let mut conn = self.conn().await?;
                let original = n::table
                    .filter(n::platform_id.eq(platform.as_str()))
                    .filter(n::id.eq(id.as_str()))
                    .first::<NotificationRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("notifications"))?
                    .ok_or(ResendError::NotFound)?;
                if !original
                    .event_type
                    .parse::<EventType>()
                    .is_ok_and(EventType::is_transaction)
                {
                    return Err(ResendError::NotTransaction);
                }
                if original.archived {
                    return Err(ResendError::Archived);
                }
                let active: bool = w::table
                    .filter(w::id.eq(&original.webhook_id))
                    .select(w::active)
                    .first(&mut conn)
                    .await
                    .map_err(query_error("webhooks"))?;
                if !active {
                    return Err(ResendError::Inactive);
                }
                let row = diesel::insert_into(n::table)
                    .values((
                        n::id.eq(new_id.as_str()),
                        n::webhook_id.eq(&original.webhook_id),
                        n::platform_id.eq(&original.platform_id),
                        n::mode.eq(&original.mode),
                        n::event_id.eq(&original.event_id),
                        n::event_type.eq(&original.event_type),
                        n::state.eq("pending"),
                        n::due_on.eq(now),
                        n::resent_from.eq(Some(id.as_str())),
                        n::created_on.eq(now),
                    ))
                    .get_result::<NotificationRow>(&mut conn)
                    .await
                    .map_err(query_error("notifications"))?;
                Ok(Delivery::try_from(row)?)
            }
        }

        #[async_trait::async_trait]
        impl holdfast_domain::ports::EmailOutbox for $store {
            async fn claim_emails(
                &self,
                now: OffsetDateTime,
                lease_until: OffsetDateTime,
                limit: u32,
            ) -> Result<Vec<QueuedEmail>, StoreError> {
                use crate::schema::$schema::emails as m;
                let mut conn = self.conn().await?;
                let rows: Vec<(String, String, String, String, i32)> = conn
                    .transaction::<_, diesel::result::Error, _>(async |conn| {
                        if let Some(lock) = <Self as crate::stores::Backend>::QUEUE_WRITE_LOCK {
                            diesel::sql_query(lock).execute(conn).await?;
                        }
                        let ids: Vec<String> = m::table
                            .select(m::id)
                            .filter(m::sent_on.is_null())
                            .filter(m::failed_on.is_null())
                            .filter(m::due_on.le(now))
                            .filter(m::lease_until.is_null().or(m::lease_until.le(now)))
                            .order(m::due_on.asc())
                            .limit(i64::from(limit))
                            $(.$lock())*
                            .load(conn)
                            .await?;
                        if ids.is_empty() {
                            return Ok(Vec::new());
                        }
                        diesel::update(m::table.filter(m::id.eq_any(&ids)))
                            .set(m::lease_until.eq(Some(lease_until)))
                            .execute(conn)
                            .await?;
                        m::table
                            .filter(m::id.eq_any(&ids))
                            .select((m::id, m::recipient, m::subject, m::body, m::attempts))
                            .load(conn)
                            .await
                    })
                    .await
                    .map_err(query_error("emails"))?;
                Ok(rows
                    .into_iter()
                    .map(|(id, to, subject, body, attempts)| QueuedEmail {
                        id,
                        email: OutgoingEmail { to, subject, body },
                        attempts: u32::try_from(attempts).unwrap_or(0),
                    })
                    .collect())
            }

            async fn email_sent(&self, id: &str, at: OffsetDateTime) -> Result<(), StoreError> {
                use crate::schema::$schema::emails as m;
                let mut conn = self.conn().await?;
                diesel::update(m::table.filter(m::id.eq(id)))
                    .set((m::sent_on.eq(Some(at)), m::lease_until.eq(None::<OffsetDateTime>), m::attempts.eq(m::attempts + 1)))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("emails"))
                    .and_then(expect_one_row)
            }

            async fn email_retry(
                &self,
                id: &str,
                error: &str,
                next_try: OffsetDateTime,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::emails as m;
                let mut conn = self.conn().await?;
                diesel::update(m::table.filter(m::id.eq(id)))
                    .set((
                        m::due_on.eq(next_try),
                        m::lease_until.eq(None::<OffsetDateTime>),
                        m::attempts.eq(m::attempts + 1),
                        m::last_error.eq(Some(error)),
                    ))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("emails"))
                    .and_then(expect_one_row)
            }

            async fn email_failed(
                &self,
                id: &str,
                error: &str,
                at: OffsetDateTime,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::emails as m;
                let mut conn = self.conn().await?;
                diesel::update(m::table.filter(m::id.eq(id)))
                    .set((
                        m::failed_on.eq(Some(at)),
                        m::lease_until.eq(None::<OffsetDateTime>),
                        m::attempts.eq(m::attempts + 1),
                        m::last_error.eq(Some(error)),
                    ))
                    .execute(&mut conn)
                    .await
                    .map_err(query_error("emails"))
                    .and_then(expect_one_row)
            }
        }
    };
}
