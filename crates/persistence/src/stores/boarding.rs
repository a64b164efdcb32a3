//! `BoardingStore`: a form written whole, with the merchant and events its change brings, in
//! one transaction.

use diesel::prelude::*;
use holdfast_domain::api_key::KeyHash;
use holdfast_domain::boarding::OnboardingStatus;
use holdfast_domain::boarding::form::{BoardingForm, FormStatus, SealedValue, Submission};
use holdfast_domain::ids::{BoardingFormId, EventId, MerchantId, PlatformId};
use holdfast_domain::merchant::Merchant;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{
    BoardingStore, Event, EventData, FormWrite, Guard, Sealed, StoreError,
};
use holdfast_domain::scope::Scope;
use time::OffsetDateTime;

use super::SqlStore;
use super::idempotency::write_reply;
use super::outbox::write_event_data;
use crate::conn::Conn;
use crate::error::query_error;
use crate::query::{load_page, scoped};
use crate::rows::{MerchantRow, NewMerchantRow, corrupt, parse, stored_hash};
use crate::schema::{boarding_forms as f, merchants as m};
use crate::timestamp::Instant;

#[derive(Debug, Insertable, AsChangeset)]
#[diesel(table_name = f, treat_none_as_default_value = false, treat_none_as_null = true)]
struct FormRow<'a> {
    id: &'a str,
    platform_id: &'a str,
    mode: &'static str,
    merchant_id: &'a str,
    status: &'static str,
    link_hash: &'a [u8],
    #[diesel(serialize_as = Instant)]
    expires_on: OffsetDateTime,
    answers: String,
    tax_id_key: Option<&'a str>,
    tax_id_nonce: Option<&'a [u8]>,
    tax_id_sealed: Option<&'a [u8]>,
    tax_id_last4: Option<&'a str>,
    bank_key: Option<&'a str>,
    bank_nonce: Option<&'a [u8]>,
    bank_sealed: Option<&'a [u8]>,
    bank_last4: Option<&'a str>,
    requested_fields: String,
    reason: Option<&'a str>,
    submitted_by: Option<&'a str>,
    submitted_on: Option<Instant>,
    submitted_from: Option<String>,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    updated_on: OffsetDateTime,
}

type Parts<'a> = (
    Option<&'a str>,
    Option<&'a [u8]>,
    Option<&'a [u8]>,
    Option<&'a str>,
);

fn parts(value: Option<&SealedValue>) -> Parts<'_> {
    match value {
        Some(v) => (
            Some(v.sealed.key_id.as_str()),
            Some(v.sealed.nonce.as_slice()),
            Some(v.sealed.ciphertext.as_slice()),
            Some(v.last4.as_str()),
        ),
        None => (None, None, None, None),
    }
}

impl<'a> FormRow<'a> {
    fn of(form: &'a BoardingForm, answers: String) -> Self {
        let (tax_id_key, tax_id_nonce, tax_id_sealed, tax_id_last4) = parts(form.tax_id.as_ref());
        let (bank_key, bank_nonce, bank_sealed, bank_last4) = parts(form.bank_account.as_ref());
        let submission = form.submission.as_ref();
        Self {
            id: form.id.as_str(),
            platform_id: form.platform_id.as_str(),
            mode: form.mode.as_str(),
            merchant_id: form.merchant_id.as_str(),
            status: form.status.as_str(),
            link_hash: form.link_hash.as_bytes().as_slice(),
            expires_on: form.expires_on,
            answers,
            tax_id_key,
            tax_id_nonce,
            tax_id_sealed,
            tax_id_last4,
            bank_key,
            bank_nonce,
            bank_sealed,
            bank_last4,
            requested_fields: form.requested_fields.join(","),
            reason: form.reason.as_deref(),
            submitted_by: submission.map(|s| s.name.as_str()),
            submitted_on: submission.map(|s| Instant(s.on)),
            submitted_from: submission.and_then(|s| s.address).map(|a| a.to_string()),
            created_on: form.created_on,
            updated_on: form.updated_on,
        }
    }
}

