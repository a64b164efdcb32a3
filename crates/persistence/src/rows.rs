//! Rows as the database returns them, and their conversion to domain types.
//!
//! Stored values were validated on the way in; one that no longer parses means the row was
//! changed behind our back, which is reported as `StoreError::Unexpected`, never papered over.

use diesel::{Insertable, Queryable};
use holdfast_domain::api_key::{ApiKey, KeyHash, KeyName, KeyStatus};
use holdfast_domain::ids::{KeyId, MerchantId, PlanId, PlatformId, UserId};
use holdfast_domain::merchant::{Currency, Merchant, MerchantDetails, MerchantName};
use holdfast_domain::metadata::Metadata;
use holdfast_domain::platform::{Platform, PlatformName};
use holdfast_domain::ports::StoreError;
use holdfast_domain::user::{Email, User};
use time::OffsetDateTime;

use crate::schema::{api_keys, merchants, platforms, users};
use crate::timestamp::Instant;

/// A stored value that no longer parses: the row was changed behind our back.
pub fn corrupt(what: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Unexpected(format!("stored {what} does not parse: {err}"))
}

/// A stored SHA-256 (of a key's value, a session's secret) read back.
pub fn stored_hash(what: &str, bytes: Vec<u8>) -> Result<KeyHash, StoreError> {
    let hash: [u8; 32] = bytes
        .try_into()
        .map_err(|_| corrupt(what, "not 32 bytes"))?;
    Ok(KeyHash::from_bytes(hash))
}

/// Metadata as its column holds it: a JSON object of strings.
pub fn metadata_column(metadata: &Metadata) -> String {
    // A map of strings always serializes.
    serde_json::to_string(metadata.entries()).unwrap_or_else(|_| "{}".to_owned())
}

/// A metadata column read back.
pub fn stored_metadata(raw: &str) -> Result<Metadata, StoreError> {
    serde_json::from_str(raw)
        .map(Metadata::from_trusted)
        .map_err(|e| corrupt("metadata", e))
}

/// A stored word read back into its type.
pub fn parse<T: std::str::FromStr>(what: &str, raw: &str) -> Result<T, StoreError> {
    raw.parse().map_err(|_| corrupt(what, raw))
}

#[derive(Debug, Queryable)]
pub struct PlatformRow {
    pub id: String,
    pub name: String,
    pub owner_id: String,
    pub created_on: OffsetDateTime,
}

impl TryFrom<PlatformRow> for Platform {
    type Error = StoreError;
    fn try_from(row: PlatformRow) -> Result<Self, StoreError> {
        Ok(Platform {
            id: PlatformId::from_trusted(row.id),
            name: PlatformName::parse(&row.name).map_err(|e| corrupt("platform name", e))?,
            owner_id: UserId::from_trusted(row.owner_id),
            created_on: row.created_on,
        })
    }
}

#[derive(Debug, Queryable)]
pub struct UserRow {
    pub id: String,
    pub platform_id: String,
    pub email: String,
    pub created_on: OffsetDateTime,
    pub role: String,
}

/// The columns of `UserRow`: never the password hash, which only the credential store reads.
pub type UserColumns = (
    users::id,
    users::platform_id,
    users::email,
    users::created_on,
    users::role,
);

/// The columns `UserRow` reads.
pub const USER_COLUMNS: UserColumns = (
    users::id,
    users::platform_id,
    users::email,
    users::created_on,
    users::role,
);

impl TryFrom<UserRow> for User {
    type Error = StoreError;
    fn try_from(row: UserRow) -> Result<Self, StoreError> {
        Ok(User {
            id: UserId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            email: Email::parse(&row.email).map_err(|e| corrupt("email", e))?,
            role: parse("user role", &row.role)?,
            created_on: row.created_on,
        })
    }
}

#[derive(Debug, Queryable)]
pub struct KeyRow {
    pub id: String,
    pub platform_id: String,
    pub name: String,
    pub key_type: String,
    pub mode: String,
    pub value_hash: Vec<u8>,
    pub last4: String,
    pub active: bool,
    pub created_by: String,
    pub created_on: OffsetDateTime,
    pub last_used_on: Option<OffsetDateTime>,
}

impl TryFrom<KeyRow> for ApiKey {
    type Error = StoreError;
    fn try_from(row: KeyRow) -> Result<Self, StoreError> {
        let hash = stored_hash("key hash", row.value_hash)?;
        Ok(ApiKey {
            id: KeyId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            name: KeyName::parse(&row.name).map_err(|e| corrupt("key name", e))?,
            key_type: row.key_type.parse().map_err(|e| corrupt("key type", e))?,
            mode: row.mode.parse().map_err(|e| corrupt("mode", e))?,
            status: if row.active {
                KeyStatus::Active
            } else {
                KeyStatus::Inactive
            },
            hash,
            last4: row.last4,
            created_by: UserId::from_trusted(row.created_by),
            created_on: row.created_on,
            last_used_on: row.last_used_on,
        })
    }
}

