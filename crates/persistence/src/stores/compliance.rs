//! `ComplianceStore`, and the insert of a new form that an approval makes in its own
//! transaction.

use diesel::prelude::*;
use holdfast_domain::compliance::{Attestation, ComplianceForm, ComplianceStatus};
use holdfast_domain::ids::{ComplianceFormId, EventId, MerchantId, PlatformId};
use holdfast_domain::ports::{ComplianceStore, Event, EventData, StoreError};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::outbox::write_event;
use crate::conn::Conn;
use crate::error::query_error;
use crate::query::scoped;
use crate::rows::parse;
use crate::schema::compliance_forms as c;
use crate::timestamp::Instant;

#[derive(Debug, Insertable)]
#[diesel(table_name = c, treat_none_as_default_value = false)]
struct NewFormRow<'a> {
    id: &'a str,
    platform_id: &'a str,
    mode: &'static str,
    merchant_id: &'a str,
    status: &'static str,
    #[diesel(serialize_as = Instant)]
    issued_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    due_on: OffsetDateTime,
}

#[derive(Debug, Queryable)]
struct FormRow {
    id: String,
    platform_id: String,
    mode: String,
    merchant_id: String,
    status: String,
    issued_on: OffsetDateTime,
    due_on: OffsetDateTime,
    signer_name: Option<String>,
    signer_title: Option<String>,
    attested_on: Option<OffsetDateTime>,
    attested_from: Option<String>,
    attested_saq: Option<String>,
}

impl TryFrom<FormRow> for ComplianceForm {
    type Error = StoreError;
    fn try_from(row: FormRow) -> Result<Self, StoreError> {
        let attestation = match (
            row.signer_name,
            row.signer_title,
            row.attested_on,
            row.attested_saq,
        ) {
            (Some(name), Some(title), Some(on), Some(saq)) => Some(Attestation {
                name,
                title,
                on,
                address: row
                    .attested_from
                    .as_deref()
                    .map(|a| parse("attestation address", a))
                    .transpose()?,
                saq_type: parse("SAQ type", &saq)?,
            }),
            _ => None,
        };
        Ok(Self {
            id: ComplianceFormId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            status: parse("compliance status", &row.status)?,
            issued_on: row.issued_on,
            due_on: row.due_on,
            attestation,
        })
    }
}

fn event(id: &EventId, form: &ComplianceForm, data: EventData, at: OffsetDateTime) -> Event {
    Event {
        id: id.clone(),
        platform_id: form.platform_id.clone(),
        mode: form.mode,
        data,
        created_on: at,
    }
}

async fn write(conn: &mut Conn, event: &Event) -> QueryResult<()> {
    let data = serde_json::to_string(&event.data)
        .map_err(|e| diesel::result::Error::SerializationError(Box::new(e)))?;
    write_event(conn, event, &data).await
}

/// Inserts a newly issued form with its `compliance.created`, in the caller's transaction.
pub(crate) async fn insert_issued(
    conn: &mut Conn,
    form: &ComplianceForm,
    event_id: &EventId,
) -> QueryResult<()> {
    conn.execute(diesel::insert_into(c::table).values(NewFormRow {
        id: form.id.as_str(),
        platform_id: form.platform_id.as_str(),
        mode: form.mode.as_str(),
        merchant_id: form.merchant_id.as_str(),
        status: form.status.as_str(),
        issued_on: form.issued_on,
        due_on: form.due_on,
    }))
    .await?;
    let data = EventData::ComplianceCreated(form.event());
    write(conn, &event(event_id, form, data, form.issued_on)).await
}

fn convert(rows: Vec<FormRow>) -> Result<Vec<ComplianceForm>, StoreError> {
    rows.into_iter().map(ComplianceForm::try_from).collect()
}

