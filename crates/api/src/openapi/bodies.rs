//! The request bodies whose fields depend on one another, written as the `oneOf` they are: a
//! transaction by its `type` (and its payment as a card or a token, never both), a token from
//! card fields or a wallet, a boarding form for an existing merchant or a new one, a processor
//! connection by its `kind`. Their structs stay flat and lenient so that every refusal names the
//! field it is about; these schemas say what those refusals enforce, so that a generated client
//! rejects at compile time what the server would refuse.

use utoipa::openapi::schema::{
    AdditionalProperties, AnyOfBuilder, Discriminator, ObjectBuilder, OneOfBuilder, Type,
};
use utoipa::openapi::{Ref, RefOr, Schema};

use super::fields;

/// Named parts of the bodies, each a component of the document.
pub type Parts = Vec<(String, RefOr<Schema>)>;

/// An object with exactly these properties, the `required` ones among them.
fn closed(
    description: &str,
    properties: Vec<(&str, RefOr<Schema>)>,
    required: &[&str],
) -> RefOr<Schema> {
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for (name, schema) in properties {
        object = object.property(name, schema);
    }
    for name in required {
        object = object.required(*name);
    }
    object.into()
}

fn reference(component: &str) -> RefOr<Schema> {
    Ref::from_schema_name(component).into()
}

fn words(values: &[&str]) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values.iter().copied()))
        .into()
}

/// One of `variants` (component names), told apart by `property` when given.
fn one_of(
    description: &str,
    variants: &[&str],
    property: Option<(&str, &[(&str, &str)])>,
) -> RefOr<Schema> {
    let mut one_of = OneOfBuilder::new().description(Some(description));
    for variant in variants {
        one_of = one_of.item(reference(variant));
    }
    if let Some((name, mapping)) = property {
        let mut discriminator = Discriminator::new(name);
        for (value, variant) in mapping {
            discriminator.mapping.insert(
                (*value).to_owned(),
                format!("#/components/schemas/{variant}"),
            );
        }
        one_of = one_of.discriminator(Some(discriminator));
    }
    one_of.into()
}

/// Card fields: `cvv` is required for a payment, optional for a token (never stored).
fn card_fields(description: &str, cvv_required: bool) -> RefOr<Schema> {
    let mut required = vec!["number", "expiration"];
    if cvv_required {
        required.push("cvv");
    }
    closed(
        description,
        vec![
            ("number", fields::card_number()),
            ("cvv", fields::cvv()),
            ("expiration", fields::expiration()),
            ("name", fields::name()),
        ],
        &required,
    )
}

/// `POST /v1/transactions`.
pub fn create_transaction() -> (RefOr<Schema>, Parts) {
    let parts = vec![
        (
            "NewPayment".to_owned(),
            closed(
                "An auth or a sale: who is paid, how much, and with what.",
                vec![
                    ("type", words(&["auth", "sale"])),
                    ("merchantId", reference("MerchantId")),
                    ("amount", fields::amount()),
                    (
                        "payment",
                        one_of(
                            "Card fields or a token, never both.",
                            &["CardPayment", "TokenPayment"],
                            None,
                        ),
                    ),
                    ("reference", reference("Reference")),
                    ("metadata", reference("Metadata")),
                ],
                &["type", "merchantId", "amount", "payment"],
            ),
        ),
        (
            "CardPayment".to_owned(),
            card_fields(
                "A card, as its holder typed it: sealed at once, never stored in clear.",
                true,
            ),
        ),
        (
            "TokenPayment".to_owned(),
            closed(
                "A token instead of card fields: a single-use one is spent by the payment; one \
                 bound to a client session pays only that session's merchant, amount and \
                 currency.",
                vec![("token", reference("TokenId"))],
                &["token"],
            ),
        ),
        (
            "CaptureOrRefund".to_owned(),
            closed(
                "A capture of an auth or a refund of a sale or capture: of `amount`, or of all \
                 that remains when it is left out.",
                vec![
                    ("type", words(&["capture", "refund"])),
                    ("transactionId", reference("TxnId")),
                    ("amount", fields::amount()),
                    ("reference", reference("Reference")),
                    ("metadata", reference("Metadata")),
                ],
                &["type", "transactionId"],
            ),
        ),
        (
            "Void".to_owned(),
            closed(
                "A void of an auth: always of all of it.",
                vec![
                    ("type", words(&["void"])),
                    ("transactionId", reference("TxnId")),
                    ("reference", reference("Reference")),
                    ("metadata", reference("Metadata")),
                ],
                &["type", "transactionId"],
            ),
        ),
    ];
    let body = one_of(
        "An auth or sale (`NewPayment`), or a capture, refund or void of an earlier transaction, \
         by `type`.",
        &["NewPayment", "CaptureOrRefund", "Void"],
        Some((
            "type",
            &[
                ("auth", "NewPayment"),
                ("sale", "NewPayment"),
                ("capture", "CaptureOrRefund"),
                ("refund", "CaptureOrRefund"),
                ("void", "Void"),
            ],
        )),
    );
    (body, parts)
}

