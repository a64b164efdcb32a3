//! Apple Pay merchant validation against a gateway on 127.0.0.1 that, like Apple's, serves a
//! certificate for `apple-pay-gateway-cert.apple.com` and demands a client certificate. The
//! certificates are made here; everything on our side of the socket is the production code.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use holdfast_domain::payment::wallet::MerchantValidation;
use holdfast_domain::ports::ApplePayGateway;

use super::{AppleGateway, AppleGatewayConfig, MerchantIdentity, Reach};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

const GATEWAY_HOST: &str = "apple-pay-gateway-cert.apple.com";
const SESSION: &str = r#"{"epochTimestamp":1700000000000,"expiresAt":1700003600000,"merchantSessionIdentifier":"SSH0123","nonce":"a1b2c3","merchantIdentifier":"4F2A","domainName":"shop.example","displayName":"Shop","signature":"308006"}"#;

/// A certificate authority of the test's own.
struct Authority {
    issuer: Issuer<'static, KeyPair>,
    der: CertificateDer<'static>,
}

impl Authority {
    fn new(name: &str) -> Self {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let der = params.self_signed(&key).unwrap().der().clone();
        Self {
            issuer: Issuer::new(params, key),
            der,
        }
    }

    /// A leaf certificate and its key, as PEM.
    fn issue(
        &self,
        names: &[&str],
        common_name: &str,
        usage: ExtendedKeyUsagePurpose,
    ) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
                .unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// What the gateway saw of one exchange.
#[derive(Debug, Clone)]
struct Seen {
    server_name: Option<String>,
    client_certificates: usize,
    path: String,
    body: serde_json::Value,
}

struct Gateway {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    handshakes_failed: Arc<Mutex<usize>>,
}

/// A gateway that trusts client certificates from `clients` and answers every request with
/// `status` and `body` after `delay`.
async fn gateway(
    server: &Authority,
    clients: &Authority,
    status: u16,
    body: &'static str,
    delay: Duration,
) -> Gateway {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut client_roots = rustls::RootCertStore::empty();
    client_roots.add(clients.der.clone()).unwrap();
    let verifier =
        WebPkiClientVerifier::builder_with_provider(Arc::new(client_roots), provider.clone())
            .build()
            .unwrap();
    let (cert_pem, key_pem) = server.issue(
        &[GATEWAY_HOST],
        GATEWAY_HOST,
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let cert = CertificateDer::from_pem_slice(cert_pem.as_bytes()).unwrap();
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(vec![cert], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handshakes_failed = Arc::new(Mutex::new(0));
    let (seen_in, failed_in) = (Arc::clone(&seen), Arc::clone(&handshakes_failed));
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let Ok(tls) = acceptor.accept(stream).await else {
                *failed_in.lock().unwrap() += 1;
                continue;
            };
            let (_, session) = tls.get_ref();
            let server_name = session.server_name().map(str::to_owned);
            let client_certificates = session.peer_certificates().map_or(0, <[_]>::len);
            let seen = Arc::clone(&seen_in);
            let service = service_fn(move |request: Request<Incoming>| {
                let seen = Arc::clone(&seen);
                let server_name = server_name.clone();
                async move {
                    let path = request.uri().path().to_owned();
                    let bytes = request.into_body().collect().await.unwrap().to_bytes();
                    seen.lock().unwrap().push(Seen {
                        server_name,
                        client_certificates,
                        path,
                        body: serde_json::from_slice(&bytes).unwrap_or_default(),
                    });
                    tokio::time::sleep(delay).await;
                    Ok::<_, Infallible>(
                        Response::builder()
                            .status(status)
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from_static(body.as_bytes())))
                            .unwrap(),
                    )
                }
            });
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(tls), service));
        }
    });
    Gateway {
        addr,
        seen,
        handshakes_failed,
    }
}

