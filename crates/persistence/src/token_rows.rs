//! Rows of the tokens table and their conversion to domain types.

use diesel::{Insertable, Queryable};
use holdfast_domain::ids::{ClientSessionId, MerchantId, PlatformId, TokenId};
use holdfast_domain::payment::token::Token;
use holdfast_domain::payment::transaction::PaymentSummary;
use holdfast_domain::payment::wallet::WalletKind;
use holdfast_domain::ports::{Sealed, StoreError};
use time::OffsetDateTime;

use crate::rows::{metadata_column, parse, stored_metadata};
use crate::schema::tokens;
use crate::timestamp::Instant;

#[derive(Debug, Queryable)]
pub struct TokenRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub kind: String,
    pub bin: String,
    pub brand: String,
    pub last4: String,
    pub funding: String,
    pub key_id: String,
    pub nonce: Vec<u8>,
    pub ciphertext: Vec<u8>,
    pub created_on: OffsetDateTime,
    pub expires_on: Option<OffsetDateTime>,
    pub used_on: Option<OffsetDateTime>,
    pub client_session_id: Option<String>,
    pub wallet: Option<String>,
    pub merchant_id: Option<String>,
    pub metadata: String,
}

impl TryFrom<TokenRow> for Token {
    type Error = StoreError;
    fn try_from(row: TokenRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: TokenId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            kind: parse("token kind", &row.kind)?,
            card: PaymentSummary {
                bin: row.bin,
                brand: parse("brand", &row.brand)?,
                last4: row.last4,
                funding: parse("funding", &row.funding)?,
            },
            sealed: Sealed {
                key_id: row.key_id,
                nonce: row.nonce,
                ciphertext: row.ciphertext,
            },
            created_on: row.created_on,
            expires_on: row.expires_on,
            used_on: row.used_on,
            client_session_id: row.client_session_id.map(ClientSessionId::from_trusted),
            wallet: row.wallet.map(|word| parse("wallet", &word)).transpose()?,
            merchant_id: row.merchant_id.map(MerchantId::from_trusted),
            metadata: stored_metadata(&row.metadata)?,
        })
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = tokens, treat_none_as_default_value = false)]
pub struct NewTokenRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub kind: &'static str,
    pub bin: &'a str,
    pub brand: &'static str,
    pub last4: &'a str,
    pub funding: &'static str,
    pub key_id: &'a str,
    pub nonce: &'a [u8],
    pub ciphertext: &'a [u8],
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    pub expires_on: Option<OffsetDateTime>,
    pub used_on: Option<OffsetDateTime>,
    pub client_session_id: Option<&'a str>,
    pub wallet: Option<&'static str>,
    pub merchant_id: Option<&'a str>,
    pub metadata: String,
}

impl<'a> From<&'a Token> for NewTokenRow<'a> {
    fn from(t: &'a Token) -> Self {
        Self {
            id: t.id.as_str(),
            platform_id: t.platform_id.as_str(),
            mode: t.mode.as_str(),
            kind: t.kind.as_str(),
            bin: &t.card.bin,
            brand: t.card.brand.as_str(),
            last4: &t.card.last4,
            funding: t.card.funding.as_str(),
            key_id: &t.sealed.key_id,
            nonce: &t.sealed.nonce,
            ciphertext: &t.sealed.ciphertext,
            created_on: t.created_on,
            expires_on: t.expires_on,
            used_on: t.used_on,
            client_session_id: t.client_session_id.as_ref().map(ClientSessionId::as_str),
            wallet: t.wallet.map(WalletKind::as_str),
            merchant_id: t.merchant_id.as_ref().map(MerchantId::as_str),
            metadata: metadata_column(&t.metadata),
        }
    }
}
