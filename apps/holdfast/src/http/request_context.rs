//! Every request gets an id (`req_…`), echoed in `x-request-id`, carried by every error body and
//! every log line of the request, and one access-log line when it ends. The access log names the
//! path only: query strings can carry a public key (hosted scripts) and are never logged.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, HttpResponse, ResponseError};

tokio::task_local! {
    static REQUEST_ID: String;
}

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");

/// The id of the request being served on this task, if any.
pub fn current_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let id = format!("req_{}", ulid::Ulid::new());
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.path().to_owned();
    let outcome = REQUEST_ID.scope(id.clone(), next.call(req)).await;
    let mut response = match outcome {
        Ok(response) => response,
        // Handlers and the authentication layer render their errors inside the scope; anything
        // else is rendered by actix later, outside it, so the id travels with the error.
        Err(inner) => return Err(WithRequestId { id, inner }.into()),
    };
    response.headers_mut().insert(
        HEADER,
        HeaderValue::from_str(&id).expect("request ids are ASCII"),
    );
    tracing::info!(
        request_id = id,
        method = %method,
        path,
        status = response.status().as_u16(),
        duration_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    Ok(response)
}

/// An error that escaped the request's scope, still rendered with the request's id.
#[derive(Debug, thiserror::Error)]
#[error("{inner}")]
struct WithRequestId {
    id: String,
    inner: Error,
}

impl ResponseError for WithRequestId {
    fn status_code(&self) -> actix_web::http::StatusCode {
        self.inner.as_response_error().status_code()
    }

    fn error_response(&self) -> HttpResponse {
        let mut response = REQUEST_ID.sync_scope(self.id.clone(), || {
            self.inner.as_response_error().error_response()
        });
        if let Ok(value) = HeaderValue::from_str(&self.id) {
            response.headers_mut().insert(HEADER, value);
        }
        response
    }
}