#[derive(Debug, Queryable)]
struct StoredForm {
    id: String,
    platform_id: String,
    mode: String,
    merchant_id: String,
    status: String,
    link_hash: Vec<u8>,
    expires_on: OffsetDateTime,
    answers: String,
    tax_id_key: Option<String>,
    tax_id_nonce: Option<Vec<u8>>,
    tax_id_sealed: Option<Vec<u8>>,
    tax_id_last4: Option<String>,
    bank_key: Option<String>,
    bank_nonce: Option<Vec<u8>>,
    bank_sealed: Option<Vec<u8>>,
    bank_last4: Option<String>,
    requested_fields: String,
    reason: Option<String>,
    submitted_by: Option<String>,
    submitted_on: Option<OffsetDateTime>,
    submitted_from: Option<String>,
    created_on: OffsetDateTime,
    updated_on: OffsetDateTime,
}

/// A sealed value read back: none, or all of its parts. A row with only some of them is
/// damaged, and an error: read as "none", the next save would write over what is left.
fn sealed_value(
    what: &str,
    key_id: Option<String>,
    nonce: Option<Vec<u8>>,
    ciphertext: Option<Vec<u8>>,
    last4: Option<String>,
) -> Result<Option<SealedValue>, StoreError> {
    match (key_id, nonce, ciphertext, last4) {
        (None, None, None, None) => Ok(None),
        (Some(key_id), Some(nonce), Some(ciphertext), Some(last4)) => Ok(Some(SealedValue {
            sealed: Sealed {
                key_id,
                nonce,
                ciphertext,
            },
            last4,
        })),
        _ => Err(corrupt(what, "some of its sealed parts are missing")),
    }
}

impl TryFrom<StoredForm> for BoardingForm {
    type Error = StoreError;
    fn try_from(row: StoredForm) -> Result<Self, StoreError> {
        let submission = match (row.submitted_by, row.submitted_on) {
            (Some(name), Some(on)) => Some(Submission {
                name,
                on,
                address: row
                    .submitted_from
                    .as_deref()
                    .map(|a| parse("submission address", a))
                    .transpose()?,
            }),
            (None, None) => None,
            // Read as "not submitted", the form could be submitted a second time.
            _ => return Err(corrupt("submission", "its name or time is missing")),
        };
        Ok(Self {
            id: BoardingFormId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            status: parse("form status", &row.status)?,
            link_hash: stored_hash("link hash", row.link_hash)?,
            expires_on: row.expires_on,
            answers: serde_json::from_str(&row.answers).map_err(|e| corrupt("answers", e))?,
            tax_id: sealed_value(
                "tax id",
                row.tax_id_key,
                row.tax_id_nonce,
                row.tax_id_sealed,
                row.tax_id_last4,
            )?,
            bank_account: sealed_value(
                "bank account",
                row.bank_key,
                row.bank_nonce,
                row.bank_sealed,
                row.bank_last4,
            )?,
            requested_fields: row
                .requested_fields
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect(),
            reason: row.reason,
            submission,
            created_on: row.created_on,
            updated_on: row.updated_on,
        })
    }
}

fn event_of(id: &EventId, form: &BoardingForm, data: EventData) -> Event {
    Event {
        id: id.clone(),
        platform_id: form.platform_id.clone(),
        mode: form.mode,
        data,
        created_on: form.updated_on,
    }
}

/// Sets the merchant's onboarding status, with `merchant.updated`, unless it already is;
/// whether it changed. Approval is final: no other form of the merchant (one opened before the
/// approval, still saved or decided through its link) takes it back out, and a deleted
/// merchant is left as it is.
async fn set_status(
    conn: &mut Conn,
    form: &BoardingForm,
    status: OnboardingStatus,
    event: &EventId,
) -> QueryResult<bool> {
    let changed: Option<MerchantRow> = conn
        .get_result(
            diesel::update(
                m::table
                    .filter(m::id.eq(form.merchant_id.as_str()))
                    .filter(m::platform_id.eq(form.platform_id.as_str()))
                    .filter(m::deleted_on.is_null())
                    .filter(m::onboarding_status.ne(status.as_str()))
                    .filter(m::onboarding_status.ne(OnboardingStatus::Approved.as_str())),
            )
            .set((
                m::onboarding_status.eq(status.as_str()),
                m::updated_on.eq(Instant(form.updated_on)),
            )),
        )
        .await
        .optional()?;
    let Some(row) = changed else {
        return Ok(false);
    };
    let merchant = Merchant::try_from(row)
        .map_err(|e| diesel::result::Error::DeserializationError(e.to_string().into()))?;
    let data = EventData::MerchantUpdated(Box::new(merchant));
    write_event_data(conn, &event_of(event, form, data)).await?;
    Ok(true)
}

