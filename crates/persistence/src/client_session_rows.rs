//! Rows of the client sessions table and their conversion to domain types.

use diesel::{Insertable, Queryable};
use holdfast_domain::ids::{ClientSessionId, MerchantId, PlatformId, TxnId};
use holdfast_domain::merchant::Currency;
use holdfast_domain::payment::client_session::{ClientSession, PaymentMethod};
use holdfast_domain::ports::StoreError;
use time::OffsetDateTime;

use crate::rows::{corrupt, parse};
use crate::schema::client_sessions;
use crate::timestamp::Instant;

#[derive(Debug, Queryable)]
pub struct ClientSessionRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub merchant_id: String,
    pub amount: i64,
    pub currency: String,
    pub payment_methods: String,
    pub secret_hash: Vec<u8>,
    pub status: String,
    pub transaction_id: Option<String>,
    pub created_on: OffsetDateTime,
    pub expires_on: OffsetDateTime,
    pub closed_on: Option<OffsetDateTime>,
    pub held_until: Option<OffsetDateTime>,
}

impl TryFrom<ClientSessionRow> for ClientSession {
    type Error = StoreError;
    fn try_from(row: ClientSessionRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: ClientSessionId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            amount: row.amount,
            currency: Currency::from_stored(&row.currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?,
            payment_methods: row
                .payment_methods
                .split(',')
                .map(|word| parse::<PaymentMethod>("payment method", word))
                .collect::<Result<_, _>>()?,
            secret_hash: row.secret_hash,
            status: parse("client session status", &row.status)?,
            transaction_id: row.transaction_id.map(TxnId::from_trusted),
            created_on: row.created_on,
            expires_on: row.expires_on,
            closed_on: row.closed_on,
            held_until: row.held_until,
        })
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = client_sessions, treat_none_as_default_value = false)]
pub struct NewClientSessionRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub merchant_id: &'a str,
    pub amount: i64,
    pub currency: &'a str,
    pub payment_methods: String,
    pub secret_hash: &'a [u8],
    pub status: &'static str,
    pub transaction_id: Option<&'a str>,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    pub expires_on: OffsetDateTime,
    pub closed_on: Option<OffsetDateTime>,
    pub held_until: Option<OffsetDateTime>,
}

impl<'a> From<&'a ClientSession> for NewClientSessionRow<'a> {
    fn from(s: &'a ClientSession) -> Self {
        Self {
            id: s.id.as_str(),
            platform_id: s.platform_id.as_str(),
            mode: s.mode.as_str(),
            merchant_id: s.merchant_id.as_str(),
            amount: s.amount,
            currency: s.currency.as_str(),
            payment_methods: s
                .payment_methods
                .iter()
                .map(|m| m.as_str())
                .collect::<Vec<_>>()
                .join(","),
            secret_hash: &s.secret_hash,
            status: s.status.as_str(),
            transaction_id: s.transaction_id.as_ref().map(TxnId::as_str),
            created_on: s.created_on,
            expires_on: s.expires_on,
            closed_on: s.closed_on,
            held_until: s.held_until,
        }
    }
}
