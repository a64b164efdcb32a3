#![doc = include_str!("../README.md")]
// No input may stop the server (issue 37): what could panic is refused outside tests, and each
// proven-safe case says why in its `#[expect]`.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

mod apple_pay;
mod balances;
mod bins;
mod boarding_forms;
mod client_sessions;
pub mod clients;
mod compliance;
mod connections;
mod docs_page;
mod extract;
mod idempotency;
mod json_body;
mod loans;
mod merchants;
pub mod openapi;
mod payouts;
mod plans;
mod processor_notices;
pub mod routes;
mod state;
mod tokens;
mod transactions;
pub mod views;
pub mod webhooks;

use actix_web::web;

pub use routes::gate;
pub use state::ApiState;

/// Registers the API's routes: `/v1` through its catalogue (each under the gate the binary
/// wraps around the app: `gate`), the OpenAPI document and its `/docs` page, the hosted
/// client's script and frames, Apple Pay's domain association file, and processors'
/// notification endpoints. Needs `web::Data<ApiState>` in the app's data.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.app_data(web::PayloadConfig::new(extract::MAX_BODY_BYTES))
        .configure(docs_page::config)
        .configure(clients::config)
        .configure(apple_pay::config)
        .configure(processor_notices::config)
        .route(openapi::PATH, web::get().to(openapi::serve))
        .configure(routes::register);
}
