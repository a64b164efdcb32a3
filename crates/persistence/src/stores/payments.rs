//! `PaymentStore`, written once for both backends (but for the completion: `completion.rs`).

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
            async fn insert_connection(
                &self,
                c: &ProcessorConnection,
                reply: Option<KeyedResponse>,
            ) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                with_reply!(
                    $schema,
                    conn,
                    c.platform_id,
                    c.mode,
                    reply,
                    Self::insert_connection_on(conn, c)
                )
                .map_err(query_error("processor_connections"))
            }

            async fn list_connections(
                &self,
                platform: &PlatformId,
                mode: Mode,
                page: &PageRequest,
            ) -> Result<Page<ProcessorConnection>, StoreError> {
                use crate::schema::$schema::processor_connections as t;
                let mut conn = self.conn().await?;
                let query = newest_first!(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str())),
                    t::id,
                    page
                );
                let rows = query
                    .load::<ConnectionRow>(&mut conn)
                    .await
                    .map_err(query_error("processor_connections"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
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

            async fn insert_plan(
                &self,
                plan: &Plan,
                reply: Option<KeyedResponse>,
            ) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                with_reply!(
                    $schema,
                    conn,
                    plan.platform_id,
                    plan.mode,
                    reply,
                    Self::insert_plan_on(conn, plan)
                )
                .map_err(query_error("plans.default"))
            }

            async fn list_plans(
                &self,
                platform: &PlatformId,
                mode: Mode,
                page: &PageRequest,
            ) -> Result<Page<Plan>, StoreError> {
                use crate::schema::$schema::plans as t;
                let mut conn = self.conn().await?;
                let query = newest_first!(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str())),
                    t::id,
                    page
                );
                let rows = query
                    .load::<PlanRow>(&mut conn)
                    .await
                    .map_err(query_error("plans"))?;
                Ok(Page::from_overfetch(convert_all(rows)?, page))
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

            async fn payment_setup(
                &self,
                platform: &PlatformId,
                mode: Mode,
                merchant: &MerchantId,
            ) -> Result<Option<PaymentSetup>, StoreError> {
                use crate::schema::$schema::{
                    merchants as m, plans as p, processor_connections as c,
                };
                let plan_of_merchant = p::platform_id
                    .eq(m::platform_id)
                    .and(p::mode.eq(m::mode))
                    .and(
                        m::plan_id
                            .eq(p::id.nullable())
                            .or(m::plan_id.is_null().and(p::is_default)),
                    );
                // The connections the plan names: its default, a brand route or a fallback.
                // Matching inside the plan's text lists may also take one it does not name
                // (`_` is a wildcard, ids could nest); that only reads a row `Plan::route` then
                // leaves out, never misses one. (Built from the DSL, not raw SQL, so that the
                // statement is prepared once per connection.)
                let mentions = |id| {
                    "%".into_sql::<diesel::sql_types::Text>()
                        .concat(id)
                        .concat("%")
                };
                let connection_of_plan = c::platform_id
                    .eq(m::platform_id)
                    .and(c::mode.eq(m::mode))
                    .and(
                        c::id
                            .eq(p::default_connection_id)
                            .or(p::brand_routes.like(mentions(c::id)))
                            .or(p::fallbacks.like(mentions(c::id))),
                    );
                let mut conn = self.conn().await?;
                let rows: Vec<(MerchantRow, Option<PlanRow>, Option<ConnectionRow>)> = m::table
                    .left_join(p::table.on(plan_of_merchant))
                    .left_join(c::table.on(connection_of_plan))
                    .filter(m::platform_id.eq(platform.as_str()))
                    .filter(m::mode.eq(mode.as_str()))
                    .filter(m::id.eq(merchant.as_str()))
                    .filter(m::deleted_on.is_null())
                    .select((
                        m::all_columns,
                        p::all_columns.nullable(),
                        c::all_columns.nullable(),
                    ))
                    .load(&mut conn)
                    .await
                    .map_err(query_error("merchants"))?;
                let mut rows = rows.into_iter();
                let Some((merchant, plan, first)) = rows.next() else {
                    return Ok(None);
                };
                let connections = first
                    .into_iter()
                    .chain(rows.filter_map(|(_, _, c)| c))
                    .map(ProcessorConnection::try_from)
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Some(PaymentSetup {
                    merchant: Merchant::try_from(merchant)?,
                    plan: plan.map(Plan::try_from).transpose()?,
                    connections,
                }))
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
                reply: Option<KeyedResponse>,
            ) -> Result<(), StoreError> {
                // The processor has answered: this write waits its turn (up to the completion
                // wait) for a connection and, on SQLite, for another process's write lock,
                // rather than answer 500 for a payment that was made. Trying again is safe:
                // only a row still pending is ever completed.
                const BUSY_PAUSE: std::time::Duration = std::time::Duration::from_millis(25);
                let data = serde_json::to_string(&event.data).map_err(unexpected)?;
                let deadline = tokio::time::Instant::now() + self.completion_wait;
                loop {
                    let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                    let mut conn = self.conn_within(left).await?;
                    let done = Self::complete_on(
                        &mut conn,
                        x,
                        original.as_ref(),
                        event,
                        &data,
                        reply.as_ref(),
                    )
                    .await;
                    match done {
                        Err(e)
                            if crate::error::is_busy(&e)
                                && tokio::time::Instant::now() + BUSY_PAUSE < deadline =>
                        {
                            drop(conn);
                            tracing::warn!("database busy; the completion waits its turn");
                            tokio::time::sleep(BUSY_PAUSE).await;
                        }
                        done => return done.map_err(query_error("transactions")),
                    }
                }
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
                let mut query = newest_first!(
                    t::table
                        .filter(t::platform_id.eq(platform.as_str()))
                        .filter(t::mode.eq(mode.as_str())),
                    t::id,
                    page
                );
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
