//! The connector held to Adyen's own published API: every request it can send goes to Stoplight
//! Prism serving `CheckoutService-v71.json` with `--errors`, which answers a request that breaks
//! the document with a validation error (and the test fails); the document's example answers
//! (`Prefer: example=…`, `Prefer: code=…`) come back through the connector's parsing.
//!
//! Prism is installed by `scripts/test` (`tests/processors`, npm); the document is Adyen's,
//! unchanged (`tests/processors/adyen`, MIT). Outside CI a missing Prism skips with a message;
//! with `CI=true` it is a failure.

#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]
#![expect(
    clippy::too_many_lines,
    reason = "the contract is one session with Prism, read top to bottom"
)]

mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use holdfast_domain::payment::decline::DeclineCode;
use holdfast_domain::payment::transaction::{AvsCode, CvvCode};
use holdfast_domain::payment::wallet::WalletKind;
use holdfast_domain::ports::{ProcessorError, ProcessorOp, ProcessorReply};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use support::{Handler, Received, Reply, Server, account, card, connector, request, vault};
use tokio::process::{Child, Command};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Prism serving the document on a port of its own; stopped when dropped.
struct Prism {
    url: String,
    _child: Child,
}

impl Prism {
    async fn start() -> Option<Self> {
        let root = workspace().join("tests/processors");
        let prism = root.join("node_modules/.bin/prism");
        let document = root.join("adyen/CheckoutService-v71.json");
        if !prism.exists() || !document.exists() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "Prism or Adyen's document is missing (CI=true): run scripts/test, which \
                 installs tests/processors"
            );
            eprintln!("skipping: Prism is not installed (npm ci --prefix tests/processors)");
            return None;
        }
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            probe.local_addr().unwrap().port()
        };
        let child = Command::new(prism)
            .args([
                "mock",
                "-h",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "--errors",
            ])
            .arg(document)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("start Prism");
        let url = format!("http://127.0.0.1:{port}");
        for _ in 0..300 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Some(Self { url, _child: child });
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        panic!("Prism did not start listening within a minute");
    }
}

/// Prism's answer to one forwarded request.
#[derive(Debug, Clone)]
struct Answered {
    path: String,
    status: u16,
    content_type: String,
    /// Prism's `sl-violations` header: the rules of the document the request broke.
    violations: Option<String>,
    body: String,
}

/// A proxy in front of Prism that adds the `Prefer` header the test chose, and keeps Prism's
/// answers so a validation error cannot pass unseen.
struct Proxy {
    server: Server,
    prefer: Arc<Mutex<String>>,
    answers: Arc<Mutex<Vec<Answered>>>,
}

