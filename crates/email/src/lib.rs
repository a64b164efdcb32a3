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

mod config;
mod file;
mod message;
mod smtp;

pub use config::{DEFAULT_MAIL_DIR, DEFAULT_SMTP_TIMEOUT, MailerConfig, MailerSetupError, build};
pub use file::FileMailer;
pub use smtp::SmtpMailer;
