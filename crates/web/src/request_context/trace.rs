//! What a client may say about its own request: its id (`x-request-id`) and its W3C trace
//! context (`traceparent`). Both are taken only when well formed; neither can carry a card
//! number back out, since each is answered in a header and written to the log.

/// A client's request id we adopt: 1 to 128 of `A-Z a-z 0-9 . _ : -`, holding nothing that
/// could be a card number: no 12 to 19 digits passing the Luhn check, in a row or split by
/// `-`, `.` or `_` (a card number pasted into a header is neither echoed nor logged). A UUID is
/// always taken: its groups are not a card's.
pub fn client_request_id(raw: &str) -> Option<&str> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-');
    let card_like = !is_uuid(raw) && holdfast_domain::payment::card::could_be_card_number(raw);
    ((1..=128).contains(&raw.len()) && raw.bytes().all(allowed) && !card_like).then_some(raw)
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(raw: &str) -> bool {
    let groups: Vec<&str> = raw.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(group, len)| group.len() == len && group.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A W3C trace context (`traceparent`, version 00) the client sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// 32 lower-case hex digits, not all zero: the whole trace's id.
    pub trace_id: String,
    /// 16 lower-case hex digits: the client's span, the parent of ours.
    pub parent_id: String,
    /// Two hex digits; bit 0 says the caller sampled the trace.
    pub flags: String,
}

impl TraceParent {
    /// `version-traceid-parentid-flags`, as the W3C Trace Context recommendation gives it; a
    /// future version's extra fields after `flags` are ignored, as it asks.
    pub fn parse(raw: &str) -> Option<Self> {
        let mut parts = raw.split('-');
        let version = parts.next()?;
        let trace_id = parts.next()?;
        let parent_id = parts.next()?;
        let flags = parts.next()?;
        let hex = |s: &str, n: usize| {
            s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let zero = |s: &str| s.bytes().all(|b| b == b'0');
        let valid = hex(version, 2)
            && version != "ff"
            && (version != "00" || parts.next().is_none())
            && hex(trace_id, 32)
            && !zero(trace_id)
            && hex(parent_id, 16)
            && !zero(parent_id)
            && hex(flags, 2);
        valid.then(|| Self {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
            flags: flags.to_owned(),
        })
    }

    /// The context to answer with: the same trace and flags, our span as the parent.
    pub fn child(&self, span_id: &str) -> String {
        format!("00-{}-{span_id}-{}", self.trace_id, self.flags)
    }
}

/// A new span id: 16 hex digits, not all zero.
pub fn new_span_id() -> String {
    let random = ulid::Ulid::new().random();
    // The low 64 bits of a ULID's 80 random ones; never zero, as the recommendation requires.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "the low 64 bits are the point"
    )]
    let bits = (random as u64).max(1);
    format!("{bits:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_id_is_taken_only_when_well_formed() {
        for good in [
            "abc",
            "order-42:retry.1",
            "550e8400-e29b-41d4-a716-446655440000",
        ] {
            assert_eq!(client_request_id(good), Some(good));
        }
        let long = "a".repeat(129);
        for bad in [
            "",
            long.as_str(),
            "with space",
            "a\u{7}",
            "4111111111111111",
            "card-4111111111111111-x",
            "5555555555554444",
            "4111-1111-1111-1111",
            "order_4111.1111.1111.1111",
            "é",
            "<script>",
        ] {
            assert_eq!(client_request_id(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a_traceparent_follows_the_recommendation() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parsed = TraceParent::parse(good).unwrap();
        assert_eq!(parsed.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(
            parsed.child("b7ad6b7169203331"),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"
        );
        // A later version may add fields; version 00 may not.
        assert!(TraceParent::parse(&format!("01{}-extra", &good[2..])).is_some());
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
        let span = new_span_id();
        assert!(span.len() == 16 && span != "0000000000000000");
    }
}