#[derive(Debug, Queryable)]
pub struct MerchantRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub name: String,
    pub currency: String,
    pub email: Option<String>,
    pub created_on: OffsetDateTime,
    pub updated_on: OffsetDateTime,
    /// Always `None` in what the stores return: deleted merchants are filtered out.
    pub deleted_on: Option<OffsetDateTime>,
    pub plan_id: Option<String>,
    pub onboarding_status: String,
    pub raw_cards_on: Option<OffsetDateTime>,
    pub metadata: String,
}

impl TryFrom<MerchantRow> for Merchant {
    type Error = StoreError;
    fn try_from(row: MerchantRow) -> Result<Self, StoreError> {
        Ok(Merchant {
            id: MerchantId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: row.mode.parse().map_err(|e| corrupt("mode", e))?,
            details: MerchantDetails {
                name: MerchantName::parse(&row.name).map_err(|e| corrupt("merchant name", e))?,
                currency: Currency::from_stored(&row.currency)
                    .ok_or_else(|| corrupt("currency", "not a currency code"))?,
                email: row
                    .email
                    .as_deref()
                    .map(Email::parse)
                    .transpose()
                    .map_err(|e| corrupt("email", e))?,
                metadata: stored_metadata(&row.metadata)?,
            },
            plan_id: row.plan_id.map(PlanId::from_trusted),
            onboarding_status: parse("onboarding status", &row.onboarding_status)?,
            raw_cards_on: row.raw_cards_on,
            created_on: row.created_on,
            updated_on: row.updated_on,
        })
    }
}

/// Converts a list of rows, failing on the first that does not parse.
pub fn convert_all<R, T: TryFrom<R, Error = StoreError>>(
    rows: Vec<R>,
) -> Result<Vec<T>, StoreError> {
    rows.into_iter().map(T::try_from).collect()
}

#[derive(Debug, Insertable)]
#[diesel(table_name = platforms, treat_none_as_default_value = false)]
pub struct NewPlatformRow<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub owner_id: &'a str,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
}

impl<'a> NewPlatformRow<'a> {
    pub fn of(platform: &'a Platform, owner: &'a User) -> Self {
        Self {
            id: platform.id.as_str(),
            name: platform.name.as_str(),
            owner_id: owner.id.as_str(),
            created_on: platform.created_on,
        }
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = users, treat_none_as_default_value = false)]
pub struct NewUserRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub email: &'a str,
    pub role: &'static str,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
}

impl<'a> From<&'a User> for NewUserRow<'a> {
    fn from(user: &'a User) -> Self {
        Self {
            id: user.id.as_str(),
            platform_id: user.platform_id.as_str(),
            email: user.email.as_str(),
            role: user.role.as_str(),
            created_on: user.created_on,
        }
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = api_keys, treat_none_as_default_value = false)]
pub struct NewKeyRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub name: &'a str,
    pub key_type: &'static str,
    pub mode: &'static str,
    pub value_hash: &'a [u8],
    pub last4: &'a str,
    pub active: bool,
    pub created_by: &'a str,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    pub last_used_on: Option<OffsetDateTime>,
}

impl<'a> From<&'a ApiKey> for NewKeyRow<'a> {
    fn from(key: &'a ApiKey) -> Self {
        Self {
            id: key.id.as_str(),
            platform_id: key.platform_id.as_str(),
            name: key.name.as_str(),
            key_type: key.key_type.as_str(),
            mode: key.mode.as_str(),
            value_hash: key.hash.as_bytes().as_slice(),
            last4: &key.last4,
            active: key.is_active(),
            created_by: key.created_by.as_str(),
            created_on: key.created_on,
            last_used_on: key.last_used_on,
        }
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = merchants, treat_none_as_default_value = false)]
pub struct NewMerchantRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub name: &'a str,
    pub currency: &'a str,
    pub email: Option<&'a str>,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    pub updated_on: OffsetDateTime,
    pub plan_id: Option<&'a str>,
    pub onboarding_status: &'static str,
    pub raw_cards_on: Option<Instant>,
    pub metadata: String,
}

impl<'a> From<&'a Merchant> for NewMerchantRow<'a> {
    fn from(m: &'a Merchant) -> Self {
        Self {
            id: m.id.as_str(),
            platform_id: m.platform_id.as_str(),
            mode: m.mode.as_str(),
            name: m.details.name.as_str(),
            currency: m.details.currency.as_str(),
            email: m.details.email.as_ref().map(Email::as_str),
            created_on: m.created_on,
            updated_on: m.updated_on,
            plan_id: m.plan_id.as_ref().map(PlanId::as_str),
            onboarding_status: m.onboarding_status.as_str(),
            raw_cards_on: m.raw_cards_on.map(Instant),
            metadata: metadata_column(&m.details.metadata),
        }
    }
}
