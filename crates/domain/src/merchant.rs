//! Merchants: they belong to a platform, live in one mode, and take payments in one currency.

use time::OffsetDateTime;

use crate::Invalid;
use crate::boarding::OnboardingStatus;
use crate::ids::{MerchantId, PlanId, PlatformId};
use crate::metadata::Metadata;
use crate::mode::Mode;
use crate::text::bounded_text;
use crate::user::Email;

/// A business that takes payments through a platform; transactions are created for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merchant {
    /// The merchant's identifier, named by every transaction created for it.
    pub id: MerchantId,
    /// The platform that owns the merchant; no other platform can see it.
    pub platform_id: PlatformId,
    /// The mode of the key that created it; only keys of the same mode see it.
    pub mode: Mode,
    /// The client-set fields: name, currency and email.
    pub details: MerchantDetails,
    /// The plan that prices and routes its payments; the platform's default plan when `None`.
    pub plan_id: Option<PlanId>,
    /// Where it stands in onboarding; a live merchant is paid only once approved.
    pub onboarding_status: OnboardingStatus,
    /// When a payment for it first carried a raw card number: from then on its systems see
    /// card numbers, and it attests SAQ D rather than A (`docs/compliance.md`).
    pub raw_cards_on: Option<OffsetDateTime>,
    /// When the merchant was created.
    pub created_on: OffsetDateTime,
    /// When the merchant was last changed; equal to `created_on` until the first update.
    pub updated_on: OffsetDateTime,
}

/// The merchant object of the API (and of `merchant.*` event data): camelCase, RFC 3339 times.
/// Written through [`MerchantJson`], whose fields are the object's, so its schema and its JSON
/// come from one list.
impl serde::Serialize for Merchant {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use crate::payment::transaction::format_timestamp;
        MerchantJson {
            id: &self.id,
            platform_id: &self.platform_id,
            mode: self.mode,
            name: self.details.name.as_str(),
            currency: self.details.currency,
            email: self.details.email.as_ref().map(Email::as_str),
            plan_id: self.plan_id.as_ref(),
            onboarding_status: self.onboarding_status,
            metadata: &self.details.metadata,
            created_on: format_timestamp(self.created_on),
            updated_on: format_timestamp(self.updated_on),
        }
        .serialize(s)
    }
}

/// The merchant object's fields, as written.
#[derive(serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Merchant))]
#[serde(rename_all = "camelCase")]
pub struct MerchantJson<'a> {
    /// The merchant's id.
    pub id: &'a MerchantId,
    /// The platform that owns it.
    pub platform_id: &'a PlatformId,
    /// The mode of the key that created it.
    pub mode: Mode,
    /// Its display name.
    pub name: &'a str,
    /// The one currency it takes payments in.
    pub currency: Currency,
    /// Its contact address, or `null`.
    pub email: Option<&'a str>,
    /// The plan that prices and routes its payments; `null` for the platform's default plan.
    pub plan_id: Option<&'a PlanId>,
    /// Where it stands in onboarding (`docs/onboarding.md`); a live merchant takes live
    /// payments only once `approved`.
    pub onboarding_status: OnboardingStatus,
    /// The platform's own key/value pairs; `{}` when it gave none.
    pub metadata: &'a Metadata,
    /// When it was created.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub created_on: String,
    /// When it was last changed.
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub updated_on: String,
}

impl std::fmt::Debug for MerchantJson<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MerchantJson")
            .field("id", self.id)
            .finish_non_exhaustive()
    }
}

impl Merchant {
    /// A new merchant of `scope` made at `at`: the platform's default plan, onboarding not
    /// started, no raw card seen.
    pub fn new(
        id: MerchantId,
        scope: &crate::scope::Scope,
        details: MerchantDetails,
        at: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            platform_id: scope.platform.clone(),
            mode: scope.mode,
            details,
            plan_id: None,
            onboarding_status: OnboardingStatus::NotStarted,
            raw_cards_on: None,
            created_on: at,
            updated_on: at,
        }
    }

    /// Why the merchant cannot be paid now, if it cannot: a live merchant is paid only once
    /// its onboarding is approved. Test merchants are never held back.
    pub fn payment_refusal(&self) -> Option<Invalid> {
        (self.mode == Mode::Live && self.onboarding_status != OnboardingStatus::Approved).then(
            || {
                Invalid::new(
                    "merchantId",
                    format!(
                        "the merchant takes live payments only once its onboarding is approved; \
                     its onboarding status is {}",
                        self.onboarding_status
                    ),
                )
            },
        )
    }
}

