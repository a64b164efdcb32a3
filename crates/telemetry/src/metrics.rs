//! What an operator watches, in Prometheus's text format under OpenTelemetry's semantic
//! convention names (dots become underscores, the unit a suffix): how long requests take by
//! route and status, processor calls and webhook attempts by outcome, the backlogs, and the
//! database pool. One registry per process ([`metrics`]), recorded into by the binary's
//! middleware and port decorators, read by its `/metrics` listener (docs/operations.md).

use std::sync::LazyLock;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};

/// OpenTelemetry's advice for `http.server.request.duration`, in seconds.
const HTTP_BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
];

/// A request's attributes: `http.request.method`, `http.route` (the template, never the
/// path, which could hold a key or anything pasted into an id) and `http.response.status_code`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
#[expect(
    clippy::struct_field_names,
    reason = "the label names are OpenTelemetry's attribute names"
)]
struct HttpLabels {
    http_request_method: String,
    http_route: String,
    http_response_status_code: u16,
}

/// A processor call: which kind of connection and how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ProcessorLabels {
    processor_kind: &'static str,
    outcome: &'static str,
}

/// A webhook attempt: how it ended.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct AttemptLabels {
    outcome: &'static str,
}

/// A pool's connections by state (`db.client.connection.count`'s `state`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ConnectionLabels {
    db_client_connection_state: &'static str,
}

/// What is read from the database when scraped, not counted as it happens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gauges {
    /// Notifications not yet delivered or given up on.
    pub notifications_pending: u64,
    /// How long the oldest of them has waited, in seconds (0 when there is none).
    pub oldest_pending_seconds: f64,
    /// Emails in the outbox not yet sent or given up on.
    pub emails_pending: u64,
    /// Pool connections lent out.
    pub connections_used: u64,
    /// Pool connections open and free.
    pub connections_idle: u64,
    /// Requests waiting for a connection.
    pub connections_waiting: u64,
    /// The most connections the pools may open.
    pub connections_max: u64,
}

/// The process's metrics.
pub struct Metrics {
    registry: Registry,
    http: Family<HttpLabels, Histogram>,
    processor: Family<ProcessorLabels, Histogram>,
    attempts: Family<AttemptLabels, Counter>,
    notifications_pending: Gauge,
    oldest_pending: Gauge<f64, AtomicU64>,
    emails_pending: Gauge,
    connections: Family<ConnectionLabels, Gauge>,
    connections_waiting: Gauge,
    connections_max: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

/// The process's one registry.
pub fn metrics() -> &'static Metrics {
    static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);
    &METRICS
}

