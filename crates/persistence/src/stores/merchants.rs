//! `MerchantStore`: each change is written with the `merchant.*` event that reports it.

use diesel::dsl::{Eq, Filter, IsNull};
use diesel::prelude::*;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{EventId, MerchantId, PlanId};
use holdfast_domain::merchant::{Currency, Merchant, MerchantName, MerchantPatch};
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{Deleted, Event, EventData, MerchantStore, StoreError};
use holdfast_domain::scope::Scope;
use holdfast_domain::user::Email;
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::write_reply;
use super::outbox::{write_event, write_event_data};
use crate::error::{query_error, unexpected};
use crate::query::{ScopeFilter, load_page, scoped};
use crate::rows::{MerchantRow, NewMerchantRow, metadata_column};
use crate::schema::merchants as t;
use crate::timestamp::Instant;

/// A `merchant.*` event of `merchant`'s platform and mode.
fn merchant_event(id: &EventId, merchant: &Merchant, data: EventData, at: OffsetDateTime) -> Event {
    Event {
        id: id.clone(),
        platform_id: merchant.platform_id.clone(),
        mode: merchant.mode,
        data,
        created_on: at,
    }
}

/// The columns a patch sends, and only those: a concurrent patch of other fields survives.
#[derive(Debug, AsChangeset)]
#[expect(
    clippy::option_option,
    reason = "diesel's changeset: `None` leaves the column, `Some(None)` sets it NULL"
)]
#[diesel(table_name = t)]
struct PatchRow<'a> {
    name: Option<&'a str>,
    currency: Option<&'a str>,
    email: Option<Option<&'a str>>,
    plan_id: Option<Option<&'a str>>,
    metadata: Option<String>,
    #[diesel(serialize_as = Instant)]
    updated_on: OffsetDateTime,
}

impl<'a> PatchRow<'a> {
    fn of(patch: &'a MerchantPatch, at: OffsetDateTime) -> Self {
        Self {
            name: patch.name.as_ref().map(MerchantName::as_str),
            currency: patch.currency.as_ref().map(Currency::as_str),
            email: patch.email.as_ref().map(|e| e.as_ref().map(Email::as_str)),
            plan_id: patch
                .plan_id
                .as_ref()
                .map(|p| p.as_ref().map(PlanId::as_str)),
            metadata: patch.metadata.as_ref().map(metadata_column),
            updated_on: at,
        }
    }
}

/// The live (not deleted) merchant `id` in `scope`.
type Live<'a> = Filter<
    Filter<Filter<t::table, ScopeFilter<'a, t::table>>, Eq<t::id, &'a str>>,
    IsNull<t::deleted_on>,
>;

fn live<'a>(scope: &'a Scope, id: &'a MerchantId) -> Live<'a> {
    scoped(t::table, scope)
        .filter(t::id.eq(id.as_str()))
        .filter(t::deleted_on.is_null())
}

fn serialised(event: &Event) -> Result<String, serde_json::Error> {
    serde_json::to_string(&event.data)
}

#[async_trait::async_trait]
impl MerchantStore for SqlStore {
    async fn insert_merchant_with_event(
        &self,
        m: &Merchant,
        event: &EventId,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError> {
        let data = EventData::MerchantCreated(Box::new(m.clone()));
        let event = merchant_event(event, m, data, m.created_on);
        let data = serialised(&event).map_err(unexpected)?;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            conn.execute(diesel::insert_into(t::table).values(NewMerchantRow::from(m)))
                .await?;
            write_event(conn, &event, &data).await?;
            write_reply(conn, &m.platform_id, m.mode, reply.as_ref()).await
        })
        .await
        .map_err(query_error("merchants"))
    }

    async fn get_merchant(
        &self,
        scope: &Scope,
        id: &MerchantId,
    ) -> Result<Option<Merchant>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<MerchantRow, _>(live(scope, id))
            .await
            .optional()
            .map_err(query_error("merchants"))?
            .map(Merchant::try_from)
            .transpose()
    }

    async fn list_merchants(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<Merchant>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(t::table, scope)
            .filter(t::deleted_on.is_null())
            .order(t::id.desc())
            .limit(page.fetch_count());
        load_page::<MerchantRow, _, _, _, _, _, _>(
            &mut conn,
            "merchants",
            newest,
            page,
            |q, after| q.filter(t::id.lt(after)),
            |q, before| q.filter(t::id.gt(before)).order(t::id.asc()),
        )
        .await
    }

    async fn update_merchant_with_event(
        &self,
        scope: &Scope,
        id: &MerchantId,
        patch: &MerchantPatch,
        at: OffsetDateTime,
        event: &EventId,
    ) -> Result<Merchant, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let row: MerchantRow = conn
                .get_result(diesel::update(live(scope, id)).set(PatchRow::of(patch, at)))
                .await?;
            let corrupt =
                |e: StoreError| diesel::result::Error::DeserializationError(e.to_string().into());
            let merchant = Merchant::try_from(row).map_err(corrupt)?;
            let data = EventData::MerchantUpdated(Box::new(merchant.clone()));
            let event = merchant_event(event, &merchant, data, at);
            write_event_data(conn, &event).await?;
            Ok(merchant)
        })
        .await
        .map_err(query_error("merchants"))
    }

    async fn delete_merchant_with_event(
        &self,
        scope: &Scope,
        id: &MerchantId,
        at: OffsetDateTime,
        event: &EventId,
    ) -> Result<(), StoreError> {
        let event = Event {
            id: event.clone(),
            platform_id: scope.platform.clone(),
            mode: scope.mode,
            data: EventData::MerchantDeleted(Deleted {
                id: id.to_string(),
                deleted: true,
            }),
            created_on: at,
        };
        let data = serialised(&event).map_err(unexpected)?;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let deleted = conn
                .execute(diesel::update(live(scope, id)).set(t::deleted_on.eq(Some(at))))
                .await?;
            if deleted == 0 {
                // Nothing deleted, nothing to report (and the transaction rolls back).
                return Err(diesel::result::Error::NotFound);
            }
            write_event(conn, &event, &data).await
        })
        .await
        .map_err(query_error("merchants"))
    }
}
