//! `ApiClient`: JSON POSTs to another service's API (a processor's), over the same pooled,
//! guarded hyper client as webhooks. What a caller most needs to know of a failure is whether
//! the request may have reached the other side: a payment that was never sent can go
//! elsewhere, one that was sent and went unanswered must be undone there.

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, USER_AGENT};
use hyper::{Request, Uri};
use hyper_util::client::legacy::Client;
use ipnet::IpNet;

use crate::body::read_capped;
use crate::connector::{Connector, Schemes, guarded, pooled_client, tls_trusting};
use crate::guard::AddressGuard;
use crate::sender::BuildError;

/// How much of an answer is read: a processor's answer to one payment is a few KiB.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Where the client may connect.
#[derive(Debug, Clone, Default)]
pub struct ApiClientConfig {
    /// Loopback addresses over plain `http`, for a test's stand-in service. Without it, `https`
    /// to public addresses only.
    pub allow_loopback: bool,
}

/// An answer of any status, its body read (up to 256 KiB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The body, as lossy UTF-8.
    pub body: String,
}

/// A POST that brought no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiFailure {
    /// The request never left: a bad URL, an address refused, no connection made.
    #[error("not sent: {0}")]
    NotSent(String),
    /// The request may have reached the service, whose answer never came whole.
    #[error("sent, no answer: {0}")]
    NoAnswer(String),
}

/// Posts JSON over one shared connection pool (HTTP/1.1, TLS by rustls, the webpki roots),
/// never following redirects.
pub struct ApiClient {
    client: Client<Connector, Full<Bytes>>,
    user_agent: HeaderValue,
}

impl fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiClient").finish_non_exhaustive()
    }
}

impl ApiClient {
    pub fn new(config: &ApiClientConfig) -> Result<Self, BuildError> {
        let (allow, schemes) = if config.allow_loopback {
            let loopback = ["127.0.0.0/8", "::1/128"]
                .iter()
                .filter_map(|net| net.parse::<IpNet>().ok())
                .collect();
            (loopback, Schemes::HttpOrHttps)
        } else {
            (Vec::new(), Schemes::HttpsOnly)
        };
        let tls = tls_trusting(Vec::new())?.with_no_client_auth();
        let connector = guarded(Arc::new(AddressGuard::new(allow)), None, tls, schemes);
        Ok(Self {
            client: pooled_client(connector),
            user_agent: HeaderValue::from_static(concat!("Holdfast/", env!("CARGO_PKG_VERSION"))),
        })
    }

    /// POSTs `body` as JSON to `url` with `headers` (names in lower case). Header values are
    /// never logged: they carry credentials.
    pub async fn post_json(
        &self,
        url: &str,
        headers: &[(&'static str, &str)],
        body: String,
    ) -> Result<ApiAnswer, ApiFailure> {
        let uri: Uri = url
            .parse()
            .map_err(|_| ApiFailure::NotSent("the URL is not usable".to_owned()))?;
        let mut builder = Request::post(uri)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .header(USER_AGENT, self.user_agent.clone());
        for (name, value) in headers {
            let value = HeaderValue::from_str(value).map_err(|_| {
                ApiFailure::NotSent(format!("the {name} header's value is not a header value"))
            })?;
            builder = builder.header(HeaderName::from_static(name), value);
        }
        // The request being served joins the service's side to the client's trace.
        if let Some(traceparent) = holdfast_telemetry::trace_context::current()
            && let Ok(value) = HeaderValue::from_str(traceparent.as_str())
        {
            builder = builder.header(HeaderName::from_static("traceparent"), value);
        }
        let request = builder
            .body(Full::new(Bytes::from(body)))
            .map_err(|_| ApiFailure::NotSent("the request could not be built".to_owned()))?;
        let response = self.client.request(request).await.map_err(|e| {
            let why = crate::sender::failure(&e).to_string();
            // A connection never made carried nothing; any later failure (a reset, a close
            // before the answer) may follow a request the service received. hyper itself
            // retries a request a stale pooled connection refused before it was written.
            if e.is_connect() {
                ApiFailure::NotSent(why)
            } else {
                ApiFailure::NoAnswer(why)
            }
        })?;
        let status = response.status().as_u16();
        let body = read_capped(response.into_body(), MAX_ANSWER_BYTES)
            .await
            .map_err(|e| ApiFailure::NoAnswer(format!("the answer broke off: {e}")))?;
        Ok(ApiAnswer { status, body })
    }
}