#[async_trait::async_trait]
impl BoardingStore for SqlStore {
    async fn write_form(&self, form: &BoardingForm, write: FormWrite) -> Result<bool, StoreError> {
        let answers = serde_json::to_string(&form.answers)
            .map_err(|e| StoreError::Unexpected(format!("answers: {e}")))?;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            // The guarded replace comes first: a refused write has written nothing.
            let this = f::table.filter(f::id.eq(form.id.as_str()));
            let changed = match write.guard {
                Guard::Insert => {
                    conn.execute(
                        diesel::insert_into(f::table).values(FormRow::of(form, answers.clone())),
                    )
                    .await?
                }
                Guard::Status(status) => {
                    conn.execute(
                        diesel::update(this.filter(f::status.eq(status.as_str())))
                            .set(FormRow::of(form, answers.clone())),
                    )
                    .await?
                }
                Guard::Unchanged(status, at) => {
                    conn.execute(
                        diesel::update(
                            this.filter(f::status.eq(status.as_str()))
                                .filter(f::updated_on.eq(Instant(at))),
                        )
                        .set(FormRow::of(form, answers.clone())),
                    )
                    .await?
                }
            };
            if changed == 0 {
                return Ok(false);
            }
            if let Some((merchant, event)) = &write.new_merchant {
                conn.execute(diesel::insert_into(m::table).values(NewMerchantRow::from(merchant)))
                    .await?;
                let data = EventData::MerchantCreated(Box::new(merchant.clone()));
                write_event_data(conn, &event_of(event, form, data)).await?;
            }
            if let Some(event) = &write.form_event {
                let data = if write.guard == Guard::Insert {
                    EventData::FormCreated(form.event())
                } else {
                    EventData::FormCompleted(form.event())
                };
                write_event_data(conn, &event_of(event, form, data)).await?;
            }
            let moved = match &write.merchant_status {
                Some((status, event)) => set_status(conn, form, *status, event).await?,
                None => false,
            };
            if let Some((issued, event)) = &write.compliance {
                // The approval's first form, only when this write is what approved the merchant.
                if moved {
                    super::compliance::insert_issued(conn, issued, event).await?;
                }
            }
            write_reply(conn, &form.platform_id, form.mode, write.reply.as_ref()).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("boarding_forms"))
    }

    async fn get_form(
        &self,
        scope: &Scope,
        id: &BoardingFormId,
    ) -> Result<Option<BoardingForm>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<StoredForm, _>(scoped(f::table, scope).filter(f::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("boarding_forms"))?
            .map(BoardingForm::try_from)
            .transpose()
    }

    async fn list_forms(
        &self,
        scope: &Scope,
        page: &PageRequest,
    ) -> Result<Page<BoardingForm>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = scoped(f::table, scope)
            .order(f::id.desc())
            .limit(page.fetch_count());
        load_page::<StoredForm, _, _, _, _, _, _>(
            &mut conn,
            "boarding_forms",
            newest,
            page,
            |q, after| q.filter(f::id.lt(after)),
            |q, before| q.filter(f::id.gt(before)).order(f::id.asc()),
        )
        .await
    }

    async fn payout_account(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<BoardingForm>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<StoredForm, _>(
            scoped(f::table, scope)
                .filter(f::merchant_id.eq(merchant.as_str()))
                .filter(f::status.eq(FormStatus::Approved.as_str()))
                .filter(f::bank_sealed.is_not_null())
                .order(f::id.desc()),
        )
        .await
        .optional()
        .map_err(query_error("boarding_forms"))?
        .map(BoardingForm::try_from)
        .transpose()
    }

    async fn form_by_link(&self, hash: &KeyHash) -> Result<Option<BoardingForm>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<StoredForm, _>(f::table.filter(f::link_hash.eq(hash.as_bytes().as_slice())))
            .await
            .optional()
            .map_err(query_error("boarding_forms"))?
            .map(BoardingForm::try_from)
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_value_is_all_its_parts_or_none_and_anything_between_is_an_error() {
        let part = |n: u8| Some(vec![n]);
        assert!(matches!(
            sealed_value("x", None, None, None, None),
            Ok(None)
        ));
        let whole = sealed_value("x", Some("k".into()), part(1), part(2), Some("34".into()));
        assert!(matches!(whole, Ok(Some(_))));
        let damaged = [
            sealed_value("x", Some("k".into()), part(1), None, Some("34".into())),
            sealed_value("x", None, None, part(2), None),
            sealed_value("x", Some("k".into()), part(1), part(2), None),
        ];
        for read in damaged {
            assert!(read.is_err(), "{read:?}");
        }
    }
}
