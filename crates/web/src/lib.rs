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

pub mod client_address;
pub mod error;
pub mod html;
pub mod hygiene;
pub mod metrics;
pub mod paths;
pub mod rate_limit;
pub mod request_context;
pub mod run_to_end;
pub mod same_origin;
mod services;
pub mod throttle;
pub mod views;

pub use error::ApiError;
pub use services::Services;
