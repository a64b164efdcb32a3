//! `Idempotency-Key` on every POST, the HTTP door's half of one mechanism (the flow is drawn in
//! docs/architecture.md; the rules are `holdfast_domain::idempotency`'s):
//!
//! 1. `guard` claims the key before the handler runs, or answers without running it: the stored
//!    answer replayed with `idempotent-replayed: true`, or 409 for another request under the key
//!    or one still running.
//! 2. A handler whose request changes something passes an [`AnswerWithChange`]'s recorder to its
//!    service, whose store writes the answer in the SQL transaction of the change, and marks its
//!    response [`KeySettled`].
//! 3. Any other answer is settled by `guard` after the handler ([`settle`]): kept unless 5xx, a
//!    5xx releasing the key so a retry runs.
//!
//! `POST /v1/transactions` claims its key itself ([`Deferred`]): a card payment's pending row
//! makes the claim in its own statement, one round trip and one commit fewer. A request that
//! cannot claim that way claims the ordinary way and runs again (the domain's
//! `TransactionRequests`); one refused before its first write has its key claimed by `guard`
//! after the handler, and the earlier request under the key, if any, decides its answer, as in
//! step 1.

use actix_web::body::{BoxBody, MessageBody, to_bytes};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::http::header::{ContentType, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, HttpRequest, HttpResponse, ResponseError, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::idempotency::{Answer, IdempotencyKey, KeyClaim, Recorder, Seen};
use holdfast_domain::ports::Begun;
use holdfast_domain::services::IdempotencyService;

use crate::ApiState;
use holdfast_web::error::ApiError;

pub const HEADER: &str = "idempotency-key";
pub const REPLAYED: &str = "idempotent-replayed";

/// In the request's extensions while it runs under a key it has claimed: a handler that stores
/// its answer itself, in the same SQL transaction as its change, takes the key from here…
#[derive(Debug, Clone)]
pub struct ClaimedKey(pub IdempotencyKey);

/// …or this, on a route whose handler claims the key itself, with its first write
/// (`RouteSpec::claims_own_key`): the claim to make.
#[derive(Debug, Clone)]
pub struct Deferred(pub KeyClaim);

/// …and marks its response with this once it has settled the key itself, so `guard` leaves the
/// key alone.
#[derive(Debug, Clone, Copy)]
pub struct KeySettled;

/// The answer to a request that makes or changes `T` (a create's 201, a rotation's 200),
/// rendered from it. Under a claimed key the service stores it in the SQL transaction of the
/// change (`recorder`), so a crash can never leave the change made and its key unanswered.
/// Rendering is a pure function of `T`, so `send` answers with the very bytes stored;
/// `send_answer` is for the answers that must say more than the stored one (a secret shown once).
pub struct AnswerWithChange<T> {
    key: Option<IdempotencyKey>,
    render: fn(&T) -> Answer,
}

impl<T> AnswerWithChange<T> {
    pub fn new(req: &HttpRequest, render: fn(&T) -> Answer) -> Self {
        Self::for_key(
            req.extensions().get::<ClaimedKey>().map(|c| c.0.clone()),
            render,
        )
    }

    /// For a handler that runs on a task of its own: the key it claimed, if any.
    pub fn for_key(key: Option<IdempotencyKey>, render: fn(&T) -> Answer) -> Self {
        Self { key, render }
    }

    pub fn recorder(&self) -> Option<Recorder<'_, T>> {
        self.key.as_ref().map(|key| Recorder {
            key,
            render: &self.render,
            claim_at_first_write: None,
        })
    }

    /// The answer for `made`, as stored with it.
    pub fn answer(&self, made: &T) -> Answer {
        (self.render)(made)
    }

    pub fn send(&self, made: &T) -> HttpResponse {
        self.send_answer(self.answer(made))
    }

    /// Sends `answer`, which may say more than the stored one: a secret shown once (a boarding
    /// form's link) goes to the client but never into the stored answer a replay gets.
    pub fn send_answer(&self, answer: Answer) -> HttpResponse {
        let mut response = respond(answer);
        if self.key.is_some() {
            response.extensions_mut().insert(KeySettled);
        }
        response
    }
}

/// Whether an answer is kept for replay (`idempotency::kept_for_replay`).
pub fn storable(status: StatusCode) -> bool {
    holdfast_domain::idempotency::kept_for_replay(status.as_u16())
}

