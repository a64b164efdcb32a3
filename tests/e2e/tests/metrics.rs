//! An operator can watch Holdfast: a real Prometheus (Debian's `prometheus`) scrapes a running
//! server's `GET /metrics` listener, and the series are read back through Prometheus's own
//! query API, with the labels OpenTelemetry's conventions give them.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use holdfast_e2e::{Answer, Api, Env, Receiver, free_port, on_both_backends};
use reqwest::StatusCode;
use serde_json::Value;

/// Debian's package; `.ci/run` installs it.
const PROMETHEUS: &str = "/usr/bin/prometheus";

/// A Prometheus scraping `target` every 500 ms, stopped when dropped.
struct Prometheus {
    child: Child,
    url: String,
    dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(target: &str) -> Self {
        assert!(
            Path::new(PROMETHEUS).exists(),
            "{PROMETHEUS} is missing: apt-get install prometheus (.ci/run does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 500ms\n  evaluation_interval: 500ms\n\
                 scrape_configs:\n  - job_name: holdfast\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.path().join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.path().join("prometheus.log")).unwrap())
            .spawn()
            .expect("prometheus starts");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
        }
    }

    /// The instant vector `query` answers, waiting (up to 60 s: a loaded machine starts
    /// Prometheus slowly) until it holds a sample.
    async fn series(&self, query: &str) -> Vec<Value> {
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            let answer = client
                .get(format!("{}/api/v1/query", self.url))
                .query(&[("query", query)])
                .send()
                .await;
            if let Ok(answer) = answer
                && answer.status() == StatusCode::OK
            {
                let body: Value = answer.json().await.unwrap();
                if let Some(found) = body["data"]["result"].as_array()
                    && !found.is_empty()
                {
                    return found.clone();
                }
            }
            if Instant::now() >= deadline {
                let targets = client
                    .get(format!("{}/api/v1/targets", self.url))
                    .send()
                    .await
                    .map(|r| r.status().to_string());
                let log = std::fs::read_to_string(self.dir.path().join("prometheus.log"))
                    .unwrap_or_default();
                panic!("Prometheus has no {query}; targets: {targets:?}; its log:\n{log}");
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn value(sample: &Value) -> f64 {
    sample["value"][1].as_str().unwrap().parse().unwrap()
}

async fn prometheus_reads_what_holdfast_measures(env: Env) {
    let platform = env.create_platform("Watched");
    let receiver = Receiver::start(Answer::status(204)).await;
    let metrics = format!("127.0.0.1:{}", free_port());
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_METRICS_BIND", &metrics),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"]}}"#,
        receiver.url
    );
    assert_eq!(
        api.post("/v1/webhooks", key, &hook).await.status,
        StatusCode::CREATED
    );
    let merchant = api.shop(key).await;
    api.auth(key, &merchant).await;
    assert_eq!(
        api.get("/v1/merchants/mid_0000000000000000000000000X", key)
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    receiver.wait_for(1, Duration::from_secs(10)).await;
    // Not on the API's listener: the series are for the operator only.
    assert_eq!(
        api.send(reqwest::Method::GET, "/metrics", None, None)
            .await
            .status,
        StatusCode::NOT_FOUND
    );

    let prometheus = Prometheus::start(&metrics);
    let up = prometheus.series(r#"up{job="holdfast"} == 1"#).await;
    assert_eq!(up.len(), 1, "{up:?}");
    // Requests by method, route template (never the path) and status.
    let auths = prometheus
        .series(r#"http_server_request_duration_seconds_count{http_request_method="POST",http_route="/v1/transactions",http_response_status_code="201"}"#)
        .await;
    assert!((value(&auths[0]) - 1.0).abs() < f64::EPSILON, "{auths:?}");
    let missing = prometheus
        .series(r#"http_server_request_duration_seconds_bucket{http_route="/v1/merchants/{id}",http_response_status_code="404",le="+Inf"}"#)
        .await;
    assert!(value(&missing[0]) >= 1.0, "{missing:?}");
    // The processor's answer, by connection kind and outcome.
    prometheus
        .series(r#"holdfast_processor_call_duration_seconds_count{processor_kind="sandbox",outcome="approved"} == 1"#)
        .await;
    // The delivery, by how it ended; nothing left behind it.
    prometheus
        .series(r#"holdfast_webhook_attempts_total{outcome="2xx"} >= 1"#)
        .await;
    prometheus
        .series("holdfast_webhook_backlog_notifications == 0")
        .await;
    prometheus
        .series("holdfast_webhook_backlog_oldest_age_seconds == 0")
        .await;
    prometheus.series("holdfast_emails_pending == 0").await;
    // The pools: how many connections may open, and how many are in each state.
    prometheus.series("db_client_connection_max > 0").await;
    let states = prometheus.series("db_client_connection_count").await;
    assert_eq!(states.len(), 2, "used and idle: {states:?}");
    prometheus
        .series("db_client_connection_pending_requests == 0")
        .await;
}

on_both_backends!(prometheus_reads_what_holdfast_measures);