#[async_trait::async_trait]
impl ComplianceStore for SqlStore {
    async fn pending_due(
        &self,
        as_of: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ComplianceForm>, StoreError> {
        let mut conn = self.conn().await?;
        let rows: Vec<FormRow> = conn
            .load(
                c::table
                    .filter(c::status.eq(ComplianceStatus::Pending.as_str()))
                    .filter(c::due_on.le(Instant(as_of)))
                    .order(c::due_on.asc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("compliance_forms"))?;
        convert(rows)
    }

    async fn mark_overdue(
        &self,
        form: &ComplianceForm,
        event_id: &EventId,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let changed = conn
                .execute(
                    diesel::update(
                        c::table
                            .filter(c::id.eq(form.id.as_str()))
                            .filter(c::status.eq(ComplianceStatus::Pending.as_str())),
                    )
                    .set(c::status.eq(ComplianceStatus::Overdue.as_str())),
                )
                .await?;
            if changed == 0 {
                return Ok(false);
            }
            let data = EventData::ComplianceUpdated(form.event());
            write(conn, &event(event_id, form, data, form.due_on)).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("compliance_forms"))
    }

    async fn renewable(
        &self,
        issued_before: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ComplianceForm>, StoreError> {
        let mut conn = self.conn().await?;
        let old: Vec<FormRow> = conn
            .load(
                c::table
                    .filter(c::issued_on.le(Instant(issued_before)))
                    .order(c::issued_on.asc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("compliance_forms"))?;
        let mut latest = Vec::new();
        // Few a year per merchant: each old form is checked for a newer one of its merchant.
        for form in convert(old)? {
            let newer: i64 = conn
                .get_result(
                    c::table
                        .filter(c::platform_id.eq(form.platform_id.as_str()))
                        .filter(c::mode.eq(form.mode.as_str()))
                        .filter(c::merchant_id.eq(form.merchant_id.as_str()))
                        .filter(c::issued_on.gt(Instant(form.issued_on)))
                        .count(),
                )
                .await
                .map_err(query_error("compliance_forms"))?;
            if newer == 0 {
                latest.push(form);
            }
        }
        Ok(latest)
    }

    async fn issue_compliance(
        &self,
        form: &ComplianceForm,
        event_id: &EventId,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| insert_issued(conn, form, event_id).await)
            .await
            .map_err(query_error("compliance_forms"))
    }

    async fn current_compliance(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<ComplianceForm>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<FormRow, _>(
            scoped(c::table, scope)
                .filter(c::merchant_id.eq(merchant.as_str()))
                .order((c::issued_on.desc(), c::id.desc())),
        )
        .await
        .optional()
        .map_err(query_error("compliance_forms"))?
        .map(ComplianceForm::try_from)
        .transpose()
    }

    async fn attest_compliance(
        &self,
        form: &ComplianceForm,
        event_id: &EventId,
    ) -> Result<bool, StoreError> {
        let Some(a) = &form.attestation else {
            return Err(StoreError::Unexpected(
                "an attestation without its signer".into(),
            ));
        };
        let open = [
            ComplianceStatus::Pending.as_str(),
            ComplianceStatus::Overdue.as_str(),
        ];
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let changed = conn
                .execute(
                    diesel::update(
                        c::table
                            .filter(c::id.eq(form.id.as_str()))
                            .filter(c::status.eq_any(open)),
                    )
                    .set((
                        c::status.eq(ComplianceStatus::Attested.as_str()),
                        c::signer_name.eq(Some(a.name.as_str())),
                        c::signer_title.eq(Some(a.title.as_str())),
                        c::attested_on.eq(Some(Instant(a.on))),
                        c::attested_from.eq(a.address.map(|ip| ip.to_string())),
                        c::attested_saq.eq(Some(a.saq_type.as_str())),
                    )),
                )
                .await?;
            if changed == 0 {
                return Ok(false);
            }
            let data = EventData::ComplianceUpdated(form.event());
            write(conn, &event(event_id, form, data, a.on)).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("compliance_forms"))
    }
}
