//! Liveness and readiness, outside `/v1` and without authentication.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::state::AppState;

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.route("/healthz", web::get().to(healthz))
        .route("/readyz", web::get().to(readyz));
}

/// Up, and how many log lines standard error could not take (its reader gone or too slow).
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({
        "status": "ok",
        "logLinesDropped": holdfast_telemetry::log_pipe::dropped_lines(),
    }))
}

/// Ready when the database answers and the process is not stopping; a load balancer stops
/// sending traffic otherwise.
async fn readyz(state: web::Data<AppState>) -> HttpResponse {
    if state.stopping.load(std::sync::atomic::Ordering::Relaxed) {
        return HttpResponse::ServiceUnavailable().json(json!({ "status": "stopping" }));
    }
    match state.ping_database().await {
        Ok(()) => HttpResponse::Ok().json(json!({ "status": "ready" })),
        Err(err) => {
            tracing::warn!(error = %err, "database unreachable");
            HttpResponse::ServiceUnavailable()
                .json(json!({ "status": "unavailable", "database": "unreachable" }))
        }
    }
}
