//! The connection stack: TCP through the guarded resolver, then rustls for `https` URLs.

use std::error::Error as StdError;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::Uri;
use hyper_rustls::{HttpsConnector, HttpsConnectorBuilder};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioIo;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::net::TcpStream;
use tower_service::Service;

use crate::guard::{AddressGuard, GuardedResolver};

type BoxError = Box<dyn StdError + Send + Sync>;

/// The HTTP(S) connector the sender's client uses.
pub(crate) type Connector = HttpsConnector<GuardedConnector>;

pub(crate) fn connector(guard: Arc<AddressGuard>) -> Result<Connector, rustls::Error> {
    let tls = tls_trusting(Vec::new())?.with_no_client_auth();
    Ok(guarded(guard, None, tls, Schemes::HttpOrHttps))
}

/// Which URL schemes a connector takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Schemes {
    HttpOrHttps,
    HttpsOnly,
}

/// TCP through `guard` (names resolved once and vetted, or the `pinned` address, vetted too;
/// address literals vetted before connecting), then `tls`.
pub(crate) fn guarded(
    guard: Arc<AddressGuard>,
    pinned: Option<std::net::SocketAddr>,
    tls: rustls::ClientConfig,
    schemes: Schemes,
) -> Connector {
    let mut http =
        HttpConnector::new_with_resolver(GuardedResolver::new(Arc::clone(&guard), pinned));
    // The TLS layer above hands `https` URLs down here too.
    http.enforce_http(false);
    http.set_nodelay(true);
    let tcp = GuardedConnector { http, guard };
    let builder = HttpsConnectorBuilder::new().with_tls_config(tls);
    match schemes {
        Schemes::HttpOrHttps => builder.https_or_http().enable_http1().wrap_connector(tcp),
        Schemes::HttpsOnly => builder.https_only().enable_http1().wrap_connector(tcp),
    }
}

/// A TLS client configuration trusting the webpki roots and `extra_roots`, waiting for its
/// client authentication choice.
pub(crate) fn tls_trusting(
    extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
) -> Result<
    rustls::ConfigBuilder<rustls::ClientConfig, rustls::client::WantsClientCert>,
    rustls::Error,
> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    for root in extra_roots {
        roots.add(root)?;
    }
    // The provider is named rather than taken from the process default, which another crate in
    // the binary could set differently (or leave ambiguous).
    Ok(rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots))
}

/// A client over `connector` whose idle connections are kept a minute for reuse.
pub(crate) fn pooled_client<C>(connector: C) -> Client<C, Full<Bytes>>
where
    C: hyper_util::client::legacy::connect::Connect + Clone,
{
    Client::builder(TokioExecutor::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(Duration::from_mins(1))
        .build(connector)
}

/// `HttpConnector` connects to an address literal without consulting its resolver, so literals
/// are vetted here before it sees them.
#[derive(Debug, Clone)]
pub(crate) struct GuardedConnector {
    http: HttpConnector<GuardedResolver>,
    guard: Arc<AddressGuard>,
}

impl Service<Uri> for GuardedConnector {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        if let Some(ip) = literal_ip(&dst)
            && let Err(refused) = self.guard.check_literal(ip)
        {
            return Box::pin(std::future::ready(Err(refused.into())));
        }
        let connecting = self.http.call(dst);
        Box::pin(async move { connecting.await.map_err(Into::into) })
    }
}

fn literal_ip(uri: &Uri) -> Option<IpAddr> {
    let host = uri.host()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_recognised_in_both_families() {
        let cases = [
            ("http://127.0.0.1:8080/x", Some("127.0.0.1")),
            ("https://[::ffff:127.0.0.1]/", Some("::ffff:127.0.0.1")),
            ("https://[2606:4700::1111]:8443/", Some("2606:4700::1111")),
            ("https://example.com/", None),
        ];
        for (raw, want) in cases {
            let uri: Uri = raw.parse().unwrap();
            assert_eq!(
                literal_ip(&uri),
                want.map(|ip| ip.parse().unwrap()),
                "{raw}"
            );
        }
    }
}
