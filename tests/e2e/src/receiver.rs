//! A webhook receiver for the tests: a real HTTP server on 127.0.0.1 that records every request
//! and answers as scripted, so deliveries are counted where they arrive.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use tokio::net::TcpListener;

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy)]
pub struct Answer {
    pub status: u16,
    pub delay: Duration,
}

impl Answer {
    pub const fn status(status: u16) -> Self {
        Self {
            status,
            delay: Duration::ZERO,
        }
    }
    pub const fn slow(status: u16, delay: Duration) -> Self {
        Self { status, delay }
    }
}

#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HashMap<String, String>,
    pub body: String,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("JSON body")
    }
}

#[derive(Debug, Default)]
struct State {
    received: Vec<Received>,
    script: VecDeque<Answer>,
    default: Option<Answer>,
}

#[derive(Debug, Clone)]
pub struct Receiver {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl Receiver {
    /// Answers `default` unless `script` says otherwise.
    pub async fn start(default: Answer) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/hooks", listener.local_addr().expect("address"));
        let state = Arc::new(Mutex::new(State {
            default: Some(default),
            ..State::default()
        }));
        let shared = state.clone();
        crate::http_server::serve(listener, move |req| {
            let state = shared.clone();
            async move { Ok::<_, Infallible>(answer(state, req).await) }
        });
        Self { url, state }
    }

    /// The next requests get these answers, in order.
    pub fn script(&self, answers: &[Answer]) {
        self.state
            .lock()
            .unwrap()
            .script
            .extend(answers.iter().copied());
    }

    pub fn set_default(&self, answer: Answer) {
        self.state.lock().unwrap().default = Some(answer);
    }

    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// Waits until `n` requests arrived (or `limit` passed), then returns all of them.
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Received> {
        let deadline = Instant::now() + limit;
        while self.received().len() < n && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.received()
    }
}

async fn answer(
    state: Arc<Mutex<State>>,
    req: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let headers = req
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let body = req
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let reply = {
        let mut state = state.lock().unwrap();
        state.received.push(Received {
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
            at: Instant::now(),
        });
        state
            .script
            .pop_front()
            .or(state.default)
            .unwrap_or(Answer::status(200))
    };
    tokio::time::sleep(reply.delay).await;
    Response::builder()
        .status(reply.status)
        .body(Full::new(Bytes::from(format!("answered {}", reply.status))))
        .unwrap()
}

/// Verifies `request` under `secret` with an independent verifier: the Standard Webhooks
/// reference library. `Err` holds the library's complaint.
pub fn verify_signature(secret: &str, request: &Received) -> Result<(), String> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys, json, standardwebhooks\nsecret, body, h = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])\nstandardwebhooks.Webhook(secret).verify(body, h)\nprint('verified')"])
        .arg(secret)
        .arg(&request.body)
        .arg(serde_json::to_string(&request.headers).unwrap())
        .output()
        .expect("python3 with standardwebhooks (pip install standardwebhooks)");
    if String::from_utf8_lossy(&out.stdout).trim() == "verified" {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
