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

mod dashboard;
mod demo;
mod demo_page;
mod link_guard;
mod loan_offer;
mod onboarding;
mod state;

use actix_web::web;

pub use demo::{Demo, prepare as prepare_demo};
pub use state::PagesState;

/// Registers the pages: the dashboard (`/dashboard…`), the hosted boarding form
/// (`/onboarding…`), the hosted loan offer (`/loans…`) and the demo checkout (`/demo`). Needs `web::Data<PagesState>` in the
/// app's data.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.configure(demo_page::config)
        .configure(dashboard::config)
        .configure(onboarding::config)
        .configure(loan_offer::config);
}