fn client(
    identity_from: &Authority,
    trusted_root: &Authority,
    to: &Gateway,
    timeout: Duration,
) -> AppleGateway {
    let (cert, key) = identity_from.issue(
        &[],
        "merchant.example.shop",
        ExtendedKeyUsagePurpose::ClientAuth,
    );
    let identity =
        MerchantIdentity::from_pem(cert.as_bytes(), key.as_bytes(), "merchant.example.shop")
            .unwrap();
    AppleGateway::reaching(
        identity,
        AppleGatewayConfig { timeout },
        Reach {
            extra_roots: vec![trusted_root.der.clone()],
            pinned: Some(to.addr),
            // The stand-in listens on loopback, which the guard refuses unless told.
            allow: vec!["127.0.0.0/8".parse().unwrap()],
        },
    )
    .unwrap()
}

fn validation() -> MerchantValidation {
    MerchantValidation {
        validation_url: format!("https://{GATEWAY_HOST}/paymentservices/startSession"),
        domain: "shop.example".to_owned(),
        display_name: "Shop".to_owned(),
    }
}

#[tokio::test]
async fn the_session_comes_back_as_apple_sent_it_over_mutual_tls() {
    let (server_ca, merchant_ca) = (Authority::new("Gateway CA"), Authority::new("Merchant CA"));
    let gateway = gateway(&server_ca, &merchant_ca, 200, SESSION, Duration::ZERO).await;
    let apple = client(&merchant_ca, &server_ca, &gateway, Duration::from_secs(5));

    let session = apple.start_session(&validation()).await.unwrap();

    assert_eq!(session, SESSION);
    let seen = gateway.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].server_name.as_deref(), Some(GATEWAY_HOST));
    assert_eq!(seen[0].client_certificates, 1);
    assert_eq!(seen[0].path, "/paymentservices/startSession");
    assert_eq!(
        seen[0].body,
        serde_json::json!({
            "merchantIdentifier": "merchant.example.shop",
            "displayName": "Shop",
            "initiative": "web",
            "initiativeContext": "shop.example",
        })
    );
}

#[tokio::test]
async fn every_way_of_not_getting_a_session_is_a_failure_in_our_words() {
    let (server_ca, merchant_ca, stranger_ca) = (
        Authority::new("Gateway CA"),
        Authority::new("Merchant CA"),
        Authority::new("Someone else's CA"),
    );
    // (what the gateway does, whose certificate we present, which root we trust, expected)
    let refused = gateway(
        &server_ca,
        &merchant_ca,
        400,
        r#"{"statusMessage":"Payment Services Exception merchantId=4F2A unregistered domain"}"#,
        Duration::ZERO,
    )
    .await;
    let not_json = gateway(
        &server_ca,
        &merchant_ca,
        200,
        "<html>maintenance</html>",
        Duration::ZERO,
    )
    .await;
    let not_a_session = gateway(
        &server_ca,
        &merchant_ca,
        200,
        r#"{"hello":"world"}"#,
        Duration::ZERO,
    )
    .await;
    let slow = gateway(
        &server_ca,
        &merchant_ca,
        200,
        SESSION,
        Duration::from_secs(5),
    )
    .await;
    let ok = gateway(&server_ca, &merchant_ca, 200, SESSION, Duration::ZERO).await;
    let cases: [(&str, &Gateway, &Authority, &Authority, &str); 6] = [
        (
            "Apple refuses",
            &refused,
            &merchant_ca,
            &server_ca,
            "Apple Pay's gateway refused the merchant validation (it answered 400)",
        ),
        (
            "not JSON",
            &not_json,
            &merchant_ca,
            &server_ca,
            "Apple Pay's gateway answered something other than a merchant session",
        ),
        (
            "JSON, not a session",
            &not_a_session,
            &merchant_ca,
            &server_ca,
            "Apple Pay's gateway answered something other than a merchant session",
        ),
        (
            "too slow",
            &slow,
            &merchant_ca,
            &server_ca,
            "Apple Pay's gateway did not answer in time",
        ),
        (
            "our certificate is not the merchant's",
            &ok,
            &stranger_ca,
            &server_ca,
            "Apple Pay's gateway could not be reached",
        ),
        (
            "the gateway's certificate is not trusted",
            &ok,
            &merchant_ca,
            &stranger_ca,
            "Apple Pay's gateway could not be reached",
        ),
    ];
    for (case, gateway, identity, root, expected) in cases {
        let apple = client(identity, root, gateway, Duration::from_millis(500));
        let failure = apple.start_session(&validation()).await.unwrap_err();
        assert_eq!(failure.0, expected, "{case}");
        assert!(
            !failure.0.contains("unregistered"),
            "{case}: Apple's words stay in the log"
        );
    }
    // The untrusted client certificate was refused in the handshake; the gateway whose
    // certificate we did not trust was never sent a request.
    for _ in 0..100 {
        if *ok.handshakes_failed.lock().unwrap() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*ok.handshakes_failed.lock().unwrap(), 2);
    assert!(ok.seen.lock().unwrap().is_empty());
}

