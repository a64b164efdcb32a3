//! `RoutingStore`: processor connections and plans.

use std::collections::HashMap;

use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{ConnectionId, PlanId};
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::payment::routing::{Plan, ProcessorConnection};
use holdfast_domain::ports::{RoutingStore, StoreError};
use holdfast_domain::scope::Scope;

use super::SqlStore;
use super::idempotency::{with_reply, write_reply};
use crate::conn::Conn;
use crate::error::query_error;
use crate::payment_rows::{
    ConnectionRow, NewConnectionRow, NewPlanRow, PlanRow, RouteRow, route_rows,
};
use crate::query::{load_page, load_rows_page, scoped};
use crate::schema::{plan_routes as r, plans as p, processor_connections as c};

pub async fn insert_connection(
    conn: &mut Conn,
    connection: &ProcessorConnection,
) -> QueryResult<()> {
    conn.execute(diesel::insert_into(c::table).values(NewConnectionRow::from(connection)))
        .await
        .map(drop)
}

/// The plan and its routes; in the caller's transaction when it has one (else the plan could be
/// read without its routes).
pub async fn insert_plan(conn: &mut Conn, plan: &Plan) -> QueryResult<()> {
    conn.execute(diesel::insert_into(p::table).values(NewPlanRow::from(plan)))
        .await?;
    // One statement per route: diesel has no multi-row insert for SQLite, and plans are
    // written rarely and have few routes.
    for route in route_rows(plan) {
        conn.execute(diesel::insert_into(r::table).values(route))
            .await?;
    }
    Ok(())
}

/// `rows` (a page of plans) with their routes, read in one query.
async fn with_routes(conn: &mut Conn, rows: Vec<PlanRow>) -> Result<Vec<Plan>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = rows.iter().map(|row| row.id.as_str()).collect();
    let routes: Vec<RouteRow> = conn
        .load(
            r::table
                .filter(r::plan_id.eq_any(&ids))
                .order((r::plan_id, r::position)),
        )
        .await
        .map_err(query_error("plan_routes"))?;
    let mut by_plan: HashMap<String, Vec<RouteRow>> = HashMap::new();
    for route in routes {
        by_plan
            .entry(route.plan_id.clone())
            .or_default()
            .push(route);
    }
    rows.into_iter()
        .map(|row| {
            let routes = by_plan.remove(&row.id).unwrap_or_default();
            row.with_routes(routes)
        })
        .collect()
}

#[async_trait::async_trait]
impl RoutingStore for SqlStore {
    async fn insert_connection(
        &self,
        connection: &ProcessorConnection,
        reply: Option<KeyedAnswer>,
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
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<ProcessorConnection>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(c::table, scope)
            .order(c::id.desc())
            .limit(page.fetch_count());
        load_page::<ConnectionRow, _, _, _, _, _, _>(
            &mut conn,
            "processor_connections",
            newest,
            page,
            |q, after| q.filter(c::id.lt(after)),
            |q, before| q.filter(c::id.gt(before)).order(c::id.asc()),
        )
        .await
    }

    async fn get_connection(
        &self,
        scope: &Scope,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<ConnectionRow, _>(scoped(c::table, scope).filter(c::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("processor_connections"))?
            .map(ProcessorConnection::try_from)
            .transpose()
    }

    async fn insert_plan(&self, plan: &Plan, reply: Option<KeyedAnswer>) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            insert_plan(conn, plan).await?;
            write_reply(conn, &plan.platform_id, plan.mode, reply.as_ref()).await
        })
        .await
        .map_err(query_error("plans.default"))
    }

    async fn list_plans(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<Plan>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(p::table, scope)
            .order(p::id.desc())
            .limit(page.fetch_count());
        let rows = load_rows_page::<PlanRow, _, _, _, _, _>(
            &mut conn,
            "plans",
            newest,
            page,
            |q, after| q.filter(p::id.lt(after)),
            |q, before| q.filter(p::id.gt(before)).order(p::id.asc()),
        )
        .await?;
        Ok(Page {
            data: with_routes(&mut conn, rows.data).await?,
            has_more: rows.has_more,
        })
    }

    async fn get_plan(&self, scope: &Scope, id: &PlanId) -> Result<Option<Plan>, StoreError> {
        let mut conn = self.conn().await?;
        // The plan and its routes in one read: a follow-up reads its original's plan.
        let rows: Vec<(PlanRow, Option<RouteRow>)> = conn
            .load(
                scoped(p::table, scope)
                    .filter(p::id.eq(id.as_str()))
                    .left_join(r::table.on(r::plan_id.eq(p::id)))
                    .order(r::position.asc())
                    .select((p::all_columns, r::all_columns.nullable())),
            )
            .await
            .map_err(query_error("plans"))?;
        let mut rows = rows.into_iter();
        let Some((plan, first)) = rows.next() else {
            return Ok(None);
        };
        let routes = first.into_iter().chain(rows.filter_map(|(_, route)| route));
        plan.with_routes(routes.collect()).map(Some)
    }
}
