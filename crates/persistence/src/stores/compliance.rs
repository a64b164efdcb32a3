//! `ComplianceStore`, and the insert of a new form that an approval makes in its own
//! transaction.

use diesel::prelude::*;
use holdfast_domain::boarding::OnboardingStatus;
use holdfast_domain::compliance::{Attestation, ComplianceForm, ComplianceStatus, RENEWED_AFTER};
use holdfast_domain::ids::{ComplianceFormId, EventId, MerchantId, PlatformId};
use holdfast_domain::merchant::Merchant;
use holdfast_domain::ports::{ComplianceStore, Event, EventData, StoreError};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::outbox::write_event_data;
use crate::conn::{Conn, Lock};
use crate::error::query_error;
use crate::query::scoped;
use crate::rows::parse;
use crate::schema::{compliance_forms as c, merchants as m};
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

/// Inserts a newly issued form with its `compliance.created`, in the caller's transaction,
/// unless the merchant already has a form issued less than a year before it, or after it
/// (another maintainer, whose clock said another instant, issued it); whether it was
/// inserted. Issuers take turns, so two never both find none.
pub(crate) async fn insert_issued(
    conn: &mut Conn,
    form: &ComplianceForm,
    event_id: &EventId,
) -> QueryResult<bool> {
    conn.lock(Lock::ComplianceIssue).await?;
    let this_year: i64 = conn
        .get_result(
            c::table
                .filter(c::merchant_id.eq(form.merchant_id.as_str()))
                .filter(c::platform_id.eq(form.platform_id.as_str()))
                .filter(c::mode.eq(form.mode.as_str()))
                .filter(
                    c::issued_on.gt(Instant(
                        form.issued_on
                            .checked_sub(RENEWED_AFTER)
                            .unwrap_or(holdfast_domain::instant::EARLIEST),
                    )),
                )
                .count(),
        )
        .await?;
    if this_year > 0 {
        return Ok(false);
    }
    let inserted = conn
        .execute(
            diesel::insert_into(c::table)
                .values(NewFormRow {
                    id: form.id.as_str(),
                    platform_id: form.platform_id.as_str(),
                    mode: form.mode.as_str(),
                    merchant_id: form.merchant_id.as_str(),
                    status: form.status.as_str(),
                    issued_on: form.issued_on,
                    due_on: form.due_on,
                })
                .on_conflict_do_nothing(),
        )
        .await?;
    if inserted == 0 {
        return Ok(false);
    }
    let data = EventData::ComplianceCreated(form.event());
    write_event_data(conn, &event(event_id, form, data, form.issued_on)).await?;
    Ok(true)
}

/// The columns a change of status writes: the status, and the attestation when there is one
/// (`None` fields are left as they are).
#[derive(Debug, AsChangeset)]
#[diesel(table_name = c)]
struct Change<'a> {
    status: &'static str,
    signer_name: Option<&'a str>,
    signer_title: Option<&'a str>,
    attested_on: Option<Instant>,
    attested_from: Option<String>,
    attested_saq: Option<&'static str>,
}

impl<'a> Change<'a> {
    fn of(form: &'a ComplianceForm) -> Self {
        let a = form.attestation.as_ref();
        Self {
            status: form.status.as_str(),
            signer_name: a.map(|a| a.name.as_str()),
            signer_title: a.map(|a| a.title.as_str()),
            attested_on: a.map(|a| Instant(a.on)),
            attested_from: a.and_then(|a| a.address).map(|ip| ip.to_string()),
            attested_saq: a.map(|a| a.saq_type.as_str()),
        }
    }
}

impl SqlStore {
    /// Writes `form`'s status (and attestation) while the stored one is one of `from`, with
    /// `compliance.updated` at `at`, in one transaction; whether it was written.
    async fn transition(
        &self,
        form: &ComplianceForm,
        from: &[ComplianceStatus],
        event_id: &EventId,
        at: OffsetDateTime,
    ) -> Result<bool, StoreError> {
        let from: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let changed = conn
                .execute(
                    diesel::update(
                        c::table
                            .filter(c::id.eq(form.id.as_str()))
                            .filter(c::status.eq_any(from)),
                    )
                    .set(Change::of(form)),
                )
                .await?;
            if changed == 0 {
                return Ok(false);
            }
            let data = EventData::ComplianceUpdated(form.event());
            write_event_data(conn, &event(event_id, form, data, at)).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("compliance_forms"))
    }
}

/// The form's merchant, approved and not deleted.
#[diesel::dsl::auto_type]
fn approved_merchant() -> _ {
    let approved: &'static str = OnboardingStatus::Approved.as_str();
    m::table
        .filter(m::id.eq(c::merchant_id))
        .filter(m::platform_id.eq(c::platform_id))
        .filter(m::mode.eq(c::mode))
        .filter(m::deleted_on.is_null())
        .filter(m::onboarding_status.eq(approved))
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
        self.transition(form, &[ComplianceStatus::Pending], event_id, form.due_on)
            .await
    }

    async fn renewable(
        &self,
        issued_before: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<ComplianceForm>, StoreError> {
        // A merchant's latest form: no form of the same merchant was issued after it.
        let newer = diesel::alias!(crate::schema::compliance_forms as newer);
        let later = newer
            .filter(newer.field(c::platform_id).eq(c::platform_id))
            .filter(newer.field(c::mode).eq(c::mode))
            .filter(newer.field(c::merchant_id).eq(c::merchant_id))
            .filter(newer.field(c::issued_on).gt(c::issued_on));
        let mut conn = self.conn().await?;
        let rows: Vec<FormRow> = conn
            .load(
                c::table
                    .filter(c::issued_on.le(Instant(issued_before)))
                    .filter(diesel::dsl::not(diesel::dsl::exists(later)))
                    .filter(diesel::dsl::exists(approved_merchant()))
                    .order(c::issued_on.asc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("compliance_forms"))?;
        convert(rows)
    }

    async fn issue_compliance(
        &self,
        form: &ComplianceForm,
        event_id: &EventId,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| insert_issued(conn, form, event_id).await)
            .await
            .map_err(query_error("compliance_forms"))
    }

    async fn unissued(&self, limit: u32) -> Result<Vec<Merchant>, StoreError> {
        let any_form = c::table
            .filter(c::merchant_id.eq(m::id))
            .filter(c::platform_id.eq(m::platform_id))
            .filter(c::mode.eq(m::mode));
        let mut conn = self.conn().await?;
        let rows: Vec<crate::rows::MerchantRow> = conn
            .load(
                m::table
                    .filter(m::deleted_on.is_null())
                    .filter(m::onboarding_status.eq(OnboardingStatus::Approved.as_str()))
                    .filter(diesel::dsl::not(diesel::dsl::exists(any_form)))
                    .order(m::id.asc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("merchants"))?;
        crate::rows::convert_all(rows)
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
        let open = [ComplianceStatus::Pending, ComplianceStatus::Overdue];
        self.transition(form, &open, event_id, a.on).await
    }
}