/// The fields a client sets at creation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerchantDetails {
    /// The merchant's display name.
    pub name: MerchantName,
    /// The one currency the merchant takes payments in.
    pub currency: Currency,
    /// A contact address for the merchant, if the client gave one.
    pub email: Option<Email>,
    /// The platform's own key/value pairs; empty when it gave none.
    pub metadata: Metadata,
}

/// Changes to a merchant: only the fields present are changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MerchantPatch {
    /// The new display name, if it changes.
    pub name: Option<MerchantName>,
    /// The new currency, if it changes.
    pub currency: Option<Currency>,
    /// `Some(None)` clears the email.
    pub email: Option<Option<Email>>,
    /// `Some(None)` returns the merchant to the platform's default plan.
    pub plan_id: Option<Option<PlanId>>,
    /// The pairs that replace the merchant's, if they change (`Some` of none clears them).
    pub metadata: Option<Metadata>,
}

/// 1 to 100 characters after trimming; no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MerchantName(String);

impl MerchantName {
    /// Checks a name received from a client; a failure names the `name` field.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        bounded_text("name", raw, 1, 100).map(Self)
    }

    /// The name as stored and shown, already trimmed.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A currency, by its ISO 4217 code: one of the active currencies of `money::iso4217`, whose
/// minor unit says what an amount's units are (cents of USD, yen, fils of BHD).
///
/// Which of them a processor settles in belongs to the processor connection, which decides at
/// payment time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Currency([u8; 3]);

impl Currency {
    /// United States dollars.
    pub const USD: Currency = Currency(*b"USD");

    /// Checks a code received from a client: an active ISO 4217 currency; a failure names the
    /// `currency` field.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        match (raw.as_bytes(), crate::money::iso4217::minor_units(raw)) {
            (&[a, b, c], Some(_)) => Ok(Self([a, b, c])),
            _ => Err(Invalid::new(
                "currency",
                "must be an ISO 4217 currency code in upper case, like USD",
            )),
        }
    }

    /// Rebuilds a code read back from storage: three upper-case letters, as every version
    /// stored them. One stored before codes were checked against ISO 4217 stays readable (its
    /// amounts shown with two decimals); `None` when the row is not a code at all.
    pub fn from_stored(raw: &str) -> Option<Self> {
        match raw.as_bytes() {
            &[a, b, c] if [a, b, c].iter().all(u8::is_ascii_uppercase) => Some(Self([a, b, c])),
            _ => None,
        }
    }

    /// The digits of its minor unit: 2 for USD (cents), 0 for JPY, 3 for BHD.
    pub fn minor_units(self) -> u8 {
        crate::money::iso4217::minor_units(self.as_str()).unwrap_or(2)
    }

    /// The three-letter code, as sent over the API.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("ASCII by construction")
    }
}

impl serde::Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(feature = "openapi")]
crate::schema::schema_of!(
    Currency,
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(
            crate::money::iso4217::CURRENCIES
                .iter()
                .map(|(code, _)| *code)
        ))
        .description(Some(
            "An active ISO 4217 currency. Amounts are integers in its minor unit: cents for \
             USD, yen for JPY (no decimals), fils for BHD (three)."
        ))
        .examples(["USD"])
        .into()
);

#[cfg(test)]
mod tests {

    /// A live merchant is paid only once approved; a test merchant always.
    #[test]
    fn only_approved_live_merchants_are_paid() {
        for &status in OnboardingStatus::ALL {
            for mode in [Mode::Test, Mode::Live] {
                let merchant = Merchant {
                    mode,
                    onboarding_status: status,
                    ..crate::services::fixtures::shop(
                        MerchantId::from_suffix("1"),
                        PlatformId::from_suffix("1"),
                    )
                };
                let refused = merchant.payment_refusal();
                let paid = mode == Mode::Test || status == OnboardingStatus::Approved;
                assert_eq!(refused.is_none(), paid, "{mode:?} {status}");
                if let Some(refusal) = refused {
                    assert_eq!(refusal.field, "merchantId");
                    assert!(refusal.message.contains(status.as_str()));
                }
            }
        }
    }

    use super::*;

    #[test]
    fn currency_rules() {
        let cases = [
            ("USD", true),
            ("EUR", true),
            ("usd", false),
            ("US", false),
            ("USDD", false),
            ("U$D", false),
            ("", false),
        ];
        for (raw, ok) in cases {
            assert_eq!(Currency::parse(raw).is_ok(), ok, "{raw:?}");
        }
        assert_eq!(Currency::parse("EUR").unwrap().as_str(), "EUR");
    }
}
