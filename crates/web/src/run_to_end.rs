//! Every request runs to its end on a task of its own, whatever its client does, and a panic in
//! it is one request's 500, never the worker's.
//!
//! actix-web drops a request's future when its connection goes (a reset, garbage pipelined after
//! it). Dropped halfway, a request leaves work half done: an idempotency key claimed and never
//! settled (a retry then got 409 "still running" for five minutes), and on SQLite a query whose
//! connection wrapper panics as it is dropped on a single-threaded runtime (diesel-async's
//! `SyncConnectionWrapper` blocks in place to finish the query, which only a multi-threaded
//! runtime allows). Run on its own task, the request finishes (its answer, unsent, settles its
//! key), and a panic anywhere below comes back as the task's error, answered with the envelope
//! and the request id while the worker serves on. Since a request now outlives its connection,
//! each worker runs at most `MOST_PER_WORKER` at once; past that, a 503 in the envelope.

use std::any::Any;
use std::cell::Cell;

use actix_web::Error;
use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::StatusCode;
use actix_web::middleware::Next;

use crate::error::ApiError;
use crate::request_context;

/// Requests running on one worker thread at most, their clients there or gone: a client that
/// sends and resets, again and again, cannot pile up work without bound.
const MOST_PER_WORKER: usize = 4_096;

thread_local! {
    static RUNNING: Cell<usize> = const { Cell::new(0) };
}

/// One request counted as running on this worker until it ends, however it ends.
struct Running;

impl Running {
    fn start() -> Option<Self> {
        RUNNING.with(|running| {
            let now = running.get();
            (now < MOST_PER_WORKER).then(|| {
                running.set(now.saturating_add(1));
                Self
            })
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|running| running.set(running.get().saturating_sub(1)));
    }
}

pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let Some(running) = Running::start() else {
        return Err(ApiError::Status(StatusCode::SERVICE_UNAVAILABLE).into());
    };
    let run = request_context::with_current_id(async move {
        let _running = running;
        next.call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body)
    });
    // A local task: the request (`!Send`) stays on its worker's thread, and a dropped
    // `JoinHandle` leaves the task running.
    match actix_web::rt::spawn(run).await {
        Ok(outcome) => outcome,
        Err(failed) => {
            let cause = if failed.is_panic() {
                panic_message(failed.into_panic())
            } else {
                "the request's task was cancelled".to_owned()
            };
            // An error rather than a response: the request went with its task (routing needs it
            // unshared, so no copy is kept), and the layer above renders this with the id.
            Err(ApiError::Internal(format!("the request panicked: {cause}")).into())
        }
    }
}

/// What a panic said, when it said it with text (as `panic!` and `expect` do).
fn panic_message(payload: Box<dyn Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(text) => *text,
        Err(payload) => payload
            .downcast_ref::<&str>()
            .map_or_else(|| "(no message)".to_owned(), |text| (*text).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_runs_at_most_its_bound_and_each_end_frees_a_place() {
        let held: Vec<Running> = (0..MOST_PER_WORKER)
            .map_while(|_| Running::start())
            .collect();
        assert_eq!(held.len(), MOST_PER_WORKER);
        assert!(Running::start().is_none(), "one more is refused");
        drop(held);
        assert!(
            Running::start().is_some(),
            "ended requests free their places"
        );
    }
}