impl Proxy {
    async fn start(prism: &Prism) -> Self {
        let prefer = Arc::new(Mutex::new(String::new()));
        let answers = Arc::new(Mutex::new(Vec::new()));
        let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
        let (upstream, chosen, kept) = (prism.url.clone(), prefer.clone(), answers.clone());
        let handler: Handler = Arc::new(move |received: Received| {
            let (client, upstream) = (client.clone(), upstream.clone());
            let (prefer, kept) = (chosen.lock().unwrap().clone(), kept.clone());
            Box::pin(async move {
                // The cancel the connector sends of its own (after a 3-D Secure answer) takes
                // the one example its operation has.
                let prefer = if received.path == "/cancels" && prefer.starts_with("example=") {
                    "example=cancel-with-own-reference".to_owned()
                } else {
                    prefer
                };
                let mut request = hyper::Request::post(format!("{upstream}{}", received.path))
                    .header("content-type", "application/json")
                    .header("prefer", prefer);
                for (name, value) in [
                    ("x-api-key", &received.api_key),
                    ("idempotency-key", &received.idempotency_key),
                ] {
                    if let Some(value) = value {
                        request = request.header(name, value);
                    }
                }
                let body = Full::new(Bytes::from(received.body.to_string()));
                let response = client.request(request.body(body).unwrap()).await.unwrap();
                let status = response.status().as_u16();
                let header = |name: &str| {
                    response
                        .headers()
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                let (content_type, violations) = (
                    header("content-type").unwrap_or_default(),
                    header("sl-violations"),
                );
                let body = response.into_body().collect().await.unwrap().to_bytes();
                let body = String::from_utf8_lossy(&body).into_owned();
                kept.lock().unwrap().push(Answered {
                    path: received.path,
                    status,
                    content_type,
                    violations,
                    body: body.clone(),
                });
                Reply::Json(status, body)
            })
        });
        Self {
            server: Server::start(handler).await,
            prefer,
            answers,
        }
    }

    fn prefer(&self, value: &str) {
        value.clone_into(&mut self.prefer.lock().unwrap());
    }

    /// Prism's answers since the last call; none may be its validation error.
    fn take(&self) -> Vec<Answered> {
        let answers = std::mem::take(&mut *self.answers.lock().unwrap());
        for answer in &answers {
            assert!(
                answer.violations.is_none() && !answer.content_type.contains("problem+json"),
                "what the connector sent to {} breaks Adyen's document: {:?} {}",
                answer.path,
                answer.violations,
                answer.body
            );
        }
        answers
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_fits_adyens_document_and_its_examples_read_back() {
    let Some(prism) = Prism::start().await else {
        return;
    };
    let proxy = Proxy::start(&prism).await;
    let vault = vault();
    let account = account(&proxy.server.url(), vault.as_ref());
    let adyen = connector(vault);
    let call = async |op: ProcessorOp, reference: &str, prefer: &str| {
        proxy.prefer(prefer);
        let reply = adyen
            .call(support::CONNECTION, &account, &request(op, reference))
            .await;
        (reply, proxy.take())
    };

    // Payments: a card with its CVV and name, a stored card without, a wallet's device token.
    let payments = [
        ProcessorOp::Authorize(card(true, None)),
        ProcessorOp::Sale(card(false, None)),
        ProcessorOp::Authorize(card(false, Some(WalletKind::ApplePay))),
        ProcessorOp::Sale(card(false, Some(WalletKind::GooglePay))),
    ];
    for (n, op) in payments.into_iter().enumerate() {
        let (reply, answers) = call(op, &format!("pay{n}"), "example=card-direct").await;
        let reply = reply.expect("approved");
        assert_eq!(
            reply,
            ProcessorReply {
                approved: true,
                approved_amount: 1000,
                avs: AvsCode::Unavailable,
                cvv: CvvCode::Match,
                code: "Authorised".into(),
                decline: None,
                message: "Authorised".into(),
                processor_transaction_id: "993617895204576J".into(),
                submitted: false,
            }
        );
        assert_eq!(answers.len(), 1);
        assert_eq!(answers[0].status, 200);
    }
    let sent = proxy.server.seen();
    assert!(
        sent.iter()
            .all(|r| r.api_key.as_deref() == Some(support::API_KEY)),
        "the API key on every call"
    );
    let keys: Vec<_> = sent
        .iter()
        .map(|r| r.idempotency_key.clone().unwrap())
        .collect();
    assert_eq!(keys, ["txn_pay0", "txn_pay1", "txn_pay2", "txn_pay3"]);
    assert_eq!(sent[0].body["additionalData"]["manualCapture"], "true");
    assert_eq!(sent[1].body["captureDelayHours"], 0);
    assert_eq!(sent[2].body["paymentMethod"]["type"], "networkToken");
    assert!(sent[2].body["mpiData"]["tokenAuthenticationVerificationValue"].is_string());
    assert_eq!(sent[0].body["paymentMethod"]["type"], "scheme");

    // 3-D Secure: refused as a decline, and the payment cancelled by our reference.
    for example in ["card-3d-secure-2-web", "card-3d-secure-redirect"] {
        let (reply, answers) = call(
            ProcessorOp::Authorize(card(true, None)),
            "threeds",
            &format!("example={example}"),
        )
        .await;
        let reply = reply.expect("a decline");
        assert!(!reply.approved, "{example}");
        assert_eq!(reply.decline, Some(DeclineCode::AuthenticationRequired));
        let paths: Vec<_> = answers.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(paths, ["/payments", "/cancels"], "{example}");
    }

    // Modifications of a payment by its PSP reference, and the cancel by our own reference.
    let psp = "993617895204576J".to_owned();
    let modifications = [
        (
            ProcessorOp::Capture {
                processor_transaction_id: psp.clone(),
            },
            "example=capture",
            "/payments/993617895204576J/captures",
            1000,
        ),
        (
            ProcessorOp::Void {
                processor_transaction_id: psp.clone(),
            },
            "example=cancel-with-psp-reference",
            "/payments/993617895204576J/cancels",
            0,
        ),
        (
            ProcessorOp::Refund {
                processor_transaction_id: psp.clone(),
            },
            "example=refund",
            "/payments/993617895204576J/refunds",
            1000,
        ),
        (
            ProcessorOp::Reverse,
            "example=cancel-with-own-reference",
            "/cancels",
            0,
        ),
    ];
    for (op, prefer, path, amount) in modifications {
        let (reply, answers) = call(op, "mod", prefer).await;
        let reply = reply.unwrap_or_else(|e| panic!("{path}: {e}"));
        assert!(reply.approved && reply.code == "received", "{path}");
        assert_eq!(reply.approved_amount, amount, "{path}");
        assert!(!reply.processor_transaction_id.is_empty(), "{path}");
        assert_eq!(answers.len(), 1);
        assert_eq!((answers[0].path.as_str(), answers[0].status), (path, 201));
    }

    // Adyen's errors, in its `ServiceError` shape: the plan's next connection may be tried.
    for code in [400, 401, 403, 422, 500] {
        let (reply, answers) = call(
            ProcessorOp::Authorize(card(true, None)),
            "error",
            &format!("code={code}"),
        )
        .await;
        match reply {
            Err(ProcessorError::Unavailable(why)) => {
                assert!(why.ends_with(&format!("HTTP {code}")), "{why}");
            }
            other => panic!("{code}: {other:?}"),
        }
        assert_eq!(answers[0].status, code);
    }
}

/// The copies the tests serve are Adyen's documents as the shared folder holds them, byte for
/// byte (checked where that folder is present, next to the checkout).
#[test]
fn the_documents_served_are_adyens_unchanged() {
    let shared = workspace().join("../shared/processors/adyen");
    if !shared.exists() {
        eprintln!("skipping: no ../shared/processors/adyen next to this checkout");
        return;
    }
    for name in [
        "CheckoutService-v71.json",
        "Webhooks-v1.json",
        "LICENSE",
        "SOURCE",
    ] {
        let ours = std::fs::read(workspace().join("tests/processors/adyen").join(name)).unwrap();
        let theirs = std::fs::read(shared.join(name)).unwrap();
        assert!(
            ours == theirs,
            "tests/processors/adyen/{name} differs from the shared copy"
        );
    }
}
