//! The OpenAPI 3.1 document of the API, served at `GET /v1/openapi.json` without a key, and
//! read by people at `/docs`.
//!
//! It is generated, never written by hand: each handler's `#[utoipa::path]` and the views' own
//! types give the operations, bodies and schemas; the route catalogue, which the gate enforces,
//! gives each operation its key type and the refusals the gate itself answers (`gate.rs`); the
//! event catalogue gives the `webhooks` section (`events.rs`). A test checks that the document and
//! the catalogue list exactly the same routes.

pub(crate) mod bodies;
mod events;
pub(crate) mod fields;
mod gate;
mod tidy;

use std::sync::LazyLock;

use actix_web::HttpResponse;
use utoipa::OpenApi;

use self::gate::FromCatalogue;
use holdfast_web::error::ErrorEnvelope;

/// The path of the document; outside the catalogue, since it takes no key.
pub const PATH: &str = "/v1/openapi.json";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Holdfast",
        description = "Payments for platforms: merchants, transactions, tokens, processor routing and \
webhooks. Authenticate with an API key in the `x-api-key` header. Every POST takes an \
`Idempotency-Key`. Errors share one envelope (`Error`).",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    paths(
        super::merchants::create,
        super::merchants::list,
        super::merchants::get,
        super::merchants::update,
        super::merchants::delete,
        super::transactions::create,
        super::transactions::list,
        super::transactions::get,
        super::connections::create_connection,
        super::connections::list_connections,
        super::connections::get_connection,
        super::plans::create_plan,
        super::plans::list_plans,
        super::plans::get_plan,
        super::bins::lookup,
        super::balances::get,
        super::balances::list_transactions,
        super::payouts::create,
        super::payouts::list,
        super::payouts::get,
        super::payouts::cancel,
        super::payouts::get_schedule,
        super::payouts::set_schedule,
        super::loans::create,
        super::loans::underwrite,
        super::loans::list,
        super::loans::get,
        super::loans::accept,
        super::loans::cancel,
        super::loans::repay,
        super::loans::repayments,
        super::tokens::create,
        super::tokens::get,
        super::tokens::delete,
        super::webhooks::create,
        super::webhooks::list,
        super::webhooks::event_types,
        super::webhooks::get,
        super::webhooks::replace,
        super::webhooks::delete,
        super::webhooks::rotate_secret,
        super::webhooks::send_test,
        super::webhooks::deliveries,
        super::clients::script::serve,
        super::clients::frame::serve,
        super::client_sessions::create,
        super::client_sessions::get,
        super::client_sessions::cancel,
        super::apple_pay::create,
        super::boarding_forms::create,
        super::boarding_forms::list,
        super::boarding_forms::get,
        super::boarding_forms::renew_link,
        super::compliance::get,
        super::compliance::attest,
        super::compliance::printable,
    ),
    components(schemas(ErrorEnvelope)),
    modifiers(&FromCatalogue),
    tags(
        (name = "merchants", description = "The businesses a platform takes payments for."),
        (name = "transactions", description = "Auths, sales, captures, voids and refunds."),
        (name = "routing", description = "Processor connections and the plans that price and route payments."),
        (name = "cards", description = "Tokens and the BIN table."),
        (name = "webhooks", description = "Subscriptions to events, and their delivery history."),
        (name = "money", description = "What merchants hold, from the double-entry ledger under every payment (docs/money.md)."),
        (name = "onboarding", description = "Boarding forms: what a merchant fills in on a hosted page to be underwritten (docs/onboarding.md)."),
        (name = "hosted client", description = "The script and payment-field frames a web page loads with a public key (docs/hosted-fields.md)."),
    ),
)]
struct ApiDoc;

/// The document, built once.
#[expect(
    clippy::expect_used,
    clippy::indexing_slicing,
    reason = "built from our own types, an object whose `info` utoipa always writes; the \
              OpenAPI tests serve it"
)]
pub fn document() -> &'static serde_json::Value {
    static DOCUMENT: LazyLock<serde_json::Value> = LazyLock::new(|| {
        let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the document serializes");
        doc["info"]["version"] = env!("CARGO_PKG_VERSION").into();
        events::add_webhooks(&mut doc);
        tidy::nots(&mut doc);
        tidy::exclusive_alternatives(&mut doc);
        tidy::add_servers(&mut doc);
        tidy::reference_copies(&mut doc);
        tidy::type_cursors(&mut doc);
        doc
    });
    &DOCUMENT
}

/// `GET /v1/openapi.json`.
pub async fn serve() -> HttpResponse {
    HttpResponse::Ok().json(document())
}

#[cfg(test)]
mod tests;
