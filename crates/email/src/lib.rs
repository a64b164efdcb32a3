#![doc = include_str!("../README.md")]

mod config;
mod file;
mod message;
mod smtp;

pub use config::{BuildError, DEFAULT_MAIL_DIR, DEFAULT_SMTP_TIMEOUT, MailerConfig, build};
pub use file::FileMailer;
pub use smtp::SmtpMailer;
