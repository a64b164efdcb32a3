//! The W3C trace context a request carries on to what it calls: the web door puts the
//! `traceparent` it answers with (the client's trace, our span as the parent) on the request's
//! task, and the API client sends it with each call to a processor, so the processor's side of
//! a payment joins the client's trace. Nothing is sent when the client sent no valid
//! `traceparent`: Holdfast starts no traces of its own.

use std::future::Future;

tokio::task_local! {
    static OUTGOING: Traceparent;
}

/// A `traceparent` header value to send: `00-{trace id}-{parent id}-{flags}`, lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traceparent(String);

impl Traceparent {
    /// The value for a call made under span `span_id` of trace `trace_id`, with `flags`;
    /// `None` unless each is lower-case hex of its W3C length (32, 16, 2) and neither id is
    /// all zeros.
    pub fn new(trace_id: &str, span_id: &str, flags: &str) -> Option<Self> {
        let hex = |s: &str, len: usize| {
            s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let zero = |s: &str| s.bytes().all(|b| b == b'0');
        (hex(trace_id, 32)
            && hex(span_id, 16)
            && hex(flags, 2)
            && !zero(trace_id)
            && !zero(span_id))
        .then(|| Self(format!("00-{trace_id}-{span_id}-{flags}")))
    }

    /// The header's value.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Runs `future` with `traceparent` as what its calls send (none when `None`).
pub async fn scope<F: Future>(traceparent: Option<Traceparent>, future: F) -> F::Output {
    match traceparent {
        Some(value) => OUTGOING.scope(value, future).await,
        None => future.await,
    }
}

/// What a call made now sends, if the task serves a request that came with a trace.
pub fn current() -> Option<Traceparent> {
    OUTGOING.try_with(Clone::clone).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const SPAN: &str = "00f067aa0ba902b7";

    #[test]
    fn only_well_formed_contexts_are_sent() {
        assert_eq!(
            Traceparent::new(TRACE, SPAN, "01").unwrap().as_str(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        );
        for (trace, span, flags) in [
            (&"0".repeat(32) as &str, SPAN, "01"),
            (TRACE, "0000000000000000", "01"),
            (&TRACE.to_uppercase(), SPAN, "01"),
            (&TRACE[1..], SPAN, "01"),
            (TRACE, SPAN, "1"),
            (TRACE, "00f067aa0ba902bz", "01"),
        ] {
            assert!(
                Traceparent::new(trace, span, flags).is_none(),
                "{trace} {span} {flags}"
            );
        }
    }

    #[tokio::test]
    async fn a_scope_carries_it_and_nothing_leaks_out() {
        let value = Traceparent::new(TRACE, SPAN, "01");
        let inside = scope(value.clone(), async { current() }).await;
        assert_eq!(inside, value);
        assert_eq!(current(), None, "outside the scope");
        assert_eq!(scope(None, async { current() }).await, None);
    }
}
