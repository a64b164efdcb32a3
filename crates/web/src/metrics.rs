//! Every request timed, by method, route template and status, for the process's metrics
//! (`holdfast_telemetry::metrics`; docs/operations.md lists the series).

use std::time::Instant;

use actix_web::Error;
use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use holdfast_telemetry::metrics::metrics;

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
