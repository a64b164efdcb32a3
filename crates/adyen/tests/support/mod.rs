//! What the connector's tests stand up: an HTTP server on 127.0.0.1 that answers as the test
//! says (a fake Adyen, or a proxy to Prism), recording every request it received; and the
//! connector, the account and the requests it is driven with.

#![allow(dead_code, reason = "each test file uses its own part of the support")]
#![expect(
    clippy::unwrap_used,
    reason = "test support: a panic is the failure report"
)]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use holdfast_adyen::{AdyenConfig, AdyenConnector};
use holdfast_domain::ids::TxnId;
use holdfast_domain::merchant::Currency;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::adyen::{AdyenAccount, NewAdyenAccount, Secret, UrlPolicy};
use holdfast_domain::payment::card::{CardData, CardNumber, CardholderName, Cvv, Expiration};
use holdfast_domain::payment::wallet::{WalletKind, WalletProof};
use holdfast_domain::ports::{CardVault, ProcessorOp, ProcessorRequest};
use holdfast_vault::{AesGcmVault, VaultKey};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub const API_KEY: &str = "AQEyhmfxK4PNbhZGw0m/n3Q5qf3VYp5eHZJTfEA0SnT87bnhmUuNnMR1xGVMzlp";
pub const HMAC_KEY: &str = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
pub const CONNECTION: &str = "midCon_adyen1";

/// A request as the server received it.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub api_key: Option<String>,
    pub idempotency_key: Option<String>,
    pub body: serde_json::Value,
}

/// How the server answers one request.
pub enum Reply {
    Json(u16, String),
    /// The same answer, after a wait.
    After(Duration, Box<Reply>),
    /// The connection is closed once the request is read: no answer at all.
    Hangup,
}

pub type Handler =
    Arc<dyn Fn(Received) -> Pin<Box<dyn Future<Output = Reply> + Send>> + Send + Sync>;

/// A server on 127.0.0.1 answering by `handler`.
pub struct Server {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Received>>>,
}

impl Server {
    pub async fn start(handler: Handler) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let (handler, log) = (handler.clone(), log.clone());
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let (handler, log) = (handler.clone(), log.clone());
                        async move {
                            let received = read(request).await;
                            log.lock().unwrap().push(received.clone());
                            answer(handler(received).await).await
                        }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self { addr, seen }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn seen(&self) -> Vec<Received> {
        self.seen.lock().unwrap().clone()
    }
}

async fn read(request: Request<Incoming>) -> Received {
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (api_key, idempotency_key) = (header("x-api-key"), header("idempotency-key"));
    let path = request.uri().path().to_owned();
    let bytes = request.into_body().collect().await.unwrap().to_bytes();
    Received {
        path,
        api_key,
        idempotency_key,
        body: serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    }
}

type Answering =
    Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, std::io::Error>> + Send>>;

/// `Err` closes the connection without an answer.
fn answer(reply: Reply) -> Answering {
    Box::pin(async move {
        match reply {
            Reply::Json(status, body) => Ok(Response::builder()
                .status(status)
                .header("content-type", "application/json")
                .body(Full::new(Bytes::from(body)))
                .unwrap()),
            Reply::After(wait, reply) => {
                tokio::time::sleep(wait).await;
                answer(*reply).await
            }
            Reply::Hangup => Err(std::io::Error::other("hung up")),
        }
    })
}

/// A handler from a plain function of the request.
pub fn answering(f: impl Fn(&Received) -> Reply + Send + Sync + 'static) -> Handler {
    Arc::new(move |received| {
        let reply = f(&received);
        Box::pin(async move { reply })
    })
}

pub fn vault() -> Arc<dyn CardVault> {
    let key = VaultKey::from_base64("k1", &VaultKey::generate_base64()).unwrap();
    Arc::new(AesGcmVault::new(key, Vec::new()))
}

/// The account of connection `CONNECTION`, at `checkout_url`, sealed by `vault`.
pub fn account(checkout_url: &str, vault: &dyn CardVault) -> AdyenAccount {
    NewAdyenAccount {
        merchant_account: "HoldfastECOM".into(),
        checkout_url: Some(checkout_url.into()),
        api_key: Secret::new(API_KEY.into()),
        hmac_key: Secret::new(HMAC_KEY.into()),
        notification_username: "adyen".into(),
        notification_password: Secret::new("notification-password".into()),
    }
    .seal(
        Mode::Test,
        UrlPolicy {
            allow_loopback: true,
        },
        CONNECTION,
        vault,
    )
    .unwrap()
}

pub fn connector(vault: Arc<dyn CardVault>) -> AdyenConnector {
    AdyenConnector::new(
        AdyenConfig {
            return_url: "https://holdfast.example/".into(),
            allow_loopback: true,
        },
        vault,
    )
    .unwrap()
}

pub fn card(cvv: bool, wallet: Option<WalletKind>) -> CardData {
    CardData {
        number: CardNumber::parse("4111111111111111").unwrap(),
        cvv: cvv.then(|| Cvv::parse("737").unwrap()),
        expiration: Expiration::parse_mmyy("0330").unwrap(),
        wallet: wallet.map(|kind| WalletProof {
            kind,
            cryptogram: Some("AgAAAAAABk4DWZ4C28yUQAAAAAA=".into()),
            eci: Some("07".into()),
        }),
        name: cvv.then(|| CardholderName::parse("Jane Doe").unwrap()),
    }
}

pub fn request(op: ProcessorOp, reference: &str) -> ProcessorRequest {
    ProcessorRequest {
        op,
        amount: 1000,
        currency: Currency::parse("USD").unwrap(),
        reference: TxnId::from_suffix(reference),
    }
}