fn gauge(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Metrics {
    fn new() -> Self {
        let mut registry = Registry::default();
        let http =
            Family::<HttpLabels, Histogram>::new_with_constructor(|| Histogram::new(HTTP_BUCKETS));
        registry.register_with_unit(
            "http_server_request_duration",
            "How long the server took to answer a request, by route template and status.",
            Unit::Seconds,
            http.clone(),
        );
        let processor = Family::<ProcessorLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(HTTP_BUCKETS)
        });
        registry.register_with_unit(
            "holdfast_processor_call_duration",
            "Calls to payment processors by connection kind and outcome (approved, declined, \
             unavailable, timeout, rejected), and how long they took.",
            Unit::Seconds,
            processor.clone(),
        );
        let attempts = Family::<AttemptLabels, Counter>::default();
        registry.register(
            "holdfast_webhook_attempts",
            "Webhook delivery attempts by outcome: the receiver's status class (2xx, 3xx, 4xx, \
             5xx) or why there was no answer (refused, dns, connect, timeout, invalid).",
            attempts.clone(),
        );
        let notifications_pending = Gauge::default();
        registry.register(
            "holdfast_webhook_backlog_notifications",
            "Notifications not yet delivered or given up on.",
            notifications_pending.clone(),
        );
        let oldest_pending = Gauge::<f64, AtomicU64>::default();
        registry.register_with_unit(
            "holdfast_webhook_backlog_oldest_age",
            "How long the oldest undelivered notification has waited.",
            Unit::Seconds,
            oldest_pending.clone(),
        );
        let emails_pending = Gauge::default();
        registry.register(
            "holdfast_emails_pending",
            "Emails in the outbox not yet sent or given up on.",
            emails_pending.clone(),
        );
        let connections = Family::<ConnectionLabels, Gauge>::default();
        registry.register(
            "db_client_connection_count",
            "Database pool connections by state (used, idle).",
            connections.clone(),
        );
        let connections_waiting = Gauge::default();
        registry.register(
            "db_client_connection_pending_requests",
            "Requests waiting for a database pool connection.",
            connections_waiting.clone(),
        );
        let connections_max = Gauge::default();
        registry.register(
            "db_client_connection_max",
            "The most connections the database pools may open.",
            connections_max.clone(),
        );
        Self {
            registry,
            http,
            processor,
            attempts,
            notifications_pending,
            oldest_pending,
            emails_pending,
            connections,
            connections_waiting,
            connections_max,
        }
    }

    /// A request answered with `status` after `seconds`; `route` is its template (`-` when no
    /// route matched), taken as the router gave it (one allocation per request, not two).
    pub fn observe_request(&self, method: &str, route: Option<String>, status: u16, seconds: f64) {
        self.http
            .get_or_create(&HttpLabels {
                http_request_method: method.to_owned(),
                http_route: route.unwrap_or_else(|| "-".to_owned()),
                http_response_status_code: status,
            })
            .observe(seconds);
    }

    /// A processor call of a `kind` connection that ended in `outcome` after `seconds`.
    pub fn observe_processor_call(&self, kind: &'static str, outcome: &'static str, seconds: f64) {
        self.processor
            .get_or_create(&ProcessorLabels {
                processor_kind: kind,
                outcome,
            })
            .observe(seconds);
    }

    /// A webhook attempt that ended in `outcome`.
    pub fn count_attempt(&self, outcome: &'static str) {
        self.attempts
            .get_or_create(&AttemptLabels { outcome })
            .inc();
    }

    /// The values read at scrape time.
    pub fn set(&self, gauges: Gauges) {
        self.notifications_pending
            .set(gauge(gauges.notifications_pending));
        self.oldest_pending.set(gauges.oldest_pending_seconds);
        self.emails_pending.set(gauge(gauges.emails_pending));
        for (state, value) in [
            ("used", gauges.connections_used),
            ("idle", gauges.connections_idle),
        ] {
            self.connections
                .get_or_create(&ConnectionLabels {
                    db_client_connection_state: state,
                })
                .set(gauge(value));
        }
        self.connections_waiting
            .set(gauge(gauges.connections_waiting));
        self.connections_max.set(gauge(gauges.connections_max));
    }

    /// Everything, in Prometheus's text exposition format (`OpenMetrics`).
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each series is written under its OpenTelemetry name, with its labels.
    #[test]
    fn series_carry_their_names_and_labels() {
        let metrics = Metrics::new();
        metrics.observe_request("GET", Some("/v1/merchants/{id}".to_owned()), 404, 0.002);
        metrics.observe_processor_call("sandbox", "approved", 0.01);
        metrics.count_attempt("2xx");
        metrics.set(Gauges {
            notifications_pending: 3,
            oldest_pending_seconds: 1.5,
            emails_pending: 1,
            connections_used: 2,
            connections_idle: 5,
            connections_waiting: 0,
            connections_max: 16,
        });
        let text = metrics.encode();
        for line in [
            r#"http_server_request_duration_seconds_count{http_request_method="GET",http_route="/v1/merchants/{id}",http_response_status_code="404"} 1"#,
            r#"holdfast_processor_call_duration_seconds_count{processor_kind="sandbox",outcome="approved"} 1"#,
            r#"holdfast_webhook_attempts_total{outcome="2xx"} 1"#,
            "holdfast_webhook_backlog_notifications 3",
            "holdfast_webhook_backlog_oldest_age_seconds 1.5",
            "holdfast_emails_pending 1",
            r#"db_client_connection_count{db_client_connection_state="used"} 2"#,
            "db_client_connection_max 16",
        ] {
            assert!(text.contains(line), "{line} not in:\n{text}");
        }
    }
}
