//! A webhook receiver for `bench/webhooks.sh`: answers 204 at once, counts distinct
//! notifications (by `webhook-id`), and measures, per notification, the time from its
//! `createdOn` (when the event was written) to its first request here. Exits after the first
//! request and then `IDLE_MS` of silence, printing one JSON line of figures.
//!
//! Usage: `webhook_receiver 127.0.0.1:18300 [IDLE_MS]`.
#![expect(clippy::unwrap_used, reason = "a bench tool: a panic is the report")]
#![expect(
    clippy::cast_possible_truncation,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    reason = "percentile arithmetic on counts far below 2^52"
)]
#![expect(clippy::print_stdout, reason = "the figures are the output")]

use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::net::TcpListener;

#[derive(Default)]
struct Tally {
    seen: HashSet<String>,
    requests: u64,
    latencies_ms: Vec<f64>,
    first: Option<Instant>,
    last: Option<Instant>,
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:18300".into());
    let idle = Duration::from_millis(args.next().map_or(3000, |a| a.parse().unwrap()));
    let listener = TcpListener::bind(&address).await.unwrap();
    let tally = Arc::new(Mutex::new(Tally::default()));
    let accept = {
        let tally = tally.clone();
        tokio::spawn(async move {
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let tally = tally.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |req: Request<hyper::body::Incoming>| {
                        let tally = tally.clone();
                        async move { Ok::<_, Infallible>(record(&tally, req).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        })
    };
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let t = tally.lock().unwrap();
        if t.last.is_some_and(|last| last.elapsed() >= idle) {
            break;
        }
    }
    accept.abort();
    let mut t = tally.lock().unwrap();
    let span = t
        .last
        .unwrap()
        .duration_since(t.first.unwrap())
        .as_secs_f64();
    t.latencies_ms.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        let i = ((t.latencies_ms.len() as f64 - 1.0) * p).round() as usize;
        t.latencies_ms[i]
    };
    println!(
        r#"{{"notifications": {}, "requests": {}, "seconds": {span:.3}, "per_second": {:.0}, "p50_ms": {:.1}, "p99_ms": {:.1}, "max_ms": {:.1}}}"#,
        t.seen.len(),
        t.requests,
        t.seen.len() as f64 / span.max(0.001),
        pct(0.50),
        pct(0.99),
        pct(1.0),
    );
}

async fn record(
    tally: &Mutex<Tally>,
    req: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let id = req
        .headers()
        .get("webhook-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = req
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let now = OffsetDateTime::now_utc();
    let created = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| {
            v["createdOn"]
                .as_str()
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        });
    let mut t = tally.lock().unwrap();
    t.requests += 1;
    let at = Instant::now();
    t.first.get_or_insert(at);
    t.last = Some(at);
    if t.seen.insert(id)
        && let Some(created) = created
    {
        t.latencies_ms
            .push((now - created).as_seconds_f64() * 1000.0);
    }
    drop(t);
    Response::builder()
        .status(204)
        .body(Full::new(Bytes::new()))
        .unwrap()
}
