//! `AuditLog`: appended to, never updated.

use diesel::prelude::*;
use holdfast_domain::audit::{Actor, AuditEntry, Who};
use holdfast_domain::ids::PlatformId;
use holdfast_domain::mode::Mode;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{AuditLog, StoreError};
use time::OffsetDateTime;

use super::SqlStore;
use crate::error::query_error;
use crate::query::load_page;
use crate::rows::parse;
use crate::schema::audit_log as a;
use crate::timestamp::Instant;

#[derive(Debug, Insertable)]
#[diesel(table_name = a, treat_none_as_default_value = false)]
struct NewEntryRow<'a> {
    id: &'a str,
    platform_id: &'a str,
    mode: Option<&'static str>,
    actor: &'a str,
    door: &'static str,
    action: &'static str,
    target: &'a str,
    address: Option<String>,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
}

#[derive(Debug, Queryable)]
struct EntryRow {
    id: String,
    platform_id: String,
    mode: Option<String>,
    actor: String,
    door: String,
    action: String,
    target: String,
    address: Option<String>,
    created_on: OffsetDateTime,
}

impl TryFrom<EntryRow> for AuditEntry {
    type Error = StoreError;
    fn try_from(row: EntryRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: row.id,
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: row
                .mode
                .as_deref()
                .map(|m| parse("audit mode", m))
                .transpose()?,
            actor: Actor {
                who: Who::from_stored(row.actor),
                door: parse("audit door", &row.door)?,
                address: row
                    .address
                    .as_deref()
                    .map(|a| parse("audit address", a))
                    .transpose()?,
            },
            action: parse("audit action", &row.action)?,
            target: row.target,
            created_on: row.created_on,
        })
    }
}

#[async_trait::async_trait]
impl AuditLog for SqlStore {
    async fn record(&self, entry: &AuditEntry) -> Result<(), StoreError> {
        let row = NewEntryRow {
            id: &entry.id,
            platform_id: entry.platform_id.as_str(),
            mode: entry.mode.map(Mode::as_str),
            actor: entry.actor.who.as_str(),
            door: entry.actor.door.as_str(),
            action: entry.action.as_str(),
            target: &entry.target,
            address: entry.actor.address.map(|a| a.to_string()),
            created_on: entry.created_on,
        };
        let mut conn = self.conn().await?;
        conn.execute(diesel::insert_into(a::table).values(row))
            .await
            .map(drop)
            .map_err(query_error("audit_log"))
    }

    async fn list_audit(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<AuditEntry>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = a::table
            .filter(a::platform_id.eq(platform.as_str()))
            .filter(a::mode.eq(mode.as_str()).or(a::mode.is_null()))
            .order(a::id.desc())
            .limit(page.fetch_count());
        load_page::<EntryRow, _, _, _, _, _, _>(
            &mut conn,
            "audit_log",
            newest,
            page,
            |q, after| q.filter(a::id.lt(after)),
            |q, before| q.filter(a::id.gt(before)).order(a::id.asc()),
        )
        .await
    }
}
