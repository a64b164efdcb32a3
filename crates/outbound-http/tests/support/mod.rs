//! A tiny HTTP/1.1 receiver on 127.0.0.1 that records what reaches it.

#![allow(dead_code)] // each test binary uses its own part of this
#![expect(
    clippy::unwrap_used,
    reason = "test scaffolding: a panic is the failure report"
)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use holdfast_domain::ports::WebhookPost;
use holdfast_outbound_http::{HyperSender, SenderConfig};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::HeaderMap;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// What the receiver answers every request with.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Reply {
    pub fn new(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: body.into(),
            delay: Duration::ZERO,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
}

#[derive(Debug)]
pub struct Receiver {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    connections: Arc<AtomicUsize>,
}

impl Receiver {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

/// Starts a receiver; it lives as long as the test's runtime.
pub async fn receiver(reply: Reply) -> Receiver {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let connections = Arc::new(AtomicUsize::new(0));
    let (seen_in, connections_in) = (Arc::clone(&seen), Arc::clone(&connections));
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            connections_in.fetch_add(1, Ordering::SeqCst);
            let (seen, reply) = (Arc::clone(&seen_in), reply.clone());
            let service =
                service_fn(move |request| answer(request, Arc::clone(&seen), reply.clone()));
            tokio::spawn(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
        }
    });
    Receiver {
        addr,
        seen,
        connections,
    }
}

async fn answer(
    request: Request<Incoming>,
    seen: Arc<Mutex<Vec<Seen>>>,
    reply: Reply,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    seen.lock().unwrap().push(Seen {
        path: parts.uri.path().to_owned(),
        headers: parts.headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    tokio::time::sleep(reply.delay).await;
    let mut response = Response::builder().status(reply.status);
    for (name, value) in &reply.headers {
        response = response.header(*name, value);
    }
    Ok(response.body(Full::new(Bytes::from(reply.body))).unwrap())
}

/// A sender that may reach loopback receivers.
pub fn loopback_sender() -> HyperSender {
    sender_with(SenderConfig {
        allow_networks: vec!["127.0.0.0/8".parse().unwrap()],
        ..SenderConfig::default()
    })
}

pub fn sender_with(config: SenderConfig) -> HyperSender {
    HyperSender::new(config).unwrap()
}

pub fn post_to(url: String) -> WebhookPost {
    WebhookPost {
        url,
        message_id: "msg_2Q4e7Kc9".to_owned(),
        timestamp: 1_700_000_123,
        body: r#"{"type":"transaction.created","data":{"id":"tx_1"}}"#.to_owned(),
        // `whsec_` + base64 of 32 bytes of 42 (the secret format the API hands out).
        secrets: vec!["whsec_KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=".to_owned()],
        custom_header: None,
        timeout: Duration::from_secs(5),
    }
}