/// The guard stands in front of Apple's gateway as of every webhook: a URL naming an address
/// (which no resolver sees) is vetted too, and a host pinned to a private address is refused.
#[tokio::test]
async fn the_gateway_is_reached_only_at_public_addresses() {
    let (server_ca, merchant_ca) = (Authority::new("Gateway CA"), Authority::new("Merchant CA"));
    let gateway = gateway(&server_ca, &merchant_ca, 200, SESSION, Duration::ZERO).await;
    let (cert, key) = merchant_ca.issue(
        &[],
        "merchant.example.shop",
        ExtendedKeyUsagePurpose::ClientAuth,
    );
    let identity = || MerchantIdentity::from_pem(cert.as_bytes(), key.as_bytes(), "m").unwrap();
    let unguarded = |pinned| Reach {
        extra_roots: vec![server_ca.der.clone()],
        pinned,
        allow: Vec::new(),
    };
    let config = AppleGatewayConfig {
        timeout: Duration::from_secs(2),
    };
    let literal = MerchantValidation {
        validation_url: format!("https://{}/paymentservices/startSession", gateway.addr),
        ..validation()
    };
    let by_address = AppleGateway::reaching(identity(), config, unguarded(None)).unwrap();
    let by_name =
        AppleGateway::reaching(identity(), config, unguarded(Some(gateway.addr))).unwrap();
    for (apple, asked) in [(&by_address, literal), (&by_name, validation())] {
        let failure = apple.start_session(&asked).await.unwrap_err();
        assert_eq!(
            failure.0, "Apple Pay's gateway resolves to an address that is not public",
            "{}",
            asked.validation_url
        );
    }
    assert!(
        gateway.seen.lock().unwrap().is_empty(),
        "nothing reached the gateway"
    );
}

#[test]
fn an_identity_needs_a_certificate_and_a_key() {
    let ca = Authority::new("Merchant CA");
    let (cert, key) = ca.issue(
        &[],
        "merchant.example.shop",
        ExtendedKeyUsagePurpose::ClientAuth,
    );
    let cases = [
        (
            "",
            key.as_str(),
            "the certificate file holds no PEM certificate",
        ),
        (
            cert.as_str(),
            "",
            "the key file holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
        ),
        (
            cert.as_str(),
            cert.as_str(),
            "the key file holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
        ),
    ];
    for (cert, key, expected) in cases {
        let err =
            MerchantIdentity::from_pem(cert.as_bytes(), key.as_bytes(), "merchant.x").unwrap_err();
        assert_eq!(err.to_string(), expected);
    }
    // A key that is not the certificate's is caught when the client is built, not at Apple.
    let (other_cert, _) = ca.issue(&[], "other", ExtendedKeyUsagePurpose::ClientAuth);
    let mismatched =
        MerchantIdentity::from_pem(other_cert.as_bytes(), key.as_bytes(), "merchant.x").unwrap();
    assert!(AppleGateway::new(mismatched, AppleGatewayConfig::default()).is_err());
}
