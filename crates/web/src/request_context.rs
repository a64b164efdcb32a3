//! Every request gets an id, echoed in `x-request-id`, carried by every error body and by every
//! log line of the request (a `request` span with `request_id`, which a spawned payment task
//! inherits), and one access-log line when it ends. The id is the client's own `x-request-id`
//! when it sent a well-formed one (`trace::client_request_id`), else ours (`req_…`). A valid
//! W3C `traceparent` puts the request in the client's trace: its trace id and our span's id
//! are on every line, the answer's `traceparent` names our span as the parent, and so does
//! every call to a processor the request makes (`holdfast_telemetry::trace_context`). The access log names the
//! route's template (`/v1/merchants/{id}`), never the path or the query: both are the client's,
//! and could carry a public key (hosted scripts) or anything pasted into an id.
//!
//! It also gives every response the headers a payments API owes its clients: `nosniff`
//! everywhere, `no-store` on every response that does not set its own caching (bodies carry key
//! values and signing secrets), and turns any
//! refusal a lower layer rendered as plain text (actix's 413, 404, 405…) into the JSON envelope.

use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{
    ALLOW, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, HeaderMap, HeaderName,
    HeaderValue, X_CONTENT_TYPE_OPTIONS,
};
use actix_web::middleware::Next;
use actix_web::{Error, HttpResponse, ResponseError};
use holdfast_telemetry::trace_context::{self, Traceparent};
use tracing::Instrument;

mod trace;

pub use trace::{TraceParent, client_request_id};

tokio::task_local! {
    static REQUEST_ID: String;
}

pub const HEADER: HeaderName = HeaderName::from_static("x-request-id");
/// The W3C trace context header.
pub const TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");

/// Names the caller on the request's log lines from now on: its platform, its key's id and
/// its mode (never the key itself).
pub fn name_caller(who: &holdfast_domain::auth::Principal) {
    let span = tracing::Span::current();
    span.record("platform", tracing::field::display(&who.scope.platform));
    if let Some(key) = &who.key_id {
        span.record("key", tracing::field::display(key));
    }
    span.record("mode", who.scope.mode.as_str());
}

/// The id of the request being served on this task, if any.
pub fn current_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// `future` carrying this request's id and log span, for work spawned onto a task of its own:
/// its refusals and logs then name the request like the handler's do.
/// Both are read here, on the request's task, not when the future first runs on its own.
/// So is the trace context its calls to processors send.
pub fn with_current_id<F: Future>(future: F) -> impl Future<Output = F::Output> {
    let id = current_id();
    let traceparent = trace_context::current();
    let future = trace_context::scope(traceparent, future.instrument(tracing::Span::current()));
    async move {
        match id {
            Some(id) => REQUEST_ID.scope(id, future).await,
            None => future.await,
        }
    }
}

pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    let header = |name: &HeaderName| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let id = header(&HEADER)
        .as_deref()
        .and_then(client_request_id)
        .map_or_else(|| format!("req_{}", ulid::Ulid::new()), ToOwned::to_owned);
    let trace = header(&TRACEPARENT)
        .as_deref()
        .and_then(TraceParent::parse)
        .map(|parent| (trace::new_span_id(), parent));
    let started = Instant::now();
    let method = req.method().clone();
    // Every line logged while the request runs (services, stores, adapters) carries its id,
    // and, once its key is known, whose it is (`name_caller`).
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        trace_id = tracing::field::Empty,
        span_id = tracing::field::Empty,
        parent_span_id = tracing::field::Empty,
        platform = tracing::field::Empty,
        key = tracing::field::Empty,
        mode = tracing::field::Empty
    );
    if let Some((span_id, parent)) = &trace {
        span.record("trace_id", parent.trace_id.as_str());
        span.record("span_id", span_id.as_str());
        span.record("parent_span_id", parent.parent_id.as_str());
    }
    // What this request calls (a processor) joins the client's trace under our span.
    let outgoing = trace
        .as_ref()
        .and_then(|(span_id, parent)| Traceparent::new(&parent.trace_id, span_id, &parent.flags));
    let outcome = REQUEST_ID
        .scope(id.clone(), trace_context::scope(outgoing, next.call(req)))
        .instrument(span)
        .await;
    let mut response = match outcome {
        Ok(response) => response.map_into_boxed_body(),
        // Handlers and the authentication layer render their errors inside the scope; anything
        // else is rendered by actix later, outside it, so the id travels with the error.
        Err(inner) => return Err(WithRequestId { id, inner }.into()),
    };
    if needs_envelope(&response) {
        let mut envelope = REQUEST_ID.sync_scope(id.clone(), || {
            crate::ApiError::for_status(response.status()).error_response()
        });
        // A resource's own 405 says what it takes; the envelope keeps saying it.
        if let Some(allow) = response.headers().get(ALLOW) {
            envelope.headers_mut().insert(ALLOW, allow.clone());
        }
        response = response.into_response(envelope);
    }
    let route = response.request().match_pattern();
    stamp(response.headers_mut(), &id);
    if let Some((span_id, parent)) = &trace
        && let Ok(value) = HeaderValue::from_str(&parent.child(span_id))
    {
        response.headers_mut().insert(TRACEPARENT, value);
    }
    tracing::info!(
        request_id = id,
        trace_id = trace.as_ref().map(|(_, parent)| parent.trace_id.as_str()),
        method = %method,
        route = route.as_deref().unwrap_or("-"),
        status = response.status().as_u16(),
        duration_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    Ok(response)
}

/// The request id, and caching and sniffing rules for a body that may hold a secret; a route
/// whose answer may be cached (a versioned script) says so itself.
fn stamp(headers: &mut HeaderMap, id: &str) {
    if let Ok(value) = HeaderValue::from_str(id) {
        headers.insert(HEADER, value);
    }
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    // JSON needs no policy of its own; a page sets a policy for what it loads.
    if !headers.contains_key(CONTENT_SECURITY_POLICY) {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        );
    }
    if !headers.contains_key(CACHE_CONTROL) {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
}

/// A refusal whose body is not our JSON envelope.
/// A refusal that no handler of ours rendered (actix's plain-text 404, 405, 413…): the JSON
/// envelope replaces it. Our pages (the dashboard's) render their refusals as pages.
fn needs_envelope<B>(response: &ServiceResponse<B>) -> bool {
    let status = response.status();
    let ours = ["application/json", "text/html"]
        .iter()
        .any(|kind| has_type(response.headers(), kind));
    (status.is_client_error() || status.is_server_error()) && !ours
}

fn has_type(headers: &HeaderMap, kind: &str) -> bool {
    headers
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(kind.as_bytes()))
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
            let rendered = self.inner.as_response_error().error_response();
            if has_type(rendered.headers(), "application/json") {
                rendered
            } else {
                crate::ApiError::for_status(rendered.status()).error_response()
            }
        });
        stamp(response.headers_mut(), &self.id);
        response
    }
}
