//! `GET /metrics` on a listener of its own: the process's metrics (`holdfast_telemetry::metrics`,
//! counted where they happen: requests in `holdfast_web::metrics`, processor calls in
//! `holdfast_processors::MeteredProcessor`, webhook attempts in
//! `holdfast_outbound_http::MeteredSender`), with the backlogs and the pools read from the
//! database when scraped. docs/operations.md lists the series.

use std::future::Future;
use std::net::SocketAddr;

use actix_web::dev::ServerHandle;
use actix_web::{App, HttpResponse, HttpServer, web};
use holdfast_persistence::Database;
use holdfast_telemetry::metrics::{Gauges, metrics};

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
