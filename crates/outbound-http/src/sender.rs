//! `HyperSender`, the `WebhookSender` adapter: one signed POST per call over a pooled client.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use holdfast_domain::ports::{PostResult, SendFailure, WebhookPost, WebhookSender};
use http_body_util::Full;
use hyper::header::{CONTENT_TYPE, HeaderName, HeaderValue, USER_AGENT};
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use ipnet::IpNet;

use crate::body::read_capped;
use crate::connector::{Connector, connector, pooled_client};
use crate::guard::{AddressGuard, GuardError};
use crate::signing::sign;

/// The default cap on how much of a response body is kept: 64 KiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// Headers the sender sets itself, which a subscription's custom header may not replace.
const OWN_HEADERS: [&str; 8] = [
    "content-type",
    "user-agent",
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "host",
    "content-length",
    "transfer-encoding",
];

#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// Networks let through the SSRF guard although not public (for example a private receiver
    /// network, or 127.0.0.0/8 in tests). Empty by default: public addresses only.
    pub allow_networks: Vec<IpNet>,
    /// How much of a response body is kept; the rest is not read. Default
    /// [`DEFAULT_MAX_RESPONSE_BYTES`] (64 KiB).
    pub max_response_bytes: usize,
    pub user_agent: String,
}

impl Default for SenderConfig {
    fn default() -> Self {
        Self {
            allow_networks: Vec::new(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            user_agent: concat!("Holdfast-Webhooks/", env!("CARGO_PKG_VERSION")).to_owned(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the user agent {0:?} is not a valid header value")]
    UserAgent(String),
    #[error("TLS setup failed: {0}")]
    Tls(#[from] rustls::Error),
}

/// Sends webhooks over one shared connection pool (HTTP/1.1, TLS by rustls), never following
/// redirects and never connecting to an address the SSRF guard has not vetted. Build one and
/// share it, so that connections to a receiver are reused across deliveries.
pub struct HyperSender {
    client: Client<Connector, Full<Bytes>>,
    user_agent: HeaderValue,
    max_response_bytes: usize,
}

impl fmt::Debug for HyperSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HyperSender")
            .field("user_agent", &self.user_agent)
            .field("max_response_bytes", &self.max_response_bytes)
            .finish_non_exhaustive()
    }
}

impl HyperSender {
    pub fn new(config: SenderConfig) -> Result<Self, BuildError> {
        let user_agent = HeaderValue::from_str(&config.user_agent)
            .map_err(|_| BuildError::UserAgent(config.user_agent.clone()))?;
        let connector = connector(Arc::new(AddressGuard::new(config.allow_networks)))?;
        Ok(Self {
            client: pooled_client(connector),
            user_agent,
            max_response_bytes: config.max_response_bytes,
        })
    }

    fn request(&self, post: &WebhookPost) -> Result<Request<Full<Bytes>>, String> {
        let uri: Uri = post
            .url
            .parse()
            .map_err(|e| format!("{:?} is not a usable URL: {e}", post.url))?;
        if !matches!(uri.scheme_str(), Some(s) if s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
        {
            return Err(format!(
                "{:?}: only http and https URLs can receive webhooks",
                post.url
            ));
        }
        if uri.host().is_none_or(str::is_empty) {
            return Err(format!("{:?} has no host", post.url));
        }
        if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
            return Err(format!("{:?} carries credentials", post.url));
        }
        let signature = post
            .secrets
            .iter()
            .map(|secret| sign(secret, &post.message_id, post.timestamp, &post.body))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?
            .join(" ");
        let mut builder = Request::post(uri)
            .header(CONTENT_TYPE, "application/json")
            .header(USER_AGENT, self.user_agent.clone())
            .header("webhook-id", &post.message_id)
            .header("webhook-timestamp", post.timestamp.to_string())
            .header("webhook-signature", signature);
        if let Some((name, value)) = &post.custom_header {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{name:?} is not a valid header name"))?;
            if OWN_HEADERS.contains(&name.as_str()) {
                return Err(format!("the custom header may not replace {name}"));
            }
            builder = builder.header(name, value);
        }
        builder
            .body(Full::new(Bytes::from(post.body.clone())))
            .map_err(|e| format!("cannot build the request: {e}"))
    }

    async fn exchange(&self, request: Request<Full<Bytes>>) -> PostResult {
        let response = match self.client.request(request).await {
            Ok(response) => response,
            Err(e) => return PostResult::Failed(failure(&e)),
        };
        let status = response.status().as_u16();
        match read_capped(response.into_body(), self.max_response_bytes).await {
            Ok(body) => PostResult::Answered { status, body },
            Err(e) => {
                PostResult::Failed(SendFailure::Connect(format!("the response broke off: {e}")))
            }
        }
    }
}

#[async_trait]
impl WebhookSender for HyperSender {
    async fn post(&self, post: &WebhookPost) -> PostResult {
        let request = match self.request(post) {
            Ok(request) => request,
            Err(why) => return PostResult::Failed(SendFailure::Invalid(why)),
        };
        tokio::time::timeout(post.timeout, self.exchange(request))
            .await
            .unwrap_or(PostResult::Failed(SendFailure::Timeout))
    }
}

/// Hyper wraps the guard's verdict several layers deep; anything else failed on the connection.
pub(crate) fn failure(err: &(dyn StdError + 'static)) -> SendFailure {
    let mut chain = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        if let Some(guarded) = e.downcast_ref::<GuardError>() {
            return guarded.to_failure();
        }
        chain.push(e.to_string());
        next = e.source();
    }
    SendFailure::Connect(chain.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(url: &str) -> WebhookPost {
        WebhookPost {
            url: url.to_owned(),
            message_id: "msg_1".to_owned(),
            timestamp: 1_700_000_000,
            body: "{}".to_owned(),
            secrets: vec![crate::signing::generate_secret_from(&[1; 32])],
            custom_header: None,
            timeout: std::time::Duration::from_secs(1),
        }
    }

    fn invalid(result: PostResult) -> String {
        match result {
            PostResult::Failed(SendFailure::Invalid(why)) => why,
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn unusable_requests_are_invalid_before_any_connection() {
        let sender = HyperSender::new(SenderConfig::default()).unwrap();
        for url in [
            "ftp://example.com/x",
            "example.com/hooks",
            "not a url",
            "https://user:pw@example.com/",
        ] {
            invalid(sender.post(&post(url)).await);
        }
        let bad_secret = WebhookPost {
            secrets: vec!["whsec_!!".into()],
            ..post("https://example.com/")
        };
        assert!(invalid(sender.post(&bad_secret).await).contains("base64"));
        let clash = WebhookPost {
            custom_header: Some(("Webhook-Signature".into(), "x".into())),
            ..post("https://example.com/")
        };
        assert!(invalid(sender.post(&clash).await).contains("webhook-signature"));
        let bad_value = WebhookPost {
            custom_header: Some(("X-A".into(), "a\nb".into())),
            ..post("https://example.com/")
        };
        invalid(sender.post(&bad_value).await);
    }

    #[test]
    fn a_bad_user_agent_is_a_build_error() {
        let config = SenderConfig {
            user_agent: "bad\nagent".into(),
            ..SenderConfig::default()
        };
        assert!(matches!(
            HyperSender::new(config),
            Err(BuildError::UserAgent(_))
        ));
    }
}