/// `POST /v1/tokens`.
pub fn create_token() -> (RefOr<Schema>, Parts) {
    let single_use = || words(&["single_use"]);
    let parts = vec![
        (
            "CardToken".to_owned(),
            closed(
                "A single-use token of card fields (the default `type`), bound to a client \
                 session when `clientSecret` is given.",
                vec![
                    ("type", single_use()),
                    ("payment", reference("CardFields")),
                    ("clientSecret", fields::client_secret()),
                ],
                &["payment"],
            ),
        ),
        (
            "VaultToken".to_owned(),
            closed(
                "A multi-use vault token of card fields; private keys only (a public key is \
                 refused with 403). Only a vault token keeps metadata.",
                vec![
                    ("type", words(&["vault"])),
                    ("payment", reference("CardFields")),
                    ("metadata", reference("Metadata")),
                ],
                &["type", "payment"],
            ),
        ),
        (
            "WalletTokenRequest".to_owned(),
            closed(
                "A single-use token of the card a wallet's token holds.",
                vec![
                    ("type", single_use()),
                    ("wallet", reference("WalletToken")),
                    ("clientSecret", fields::client_secret()),
                ],
                &["wallet"],
            ),
        ),
        (
            "CardFields".to_owned(),
            card_fields(
                "A card to tokenize: `cvv` is optional and, when sent, checked and never stored.",
                false,
            ),
        ),
    ];
    // `anyOf`: the three are exclusive (a vault token has `type: vault`, the others cannot), but
    // an optional `type` is no discriminator.
    let mut any_of = AnyOfBuilder::new().description(Some(
        "Card fields to tokenize, single-use or vault, or a wallet's token.",
    ));
    for variant in ["CardToken", "VaultToken", "WalletTokenRequest"] {
        any_of = any_of.item(reference(variant));
    }
    let body = any_of.into();
    (body, parts)
}

/// `POST /v1/boarding-forms`.
pub fn create_boarding_form() -> (RefOr<Schema>, Parts) {
    let parts = vec![
        (
            "FormForMerchant".to_owned(),
            closed(
                "A form for an existing merchant whose onboarding is not yet approved.",
                vec![("merchantId", reference("MerchantId"))],
                &["merchantId"],
            ),
        ),
        (
            "FormForNewMerchant".to_owned(),
            closed(
                "A form that creates its merchant.",
                vec![("merchant", reference("NewMerchant"))],
                &["merchant"],
            ),
        ),
    ];
    let body = one_of(
        "Which merchant the form boards: `merchantId` of an existing one, or `merchant` to \
         create one with the form.",
        &["FormForMerchant", "FormForNewMerchant"],
        None,
    );
    (body, parts)
}

/// `POST /v1/processor-connections`.
pub fn create_connection() -> (RefOr<Schema>, Parts) {
    let parts = vec![
        (
            "SandboxConnection".to_owned(),
            closed(
                "The sandbox processor: test mode only.",
                vec![("name", fields::name()), ("kind", words(&["sandbox"]))],
                &["name", "kind"],
            ),
        ),
        (
            "AdyenConnection".to_owned(),
            closed(
                "An Adyen account.",
                vec![
                    ("name", fields::name()),
                    ("kind", words(&["adyen"])),
                    ("adyen", reference("NewAdyenAccount")),
                ],
                &["name", "kind", "adyen"],
            ),
        ),
    ];
    let body = one_of(
        "A processor connection, by `kind`.",
        &["SandboxConnection", "AdyenConnection"],
        Some((
            "kind",
            &[
                ("sandbox", "SandboxConnection"),
                ("adyen", "AdyenConnection"),
            ],
        )),
    );
    (body, parts)
}

/// `PUT /v1/merchants/{id}/payout-schedule`: a weekday exactly when weekly.
pub fn payout_schedule() -> (RefOr<Schema>, Parts) {
    let parts = vec![
        (
            "DailyOrManualSchedule".to_owned(),
            closed(
                "Paid out at the first payout run of each day (UTC), or only when asked.",
                vec![
                    ("interval", words(&["daily", "manual"])),
                    ("minimumAmount", fields::minimum_payout()),
                ],
                &["interval"],
            ),
        ),
        (
            "WeeklySchedule".to_owned(),
            closed(
                "Paid out at the first payout run of one weekday (UTC).",
                vec![
                    ("interval", words(&["weekly"])),
                    (
                        "weekday",
                        words(&[
                            "monday",
                            "tuesday",
                            "wednesday",
                            "thursday",
                            "friday",
                            "saturday",
                            "sunday",
                        ]),
                    ),
                    ("minimumAmount", fields::minimum_payout()),
                ],
                &["interval", "weekday"],
            ),
        ),
    ];
    let body = one_of(
        "A payout schedule, by `interval`.",
        &["DailyOrManualSchedule", "WeeklySchedule"],
        Some((
            "interval",
            &[
                ("daily", "DailyOrManualSchedule"),
                ("manual", "DailyOrManualSchedule"),
                ("weekly", "WeeklySchedule"),
            ],
        )),
    );
    (body, parts)
}

/// Gives a flat request struct the schema `$build` returns, its parts and the derived `$other`
/// types it references becoming components of the document.
macro_rules! described_by {
    ($body:ty, $build:path $(, $other:ty)*) => {
        impl utoipa::PartialSchema for $body {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                $build().0
            }
        }

        impl utoipa::ToSchema for $body {
            fn schemas(
                schemas: &mut Vec<(String, utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>)>,
            ) {
                schemas.extend($build().1);
                $(
                    schemas.push((
                        <$other as utoipa::ToSchema>::name().into_owned(),
                        <$other as utoipa::PartialSchema>::schema(),
                    ));
                    <$other as utoipa::ToSchema>::schemas(schemas);
                )*
            }
        }
    };
}
pub(crate) use described_by;
