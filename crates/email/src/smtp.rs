//! The production mailer: SMTP through lettre.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use holdfast_domain::ports::{MailError, Mailer, OutgoingEmail};
use lettre::message::Mailbox;
use lettre::transport::smtp::Error as SmtpError;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};

use crate::MailerSetupError;
use crate::config::redact_url;
use crate::message::{compose, parse_mailbox};

#[cfg(test)]
mod fake_server;
#[cfg(test)]
mod tests;

/// One connection per email: emails are rare enough that a pool would mostly hold idle
/// connections the server closes anyway.
pub struct SmtpMailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    timeout: Duration,
    /// The URL without its password, for errors and `Debug`.
    server: String,
}

impl fmt::Debug for SmtpMailer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SmtpMailer")
            .field("server", &self.server)
            .field("from", &self.from.to_string())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl SmtpMailer {
    /// Connects to nothing yet: a server that is down shows only when sending.
    pub fn new(url: &str, from: &str, timeout: Duration) -> Result<Self, MailerSetupError> {
        let server = redact_url(url);
        if timeout.is_zero() {
            return Err(MailerSetupError::ZeroTimeout);
        }
        let from = parse_mailbox(from).map_err(|reason| MailerSetupError::From {
            address: from.to_owned(),
            reason,
        })?;
        // lettre's error texts name the part at fault, never the URL itself.
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .map_err(|e| MailerSetupError::Url {
                url: server.clone(),
                reason: e.to_string(),
            })?
            // Bounds each connect, read and write; the whole send is bounded in `send`.
            .timeout(Some(timeout))
            .build();
        Ok(Self {
            transport,
            from,
            timeout,
            server,
        })
    }
}

#[async_trait]
impl Mailer for SmtpMailer {
    async fn send(&self, id: &str, email: &OutgoingEmail) -> Result<(), MailError> {
        let composed = compose(&self.from, id, email)?;
        match tokio::time::timeout(self.timeout, self.transport.send(composed.message)).await {
            Ok(Ok(_)) => {
                tracing::info!(id = %composed.id, "email accepted by the mail server");
                Ok(())
            }
            Ok(Err(e)) => Err(classify(&e, &self.server)),
            Err(_) => Err(MailError::Temporary(format!(
                "{}: no answer within {:?}",
                self.server, self.timeout
            ))),
        }
    }
}

/// SMTP's 5xx is final for the message, except replies about logging in: those say the
/// configuration is wrong, and the email can go once it is fixed.
fn classify(error: &SmtpError, server: &str) -> MailError {
    let text = format!("{server}: {error}");
    let auth_refused = error
        .status()
        .is_some_and(|code| matches!(u16::from(code), 530 | 534 | 535 | 538));
    if error.is_permanent() && !auth_refused {
        MailError::Permanent(text)
    } else {
        MailError::Temporary(text)
    }
}