/// Settles `key` after a request that stored no answer with a change: keeps `answer`, or
/// releases the key when the answer is a transient failure. The request has run (a payment may
/// have been refused after checks that read the database): its real answer goes back to the
/// client even if the key cannot be settled, which then stays "running" and refuses repeats
/// until it is abandoned.
pub async fn settle(state: &ApiState, who: &Principal, key: &IdempotencyKey, answer: Answer) {
    if let Err(e) = state.idempotency.settle(who, key, &answer).await {
        // The key is the client's: it stays out of the log.
        tracing::error!(error = %e, "could not settle an idempotency key");
    }
}

/// `answer` as an HTTP response: its status and its JSON body.
pub fn respond(answer: Answer) -> HttpResponse {
    HttpResponse::build(
        StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
    )
    .content_type(ContentType::json())
    .body(answer.body)
}

/// A create's answer: 201 with `view` as JSON.
pub fn created(view: &impl serde::Serialize) -> Answer {
    json_answer(StatusCode::CREATED, view)
}

/// A change's answer: 200 with `view` as JSON.
pub fn changed(view: &impl serde::Serialize) -> Answer {
    json_answer(StatusCode::OK, view)
}

fn json_answer(status: StatusCode, view: &impl serde::Serialize) -> Answer {
    Answer {
        status: status.as_u16(),
        body: serde_json::to_string(view).unwrap_or_default(),
    }
}

/// Runs `next` under the request's idempotency key, if it has one. The key is claimed before
/// the handler runs, unless the route's handler claims it itself with its first write
/// (`claims_own_key`): then a request refused before that write has its key claimed here, after
/// the handler, and its answer settled as any other's.
pub async fn guard(
    state: &ApiState,
    who: &Principal,
    claims_own_key: bool,
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
    let claim = keys.claim_for(who, key, req.method().as_str(), req.path(), &body);
    req.set_payload(Payload::from(body));
    if claims_own_key {
        req.extensions_mut().insert(Deferred(claim.clone()));
    } else {
        match begin(keys, who, &claim).await? {
            Begun::Started => {
                req.extensions_mut().insert(ClaimedKey(claim.key.clone()));
            }
            Begun::Seen(seen) => return Ok(req.into_response(seen_response(seen))),
        }
    }
    let response = next.call(req).await?;
    if response.response().extensions().contains::<KeySettled>() {
        return Ok(response.map_into_boxed_body());
    }
    let status = response.status();
    if claims_own_key {
        // The handler was refused before its first write: the key is claimed only now.
        if !storable(status) {
            // Refused before anything was written, and not for good: nothing to claim.
            return Ok(response.map_into_boxed_body());
        }
        if let Begun::Seen(seen) = begin(keys, who, &claim).await? {
            // An earlier request under the key decides the answer, as if it had been claimed
            // first.
            let (request, _) = response.into_parts();
            return Ok(ServiceResponse::new(request, seen_response(seen)));
        }
    }
    let key = claim.key;
    if !storable(status) {
        settle(
            state,
            who,
            &key,
            Answer {
                status: status.as_u16(),
                body: String::new(),
            },
        )
        .await;
        return Ok(response.map_into_boxed_body());
    }
    let (request, response) = response.into_parts();
    let (head, body) = response.into_parts();
    let bytes = to_bytes(body)
        .await
        .map_err(|_| ApiError::Internal("response body unreadable".into()))?;
    let answer = Answer {
        status: status.as_u16(),
        body: String::from_utf8_lossy(&bytes).into_owned(),
    };
    settle(state, who, &key, answer).await;
    Ok(ServiceResponse::new(
        request,
        head.set_body(BoxBody::new(bytes)),
    ))
}

/// Makes `claim` now, or says what an earlier request under its key left.
pub async fn begin(
    keys: &IdempotencyService,
    who: &Principal,
    claim: &KeyClaim,
) -> Result<Begun, ApiError> {
    keys.begin(who, claim)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// The answer to a request whose key an earlier request holds: that request's answer
/// replayed, or 409.
pub fn seen_response(seen: Seen) -> HttpResponse {
    let refusal = match seen {
        Seen::Replay(stored) => return replay(stored),
        Seen::Mismatch => ApiError::Conflict {
            param: "Idempotency-Key".into(),
            message: "this key was used with a different request; use a new key".into(),
        },
        Seen::InProgress | Seen::Restart => ApiError::Conflict {
            param: "Idempotency-Key".into(),
            message: "a request with this key is still running; retry later".into(),
        },
    };
    refusal.error_response()
}

fn replay(stored: Answer) -> HttpResponse {
    let mut response = respond(stored);
    response.headers_mut().insert(
        actix_web::http::header::HeaderName::from_static(REPLAYED),
        HeaderValue::from_static("true"),
    );
    response
}
