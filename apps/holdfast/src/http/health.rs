//! Liveness and readiness, outside `/v1` and without authentication.

use actix_web::{HttpResponse, web};
use serde_json::json;

use crate::state::AppState;

/// As resources, not `cfg.route`s: another method is then a 405 naming `GET`, not a 404.
pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/healthz").get(healthz))
        .service(web::resource("/readyz").get(readyz));
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
