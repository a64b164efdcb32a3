//! Ports to the outside world beyond the database: webhook receivers and email.

use std::time::Duration;

use async_trait::async_trait;

/// One signed webhook POST, as the worker asks for it. The adapter signs it (Standard Webhooks:
/// `webhook-id`, `webhook-timestamp`, `webhook-signature` = `v1,` + base64 HMAC-SHA256 of
/// `id.timestamp.body` under each secret's decoded bytes, space-separated) and adds
/// `content-type: application/json` and the custom header.
#[derive(Clone)]
pub struct WebhookPost {
    /// The subscription's endpoint URL, as it is when the request is made.
    pub url: String,
    /// The notification id: the `webhook-id` header, the same on every retry and redelivery.
    pub message_id: String,
    /// Unix seconds, for `webhook-timestamp`; taken at each request.
    pub timestamp: i64,
    /// The notification's JSON body (`id`, `eventType`, `data`; spec 6.1).
    pub body: String,
    /// `whsec_` + base64 each: the current secret, then a rotated-out one while it still signs.
    pub secrets: Vec<String>,
    /// The subscription's custom header, as name and value, if it has one.
    pub custom_header: Option<(String, String)>,
    /// How long to wait for a complete answer before the request counts as failed (spec 6.2).
    pub timeout: Duration,
}

impl std::fmt::Debug for WebhookPost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookPost")
            .field("url", &self.url)
            .field("message_id", &self.message_id)
            .finish_non_exhaustive()
    }
}

/// What one HTTP request came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostResult {
    /// The receiver answered. `body` is cut to the adapter's documented cap.
    Answered {
        /// The HTTP status code the receiver returned.
        status: u16,
        /// The response body, possibly cut.
        body: String,
    },
    /// No answer; the request may or may not have reached the receiver.
    Failed(SendFailure),
}

/// Why a webhook request got no answer, with detail for the delivery record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendFailure {
    /// A resolved address is outside the allowed networks (the SSRF guard refuses the host if
    /// any of its addresses is).
    Refused(String),
    /// The host name did not resolve.
    Dns(String),
    /// The connection could not be made or was closed early.
    Connect(String),
    /// No complete answer within the timeout.
    Timeout,
    /// The URL or request could not be used at all.
    Invalid(String),
}

impl std::fmt::Display for SendFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Refused(why) => write!(f, "refused by the network guard: {why}"),
            Self::Dns(why) => write!(f, "DNS failure: {why}"),
            Self::Connect(why) => write!(f, "connection failed: {why}"),
            Self::Timeout => f.write_str("timed out"),
            Self::Invalid(why) => write!(f, "invalid request: {why}"),
        }
    }
}

/// Sends one webhook request. Never follows redirects; one call is one HTTP request at most.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait WebhookSender: Send + Sync {
    /// Makes the request once and reports the answer or why there was none.
    async fn post(&self, post: &WebhookPost) -> PostResult;
}

/// One email to send, such as the auto-disable notice of spec 6.3.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingEmail {
    /// The single recipient's address.
    pub to: String,
    /// The subject line; for the auto-disable notice, the one spec 6.3 prescribes.
    pub subject: String,
    /// Plain text.
    pub body: String,
}

/// Why an email could not be handed to the mail server.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// Worth trying again later (the server is down or said 4xx).
    #[error("temporary mail failure: {0}")]
    Temporary(String),
    /// Will never work (for example the address was refused for good).
    #[error("permanent mail failure: {0}")]
    Permanent(String),
}

/// Hands an email to a mail server (or a file).
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait Mailer: Send + Sync {
    /// Sends `email` under `id`, the outbox's id for it: the Message-ID is derived from it, so
    /// an email sent again after a crash (the first send was not recorded) is recognisably the
    /// same message, and receivers that deduplicate on Message-ID show it once.
    async fn send(&self, id: &str, email: &OutgoingEmail) -> Result<(), MailError>;
}
