//! `Idempotency-Key` on every POST (rules in `holdfast_domain::idempotency`): the first request
//! runs and its response is stored (unless 5xx); a repeat gets that response replayed with
//! `idempotent-replayed: true`; a different body or a request still running gets 409.

use std::sync::{Arc, OnceLock};

use actix_web::body::{BoxBody, MessageBody, to_bytes};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{ContentType, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::idempotency::{IdempotencyKey, Recorder, Seen, StoredResponse, storable};
use holdfast_domain::ports::Begun;

use super::error::ApiError;
use crate::state::AppState;

pub const HEADER: &str = "idempotency-key";
pub const REPLAYED: &str = "idempotent-replayed";

/// In the request's extensions while it runs under a key it has claimed: a handler that stores
/// its response itself, in the same SQL transaction as its change, takes the key from here…
#[derive(Debug, Clone)]
pub struct Claimed(pub IdempotencyKey);

/// …and marks its response with this once it has settled the key itself (stored the answer,
/// in the same SQL transaction as its change or after, or released it), so the middleware
/// leaves the key alone.
#[derive(Debug, Clone, Copy)]
pub struct KeySettled;

/// The answer to a request that makes or changes `T` (a create's 201, a rotation's 200),
/// rendered from it. Under a claimed key the service stores it in the SQL transaction of the
/// change (`recorder`, see `Recorder`), so a crash can never leave the change made and its key
/// unanswered; `send` then answers with the very answer stored (rendered once), marked so the
/// middleware does not store it again.
pub struct AnswerWithChange<T> {
    key: Option<IdempotencyKey>,
    render: fn(&T) -> StoredResponse,
    /// The answer the recorder rendered, kept for `answer`.
    rendered: Arc<OnceLock<StoredResponse>>,
    remember: Box<dyn Fn(&T) -> StoredResponse + Send + Sync>,
}

impl<T: 'static> AnswerWithChange<T> {
    pub fn new(req: &HttpRequest, render: fn(&T) -> StoredResponse) -> Self {
        Self::for_key(
            req.extensions().get::<Claimed>().map(|c| c.0.clone()),
            render,
        )
    }

    /// For a handler that runs on a task of its own: the key it claimed, if any.
    pub fn for_key(key: Option<IdempotencyKey>, render: fn(&T) -> StoredResponse) -> Self {
        let rendered = Arc::new(OnceLock::new());
        let kept = rendered.clone();
        Self {
            key,
            render,
            rendered,
            remember: Box::new(move |made| kept.get_or_init(|| render(made)).clone()),
        }
    }

    pub fn recorder(&self) -> Option<Recorder<'_, T>> {
        self.key.as_ref().map(|key| Recorder {
            key,
            render: &*self.remember,
        })
    }

    /// The answer for `made`: the one stored with it, or rendered now when none was.
    pub fn answer(&self, made: &T) -> StoredResponse {
        self.rendered
            .get()
            .cloned()
            .unwrap_or_else(|| (self.render)(made))
    }

    pub fn send(&self, made: &T) -> HttpResponse {
        let mut response = respond(self.answer(made));
        if self.key.is_some() {
            response.extensions_mut().insert(KeySettled);
        }
        response
    }
}

/// `answer` as an HTTP response: its status and its JSON body.
pub fn respond(answer: StoredResponse) -> HttpResponse {
    HttpResponse::build(
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    )
    .content_type(ContentType::json())
    .body(answer.body)
}

/// A create's answer: 201 with `view` as JSON.
pub fn created(view: &impl serde::Serialize) -> StoredResponse {
    json_answer(StatusCode::CREATED, view)
}

/// A change's answer: 200 with `view` as JSON.
pub fn changed(view: &impl serde::Serialize) -> StoredResponse {
    json_answer(StatusCode::OK, view)
}

fn json_answer(status: StatusCode, view: &impl serde::Serialize) -> StoredResponse {
    StoredResponse {
        status: status.as_u16(),
        body: serde_json::to_string(view).unwrap_or_default(),
    }
}

/// Runs `next` under the request's idempotency key, if it has one.
pub async fn guard(
    state: &AppState,
    who: &Principal,
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let Some(raw) = req.headers().get(HEADER) else {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    };
    // A header that is not visible ASCII fails the same rule as a malformed key.
    let parsed = IdempotencyKey::parse(raw.to_str().unwrap_or("\u{7f}"));
    let key = match parsed {
        Ok(key) => key,
        Err(invalid) => return Ok(req.into_response(ApiError::from(invalid).error_response())),
    };
    // The body is read once here for the fingerprint, then handed back to the handler.
    let body = match req.extract::<web::Bytes>().await {
        Ok(body) => body,
        Err(err) => {
            let refusal = super::extract::unreadable_body(&err);
            return Ok(req.into_response(refusal.error_response()));
        }
    };
    let keys = &state.idempotency;
    let (begun, key) = keys
        .begin(who, key, req.method().as_str(), req.path(), &body)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    req.set_payload(Payload::from(body));
    match begun {
        Begun::Started => {
            req.extensions_mut().insert(Claimed(key.clone()));
        }
        Begun::Seen(Seen::Replay(stored)) => return Ok(req.into_response(replay(stored))),
        Begun::Seen(Seen::Mismatch) => {
            let refusal = ApiError::Conflict {
                param: "Idempotency-Key".into(),
                message: "this key was used with a different request; use a new key".into(),
            };
            return Ok(req.into_response(refusal.error_response()));
        }
        Begun::Seen(Seen::InProgress | Seen::Restart) => {
            let refusal = ApiError::Conflict {
                param: "Idempotency-Key".into(),
                message: "a request with this key is still running; retry later".into(),
            };
            return Ok(req.into_response(refusal.error_response()));
        }
    }
    let response = next.call(req).await?;
    let status = response.status();
    if response.response().extensions().contains::<KeySettled>() {
        return Ok(response.map_into_boxed_body());
    }
    if !storable(status.as_u16()) {
        // A transient failure: forget the key so the client's retry runs.
        if let Err(e) = keys.release(who, &key).await {
            tracing::error!(error = %e, "could not release an idempotency key");
        }
        return Ok(response.map_into_boxed_body());
    }
    let (request, response) = response.into_parts();
    let (head, body) = response.into_parts();
    let bytes = to_bytes(body)
        .await
        .map_err(|_| ApiError::Internal("response body unreadable".into()))?;
    let stored = StoredResponse {
        status: status.as_u16(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    };
    // The request has run (a payment may have been made): its real answer goes back even if it
    // cannot be stored, so the client does not retry something that happened. The key then stays
    // "running" and refuses repeats until it is abandoned.
    if let Err(e) = keys.complete(who, &key, &stored).await {
        // The key is the client's: it stays out of the log.
        tracing::error!(error = %e, "could not store an idempotent response");
    }
    Ok(ServiceResponse::new(
        request,
        head.set_body(BoxBody::new(bytes)),
    ))
}

fn replay(stored: StoredResponse) -> HttpResponse {
    let mut response = respond(stored);
    response.headers_mut().insert(
        actix_web::http::header::HeaderName::from_static(REPLAYED),
        HeaderValue::from_static("true"),
    );
    response
}
