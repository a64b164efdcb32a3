//! Where the process's metrics (`holdfast_telemetry::metrics`) come from and go: a middleware
//! timing every request, decorators counting processor calls and webhook attempts at their
//! ports, and `GET /metrics` on a listener of its own, which reads the backlogs and the pools
//! from the database when scraped. docs/operations.md lists the series.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServerHandle, ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{App, Error, HttpResponse, HttpServer, web};
use async_trait::async_trait;
use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorConnection};
use holdfast_domain::ports::{
    PostResult, Processor, ProcessorError, ProcessorReply, ProcessorRequest, SendFailure,
    WebhookPost, WebhookSender,
};
use holdfast_persistence::Database;
use holdfast_telemetry::metrics::{Gauges, metrics};

/// Times a request from its arrival to its answer, by method, route template and status.
pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let started = Instant::now();
    // A standard method clones without allocating.
    let method = req.method().clone();
    let response = next.call(req).await?;
    metrics().observe_request(
        method.as_str(),
        response.request().match_pattern(),
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    Ok(response)
}

/// A processor port that times each call and counts its outcome.
pub struct MeteredProcessor(pub Arc<dyn Processor>);

impl std::fmt::Debug for MeteredProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MeteredProcessor")
    }
}

#[async_trait]
impl Processor for MeteredProcessor {
    async fn call(
        &self,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) -> Result<ProcessorReply, ProcessorError> {
        let started = Instant::now();
        let result = self.0.call(connection, request).await;
        let kind = match connection.account {
            ProcessorAccount::Sandbox => "sandbox",
            ProcessorAccount::Adyen(_) => "adyen",
        };
        let outcome = match &result {
            Ok(reply) if reply.submitted => "submitted",
            Ok(reply) if reply.approved => "approved",
            Ok(_) => "declined",
            Err(ProcessorError::Unavailable(_)) => "unavailable",
            Err(ProcessorError::Timeout) => "timeout",
        };
        metrics().observe_processor_call(kind, outcome, started.elapsed().as_secs_f64());
        result
    }
}

/// A webhook sender that counts each attempt by how it ended.
pub struct MeteredSender(pub Arc<dyn WebhookSender>);

impl std::fmt::Debug for MeteredSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MeteredSender")
    }
}

#[async_trait]
impl WebhookSender for MeteredSender {
    async fn post(&self, post: &WebhookPost) -> PostResult {
        let result = self.0.post(post).await;
        metrics().count_attempt(match &result {
            PostResult::Answered { status, .. } => match status {
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                _ => "5xx",
            },
            PostResult::Failed(SendFailure::Refused(_)) => "refused",
            PostResult::Failed(SendFailure::Dns(_)) => "dns",
            PostResult::Failed(SendFailure::Connect(_)) => "connect",
            PostResult::Failed(SendFailure::Timeout) => "timeout",
            PostResult::Failed(SendFailure::Invalid(_)) => "invalid",
        });
        result
    }
}

fn count(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

/// `GET /metrics`: the gauges read now, then everything in Prometheus's text format.
async fn scrape(database: web::Data<Database>) -> HttpResponse {
    let pools = database.pool_usage();
    let mut gauges = Gauges {
        connections_used: count(pools.used),
        connections_idle: count(pools.idle),
        connections_waiting: count(pools.waiting),
        connections_max: count(pools.max),
        ..Gauges::default()
    };
    match database.backlogs().await {
        Ok(backlogs) => {
            let now = time::OffsetDateTime::now_utc();
            gauges.notifications_pending = backlogs.notifications;
            gauges.emails_pending = backlogs.emails;
            gauges.oldest_pending_seconds = backlogs.oldest_notification.map_or(0.0, |oldest| {
                // Both within years 1 to 9999: the difference cannot overflow.
                let waited = now.unix_timestamp().saturating_sub(oldest.unix_timestamp());
                #[expect(clippy::cast_precision_loss, reason = "seconds, far below 2^52")]
                let seconds = waited.max(0) as f64;
                seconds
            });
        }
        // The series keep their last values; the scrape still answers, and says why.
        Err(err) => tracing::warn!(error = %err, "metrics: the backlogs could not be read"),
    }
    metrics().set(gauges);
    HttpResponse::Ok()
        .content_type("application/openmetrics-text; version=1.0.0; charset=utf-8")
        .body(metrics().encode())
}

/// Serves `GET /metrics` on `address` (one worker) until the handle stops it.
pub fn serve(
    address: SocketAddr,
    database: Database,
) -> anyhow::Result<(ServerHandle, impl Future<Output = std::io::Result<()>>)> {
    let database = web::Data::new(database);
    let server = HttpServer::new(move || {
        App::new()
            .app_data(database.clone())
            .route("/metrics", web::get().to(scrape))
    })
    .workers(1)
    .disable_signals()
    .bind(address)?
    .run();
    tracing::info!(address = %address, "metrics listening");
    Ok((server.handle(), server))
}
