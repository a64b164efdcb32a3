//! `PaymentStore`, written once for both backends.

macro_rules! payment_store {
    ($store:ident, $schema:ident) => {
        impl $store {
            async fn insert_connection_on(
                conn: &mut <Self as crate::stores::Backend>::Conn,
                c: &ProcessorConnection,
            ) -> diesel::QueryResult<()> {
                use crate::schema::$schema::processor_connections as t;
                diesel::insert_into(t::table)
                    .values((
                        t::id.eq(c.id.as_str()),
                        t::platform_id.eq(c.platform_id.as_str()),
                        t::mode.eq(c.mode.as_str()),
                        t::name.eq(&c.name),
                        t::kind.eq(c.kind.as_str()),
                        t::created_on.eq(c.created_on),
                    ))
                    .execute(conn)
                    .await
                    .map(drop)
            }

            async fn insert_pending_on(
                conn: &mut <Self as crate::stores::Backend>::Conn,
                x: &Transaction,
            ) -> diesel::QueryResult<()> {
                use crate::schema::$schema::transactions as t;
                let a = &x.authorization;
                diesel::insert_into(t::table)
                    .values((
                        (
                            t::id.eq(x.id.as_str()),
                            t::platform_id.eq(x.platform_id.as_str()),
                            t::mode.eq(x.mode.as_str()),
                            t::merchant_id.eq(x.merchant_id.as_str()),
                            t::kind.eq(x.kind.as_str()),
                            t::state.eq(x.state.as_str()),
                            t::amount.eq(x.amount),
                            t::currency.eq(x.currency.as_str()),
                            t::fee.eq(x.fee),
                            t::created_on.eq(x.created_on),
                            t::bin.eq(&x.payment.bin),
                            t::brand.eq(x.payment.brand.as_str()),
                            t::last4.eq(&x.payment.last4),
                            t::funding.eq(x.payment.funding.as_str()),
                        ),
                        (
                            t::plan_id.eq(x.plan.id.as_str()),
                            t::plan_name.eq(&x.plan.name),
                            t::connection_id.eq(x.processor.id.as_str()),
                            t::connection_name.eq(&x.processor.name),
                            t::approved_amount.eq(a.approved_amount),
                            t::avs.eq(a.avs.as_str()),
                            t::cvv.eq(a.cvv.as_str()),
                            t::partial.eq(a.partial),
                            t::processor_code.eq(&a.processor_code),
                            t::processor_message.eq(&a.processor_message),
                            t::processor_transaction_id.eq(&a.processor_transaction_id),
                            t::status.eq(a.status.as_str()),
                            t::parent_id.eq(x.parent_id.as_ref().map(TxnId::as_str)),
                            t::refunded_amount.eq(x.refunded_amount),
                        ),
                    ))
                    .execute(conn)
                    .await
                    .map(drop)
            }

            async fn insert_plan_on(
                conn: &mut <Self as crate::stores::Backend>::Conn,
                p: &Plan,
            ) -> diesel::QueryResult<()> {
                use crate::schema::$schema::plans as t;
                diesel::insert_into(t::table)
                    .values((
                        t::id.eq(p.id.as_str()),
                        t::platform_id.eq(p.platform_id.as_str()),
                        t::mode.eq(p.mode.as_str()),
                        t::name.eq(&p.name),
                        t::fee_basis_points.eq(i64::from(p.fee.basis_points())),
                        t::fee_fixed.eq(p.fee.fixed()),
                        t::default_connection_id.eq(p.default_connection.as_str()),
                        t::brand_routes.eq(encode_routes(&p.brand_routes)),
                        t::fallbacks.eq(encode_ids(&p.fallbacks)),
                        t::is_default.eq(p.is_default),
                        t::created_on.eq(p.created_on),
                    ))
                    .execute(conn)
                    .await
                    .map(drop)
            }
        }

        #[async_trait::async_trait]
        impl holdfast_domain::ports::PaymentStore for $store {
            async fn insert_connection(&self, c: &ProcessorConnection) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                Self::insert_connection_on(&mut conn, c)
                    .await
                    .map_err(query_error("processor_connections"))
            }

            async fn list_connections(
                &self,
                platform: &PlatformId,
                mode: Mode,
            ) -> Result<Vec<ProcessorConnection>, StoreError> {
                use crate::schema::$schema::processor_connections as t;
                let mut conn = self.conn().await?;
                let rows = t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .order(t::id.asc())
                    .load::<ConnectionRow>(&mut conn)
                    .await
                    .map_err(query_error("processor_connections"))?;
                convert_all(rows)
            }

            async fn get_connection(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &ConnectionId,
            ) -> Result<Option<ProcessorConnection>, StoreError> {
                use crate::schema::$schema::processor_connections as t;
                let mut conn = self.conn().await?;
                t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::id.eq(id.as_str()))
                    .first::<ConnectionRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("processor_connections"))?
                    .map(ProcessorConnection::try_from)
                    .transpose()
            }

            async fn insert_plan(&self, plan: &Plan) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                Self::insert_plan_on(&mut conn, plan)
                    .await
                    .map_err(query_error("plans.default"))
            }

            async fn list_plans(
                &self,
                platform: &PlatformId,
                mode: Mode,
            ) -> Result<Vec<Plan>, StoreError> {
                use crate::schema::$schema::plans as t;
                let mut conn = self.conn().await?;
                let rows = t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .order(t::id.asc())
                    .load::<PlanRow>(&mut conn)
                    .await
                    .map_err(query_error("plans"))?;
                convert_all(rows)
            }

            async fn get_plan(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &PlanId,
            ) -> Result<Option<Plan>, StoreError> {
                use crate::schema::$schema::plans as t;
                let mut conn = self.conn().await?;
                t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::id.eq(id.as_str()))
                    .first::<PlanRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("plans"))?
                    .map(Plan::try_from)
                    .transpose()
            }

            async fn default_plan(
                &self,
                platform: &PlatformId,
                mode: Mode,
            ) -> Result<Option<Plan>, StoreError> {
                use crate::schema::$schema::plans as t;
                let mut conn = self.conn().await?;
                t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::is_default.eq(true))
                    .first::<PlanRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("plans"))?
                    .map(Plan::try_from)
                    .transpose()
            }

            async fn insert_pending_transaction(&self, x: &Transaction) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                Self::insert_pending_on(&mut conn, x)
                    .await
                    .map_err(query_error("transactions"))
            }

            #[tracing::instrument(skip_all, fields(transaction = %x.id), err)]
            async fn complete_transaction_with_event(
                &self,
                x: &Transaction,
                original: Option<(TxnId, OriginalOutcome)>,
                event: &Event,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::transactions as t;
                let data = serde_json::to_string(&event.data).map_err(unexpected)?;
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    let a = &x.authorization;
                    // Only a pending row is completed: of the request that made it and the
                    // reconciliation that found it stale, the first to finish decides.
                    let n = diesel::update(
                        t::table
                            .filter(t::id.eq(x.id.as_str()))
                            .filter(t::state.eq(TxnState::Pending.as_str())),
                    )
                    .set((
                        t::state.eq(x.state.as_str()),
                        t::fee.eq(x.fee),
                        t::connection_id.eq(x.processor.id.as_str()),
                        t::connection_name.eq(&x.processor.name),
                        t::approved_amount.eq(a.approved_amount),
                        t::avs.eq(a.avs.as_str()),
                        t::cvv.eq(a.cvv.as_str()),
                        t::partial.eq(a.partial),
                        t::processor_code.eq(&a.processor_code),
                        t::processor_message.eq(&a.processor_message),
                        t::processor_transaction_id.eq(&a.processor_transaction_id),
                        t::status.eq(a.status.as_str()),
                    ))
                    .execute(conn)
                    .await?;
                    if n != 1 {
                        return Err(diesel::result::Error::NotFound);
                    }
                    if let Some((id, outcome)) = &original {
                        let row = t::table.filter(t::id.eq(id.as_str()));
                        let closing = TxnState::Closing.as_str();
                        let n = match outcome {
                            OriginalOutcome::Closed(state) => {
                                diesel::update(row.filter(t::state.eq(closing)))
                                    .set(t::state.eq(state.as_str()))
                                    .execute(conn)
                                    .await?
                            }
                            OriginalOutcome::Reopened => {
                                diesel::update(row.filter(t::state.eq(closing)))
                                    .set(t::state.eq(TxnState::Authorized.as_str()))
                                    .execute(conn)
                                    .await?
                            }
                            OriginalOutcome::RefundKept => 1,
                            OriginalOutcome::RefundReleased { amount } => {
                                diesel::update(row)
                                    .set(t::refunded_amount.eq(t::refunded_amount - *amount))
                                    .execute(conn)
                                    .await?
                            }
                        };
                        if n != 1 {
                            return Err(diesel::result::Error::NotFound);
                        }
                    }
                    write_event!($schema, conn, event, &data)?;
                    Ok(())
                })
                .await
                .map_err(query_error("transactions"))
            }

            async fn reserve_with_pending(
                &self,
                platform: &PlatformId,
                mode: Mode,
                original: &TxnId,
                reservation: Reservation,
                pending: &Transaction,
            ) -> Result<bool, StoreError> {
                use crate::schema::$schema::transactions as t;
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    let row = t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str()))
                        .filter(t::id.eq(original.as_str()));
                    // One conditional UPDATE: the database decides which concurrent claim wins.
                    let n = match reservation {
                        Reservation::CloseAuth => {
                            diesel::update(
                                row.filter(t::kind.eq(TxnType::Auth.as_str()))
                                    .filter(t::state.eq(TxnState::Authorized.as_str())),
                            )
                            .set(t::state.eq(TxnState::Closing.as_str()))
                            .execute(conn)
                            .await?
                        }
                        Reservation::Refund { amount } => {
                            diesel::update(
                                row.filter(t::state.eq(TxnState::Settled.as_str()))
                                    .filter(t::kind.eq_any([
                                        TxnType::Sale.as_str(),
                                        TxnType::Capture.as_str(),
                                    ]))
                                    .filter((t::refunded_amount + amount).le(t::approved_amount)),
                            )
                            .set(t::refunded_amount.eq(t::refunded_amount + amount))
                            .execute(conn)
                            .await?
                        }
                    };
                    if n != 1 {
                        return Ok(false);
                    }
                    Self::insert_pending_on(conn, pending).await?;
                    Ok(true)
                })
                .await
                .map_err(query_error("transactions"))
            }

            async fn get_transaction(
                &self,
                platform: &PlatformId,
                mode: Mode,
                id: &TxnId,
            ) -> Result<Option<Transaction>, StoreError> {
                use crate::schema::$schema::transactions as t;
                let mut conn = self.conn().await?;
                t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .filter(t::id.eq(id.as_str()))
                    .first::<TxnRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("transactions"))?
                    .map(Transaction::try_from)
                    .transpose()
            }

            async fn stale_pending(
                &self,
                before: OffsetDateTime,
                limit: u32,
            ) -> Result<Vec<Transaction>, StoreError> {
                use crate::schema::$schema::transactions as t;
                let mut conn = self.conn().await?;
                let rows = t::table
                    .filter(t::state.eq(TxnState::Pending.as_str()))
                    .filter(t::created_on.lt(before))
                    .order(t::created_on.asc())
                    .limit(i64::from(limit))
                    .load::<TxnRow>(&mut conn)
                    .await
                    .map_err(query_error("transactions"))?;
                convert_all(rows)
            }

            async fn list_transactions(
                &self,
                platform: &PlatformId,
                mode: Mode,
                filter: &TxnFilter,
                page: &PageRequest,
            ) -> Result<Page<Transaction>, StoreError> {
                use crate::schema::$schema::transactions as t;
                let mut conn = self.conn().await?;
                let mut query = t::table
                    .filter(t::platform_id.eq(platform.as_str()))
                    .filter(t::mode.eq(mode.as_str()))
                    .order(t::id.desc())
                    .limit(page.fetch_count())
                    .into_boxed();
                if let Some(cursor) = &page.starting_after {
                    query = query.filter(t::id.lt(cursor.as_str()));
                }
                if let Some(merchant) = &filter.merchant_id {
                    query = query.filter(t::merchant_id.eq(merchant.as_str()));
                }
                if let Some(kind) = filter.kind {
                    query = query.filter(t::kind.eq(kind.as_str()));
                }
                if let Some(from) = filter.created_from {
                    query = query.filter(t::created_on.ge(from));
                }
                if let Some(until) = filter.created_until {
                    query = query.filter(t::created_on.lt(until));
                }
                let rows = query
                    .load::<TxnRow>(&mut conn)
                    .await
                    .map_err(query_error("transactions"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
            }

            async fn list_events(
                &self,
                platform: &PlatformId,
                mode: Mode,
            ) -> Result<Vec<StoredEvent>, StoreError> {
                use crate::schema::$schema::events as e;
                let mut conn = self.conn().await?;
                let rows = e::table
                    .filter(e::platform_id.eq(platform.as_str()))
                    .filter(e::mode.eq(mode.as_str()))
                    .order(e::id.asc())
                    .load::<EventRow>(&mut conn)
                    .await
                    .map_err(query_error("events"))?;
                Ok(rows.into_iter().map(StoredEvent::from).collect())
            }
        }
    };
}
