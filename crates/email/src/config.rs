//! Which mailer to run, and building it.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::Mailer;

use crate::{FileMailer, SmtpMailer};

/// Where emails go when no SMTP server is configured.
pub const DEFAULT_MAIL_DIR: &str = "./data/mail";
/// The bound on one SMTP send.
pub const DEFAULT_SMTP_TIMEOUT: Duration = Duration::from_secs(10);

/// `from` is an address, optionally with a name: `Holdfast <noreply@example.com>`.
#[derive(Clone, PartialEq, Eq)]
pub enum MailerConfig {
    /// `url`: `smtp://host:port` (plain), `smtp://host:port?tls=required` (STARTTLS) or
    /// `smtps://host:port`, with optional `user:password@`.
    Smtp {
        url: String,
        from: String,
        timeout: Duration,
    },
    File {
        dir: PathBuf,
        from: String,
    },
}

impl MailerConfig {
    /// SMTP with the default timeout.
    pub fn smtp(url: impl Into<String>, from: impl Into<String>) -> Self {
        Self::Smtp {
            url: url.into(),
            from: from.into(),
            timeout: DEFAULT_SMTP_TIMEOUT,
        }
    }
}

// By hand, so the URL's password stays out of logs.
impl fmt::Debug for MailerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Smtp { url, from, timeout } => f
                .debug_struct("Smtp")
                .field("url", &redact_url(url))
                .field("from", from)
                .field("timeout", timeout)
                .finish(),
            Self::File { dir, from } => f
                .debug_struct("File")
                .field("dir", dir)
                .field("from", from)
                .finish(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MailerSetupError {
    /// `url` has its password replaced by `***`.
    #[error("the SMTP URL {url:?} cannot be used: {reason}")]
    Url { url: String, reason: String },
    #[error("the sender address {address:?} is not valid: {reason}")]
    From { address: String, reason: String },
    #[error("the SMTP timeout must be more than zero")]
    ZeroTimeout,
    #[error("the mail directory {} cannot be created: {source}", dir.display())]
    Directory {
        dir: PathBuf,
        source: std::io::Error,
    },
}

pub fn build(config: &MailerConfig) -> Result<Arc<dyn Mailer>, MailerSetupError> {
    Ok(match config {
        MailerConfig::Smtp { url, from, timeout } => {
            Arc::new(SmtpMailer::new(url, from, *timeout)?)
        }
        MailerConfig::File { dir, from } => Arc::new(FileMailer::new(dir.clone(), from)?),
    })
}

/// `scheme://user:***@host…`; done on the text, so it also covers URLs that do not parse.
#[expect(
    clippy::arithmetic_side_effects,
    reason = "offsets of places found in the string, so within its length"
)]
pub(crate) fn redact_url(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let authority_end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    // The last `@` ends the user info: a password may itself contain `@`.
    let Some(at) = url[start..authority_end].rfind('@').map(|i| start + i) else {
        return url.to_owned();
    };
    match url[start..at].find(':').map(|i| start + i) {
        Some(colon) => format!("{}:***{}", &url[..colon], &url[at..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_only_the_password() {
        for (url, shown) in [
            ("smtp://localhost:25", "smtp://localhost:25"),
            (
                "smtps://me:s3cret@mail.test:465",
                "smtps://me:***@mail.test:465",
            ),
            (
                "smtp://me:p@ss:w0rd@mail.test?tls=required",
                "smtp://me:***@mail.test?tls=required",
            ),
            ("smtp://me@mail.test", "smtp://me@mail.test"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact_url(url), shown);
        }
    }

    #[test]
    fn build_errors_name_the_problem_without_the_password() {
        let cases = [
            (
                MailerConfig::smtp("ftp://me:s3cret@mail.test", "a@b.test"),
                "SMTP URL",
            ),
            (
                MailerConfig::smtp("smtp://me:s3cret@", "a@b.test"),
                "SMTP URL",
            ),
            (
                MailerConfig::smtp("smtp://me:s3cret@mail.test?tls=maybe", "a@b.test"),
                "SMTP URL",
            ),
            (
                MailerConfig::smtp("smtp://me:s3cret@mail.test", "not an address"),
                "sender",
            ),
            (
                MailerConfig::Smtp {
                    url: "smtp://me:s3cret@mail.test".to_owned(),
                    from: "a@b.test".to_owned(),
                    timeout: Duration::ZERO,
                },
                "timeout",
            ),
        ];
        for (config, names) in cases {
            let message = build(&config).err().unwrap().to_string();
            assert!(message.contains(names), "{message}");
            assert!(!message.contains("s3cret"), "{message}");
            assert!(!format!("{config:?}").contains("s3cret"));
        }
    }

    #[test]
    fn builds_each_kind() {
        let dir = tempfile::tempdir().unwrap();
        build(&MailerConfig::smtp("smtp://127.0.0.1:2525", "a@b.test")).unwrap();
        build(&MailerConfig::smtp(
            "smtp://mail.test?tls=required",
            "a@b.test",
        ))
        .unwrap();
        build(&MailerConfig::smtp("smtps://u:p@mail.test", "a@b.test")).unwrap();
        build(&MailerConfig::File {
            dir: dir.path().join("mail"),
            from: "Holdfast <a@b.test>".to_owned(),
        })
        .unwrap();
        assert!(dir.path().join("mail").is_dir());
    }
}
