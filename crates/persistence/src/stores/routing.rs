//! `RoutingStore`: processor connections and plans.

use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedResponse;
use holdfast_domain::ids::{ConnectionId, PlanId, PlatformId};
use holdfast_domain::mode::Mode;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::payment::routing::{Plan, ProcessorConnection};
use holdfast_domain::ports::{RoutingStore, StoreError};

use super::SqlStore;
use super::idempotency::with_reply;
use crate::conn::Conn;
use crate::error::query_error;
use crate::payment_rows::{ConnectionRow, NewConnectionRow, NewPlanRow, PlanRow};
use crate::query::{load_page, scoped};
use crate::schema::{plans as p, processor_connections as c};

pub async fn insert_connection(
    conn: &mut Conn,
    connection: &ProcessorConnection,
) -> QueryResult<()> {
    conn.execute(diesel::insert_into(c::table).values(NewConnectionRow::from(connection)))
        .await
        .map(drop)
}

pub async fn insert_plan(conn: &mut Conn, plan: &Plan) -> QueryResult<()> {
    conn.execute(diesel::insert_into(p::table).values(NewPlanRow::from(plan)))
        .await
        .map(drop)
}

#[async_trait::async_trait]
impl RoutingStore for SqlStore {
    async fn insert_connection(
        &self,
        connection: &ProcessorConnection,
        reply: Option<KeyedResponse>,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        with_reply(
            &mut conn,
            &connection.platform_id,
            connection.mode,
            reply.as_ref(),
            async |conn| insert_connection(conn, connection).await,
        )
        .await
        .map_err(query_error("processor_connections"))
    }

    async fn list_connections(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<ProcessorConnection>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(c::table, platform, mode)
            .order(c::id.desc())
            .limit(page.fetch_count());
        load_page::<ConnectionRow, _, _, _>(
            &mut conn,
            "processor_connections",
            newest,
            page,
            |q, after| q.filter(c::id.lt(after)),
        )
        .await
    }

    async fn get_connection(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<ConnectionRow, _>(
            scoped(c::table, platform, mode).filter(c::id.eq(id.as_str())),
        )
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
        with_reply(
            &mut conn,
            &plan.platform_id,
            plan.mode,
            reply.as_ref(),
            async |conn| insert_plan(conn, plan).await,
        )
        .await
        .map_err(query_error("plans.default"))
    }

    async fn list_plans(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<Plan>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(p::table, platform, mode)
            .order(p::id.desc())
            .limit(page.fetch_count());
        load_page::<PlanRow, _, _, _>(&mut conn, "plans", newest, page, |q, after| {
            q.filter(p::id.lt(after))
        })
        .await
    }

    async fn get_plan(
        &self,
        platform: &PlatformId,
        mode: Mode,
        id: &PlanId,
    ) -> Result<Option<Plan>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<PlanRow, _>(scoped(p::table, platform, mode).filter(p::id.eq(id.as_str())))
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
        let mut conn = self.conn().await?;
        conn.first::<PlanRow, _>(scoped(p::table, platform, mode).filter(p::is_default.eq(true)))
            .await
            .optional()
            .map_err(query_error("plans"))?
            .map(Plan::try_from)
            .transpose()
    }
}
