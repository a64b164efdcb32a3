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

mod account_rows;
mod client_session_rows;
mod conn;
mod database;
mod email_bodies;
mod error;
mod ledger_rows;
mod local_pools;
mod payment_rows;
mod pg_statement;
mod query;
mod rows;
mod schema;
mod stores;
#[cfg(feature = "test-support")]
pub mod testing;
mod timestamp;
mod token_rows;
mod wake_ups;
mod webhook_rows;

pub use conn::PoolUsage;
pub use database::{Database, DatabaseError, DatabaseUrl, PoolOptions, Stores};
pub use stores::Backlogs;
pub use wake_ups::{Announcer, WakeUps};
