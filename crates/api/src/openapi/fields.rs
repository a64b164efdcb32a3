//! The schemas of request fields whose rule is more than their JSON type, named for the field
//! they describe, for `#[schema(schema_with = …)]`. The rules themselves are the domain's
//! (`holdfast_domain::schema::rules`); the limits here are the ones the domain enforces there.

use holdfast_domain::payment::wallet::DISPLAY_NAME_MAX_CHARS;
use holdfast_domain::schema::rules::{self, ascii};
use holdfast_domain::webhook::CustomHeader;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
use utoipa::openapi::{RefOr, Schema};

/// `schema`, or `null` where `null` means something (removing an optional value).
pub fn or_null(schema: RefOr<Schema>) -> RefOr<Schema> {
    OneOfBuilder::new()
        .item(schema)
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .into()
}

/// A merchant's, plan's, connection's or card holder's name.
pub fn name() -> RefOr<Schema> {
    rules::name(100)
}

/// A webhook subscription's description.
pub fn description() -> RefOr<Schema> {
    rules::name(500)
}

/// The signer's name or title on a compliance attestation.
pub fn signer() -> RefOr<Schema> {
    rules::name(200)
}

/// A loan's acceptance: the name of who consented, or the platform's consent reference.
pub fn accepted_text() -> RefOr<Schema> {
    rules::name(holdfast_domain::loan::MAX_TEXT)
}

/// The name Apple's payment sheet shows.
pub fn display_name() -> RefOr<Schema> {
    rules::name(DISPLAY_NAME_MAX_CHARS)
}

pub fn email() -> RefOr<Schema> {
    rules::email()
}

/// An email that `null` removes.
pub fn email_or_null() -> RefOr<Schema> {
    or_null(rules::email())
}

pub fn amount() -> RefOr<Schema> {
    rules::amount()
}

pub fn card_number() -> RefOr<Schema> {
    rules::card_number()
}

pub fn cvv() -> RefOr<Schema> {
    rules::cvv()
}

pub fn expiration() -> RefOr<Schema> {
    rules::expiration()
}

pub fn endpoint_url() -> RefOr<Schema> {
    rules::endpoint_url()
}

pub fn header_name() -> RefOr<Schema> {
    rules::header_name(&CustomHeader::RESERVED)
}

pub fn header_value() -> RefOr<Schema> {
    rules::header_value()
}

pub fn merchant_account() -> RefOr<Schema> {
    ascii(
        "^[A-Za-z0-9_.\\-]{1,100}$",
        1,
        100,
        "Adyen's merchant account name: 1 to 100 letters, digits, '_', '-' or '.'.",
    )
}

pub fn checkout_url() -> RefOr<Schema> {
    ascii(
        "^(https://checkout-test\\.adyen\\.com/v71|https://[A-Za-z0-9][A-Za-z0-9\\-]{0,99}-checkout-live\\.adyenpayments\\.com/checkout/v71)/?$",
        32,
        160,
        "The Checkout API's base URL. Test mode: https://checkout-test.adyen.com/v71, the \
         default. Live mode, where it is required: \
         https://{prefix}-checkout-live.adyenpayments.com/checkout/v71 with the prefix from \
         Adyen's Customer Area. A trailing `/` is dropped.",
    )
}

pub fn api_key() -> RefOr<Schema> {
    ascii(
        "^[!-~]{16,1024}$",
        16,
        1024,
        "The web service user's API key: 16 to 1024 visible ASCII characters.",
    )
}

pub fn hmac_key() -> RefOr<Schema> {
    ascii(
        "^([0-9A-Fa-f]{2}){16,64}$",
        32,
        128,
        "The standard notification webhook's HMAC key in hexadecimal, as Adyen's Customer Area \
         shows it (64 digits; any even count from 32 to 128).",
    )
}

pub fn notification_username() -> RefOr<Schema> {
    ascii(
        "^[!-9;-~]{1,100}$",
        1,
        100,
        "The notification webhook's Basic-auth user name: 1 to 100 visible ASCII characters, \
         no colon.",
    )
}

pub fn notification_password() -> RefOr<Schema> {
    ascii(
        "^[!-~]{8,200}$",
        8,
        200,
        "The notification webhook's Basic-auth password: 8 to 200 visible ASCII characters.",
    )
}

pub fn validation_url() -> RefOr<Schema> {
    ascii(
        "^https://(cn-)?apple-pay-gateway[a-z0-9.\\-]*\\.apple\\.com/paymentservices/[!-~]*$",
        45,
        512,
        "The validation URL Apple's sheet gave the page: one of Apple Pay's merchant-validation \
         endpoints (https://apple-pay-gateway….apple.com/paymentservices/…), at most 512 \
         characters.",
    )
}

pub fn domain_name() -> RefOr<Schema> {
    ascii(
        "^[a-z0-9.\\-]{1,253}$",
        1,
        253,
        "The page's host name in lower case: letters, digits, '-' and '.'.",
    )
}

pub fn client_secret() -> RefOr<Schema> {
    ascii(
        "^cs_[0-9A-Za-z]{1,64}_secret_[0-9A-Za-z]{16,128}$",
        28,
        220,
        "A client session's secret (`clientSecret` of POST /v1/client-sessions): an open, \
         unexpired session of the key's platform and mode.",
    )
}

pub fn wallet_token() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .description(Some(
            "Google Pay: `paymentMethodData.tokenizationData.token` (an ECv2 token), Apple Pay: \
             the payment's `token.paymentData` as a JSON string; as the wallet gave it, signed \
             for this gateway and not expired.",
        ))
        .into()
}

/// An integer from `min` to `max`.
fn integer(min: i64, max: i64, description: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(min))
        .maximum(Some(max))
        .description(Some(description))
        .into()
}

pub fn minimum_payout() -> RefOr<Schema> {
    integer(
        0,
        i64::MAX,
        "The least available balance a scheduled run pays out, in minor units; 0 when not given.",
    )
}

pub fn basis_points() -> RefOr<Schema> {
    integer(
        0,
        10_000,
        "Hundredths of a percent of the amount: 0 to 10000.",
    )
}

pub fn fixed_fee() -> RefOr<Schema> {
    integer(
        0,
        1_000_000,
        "Minor units added to every payment: 0 to 1000000.",
    )
}

pub fn expires_in() -> RefOr<Schema> {
    integer(
        60,
        86_400,
        "Seconds to live, 60 to 86400 (one minute to a day); 1800 when not given.",
    )
}

/// A connection per card brand: the keys are the brands, each at most once.
pub fn brand_routes() -> RefOr<Schema> {
    use holdfast_domain::payment::brand::CardBrand;
    let brands = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(CardBrand::ALL.iter().map(|b| b.as_str())));
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property_names(Some(brands))
        .additional_properties(Some(utoipa::openapi::Ref::from_schema_name("ConnectionId")))
        .into()
}

/// `true`, the only answer that attests.
pub fn agreed() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::Boolean)
        .enum_values(Some([true]))
        .into()
}
