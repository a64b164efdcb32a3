//! A webhook subscription's fields, their rules, and the failure counter of spec 3.2.

use time::OffsetDateTime;

use crate::Invalid;
use crate::ids::{PlatformId, UserId, WebhookId};
use crate::mode::Mode;
use crate::text::bounded_text;

use super::EventType;

/// Consecutive failed notifications that disable a subscription (spec 8: fixed).
pub const FAILURE_LIMIT: u32 = 25;

/// How long a rotated-out signing secret keeps signing beside the new one. Standard Webhooks
/// allows several signatures in `webhook-signature`, so a receiver verifying with either secret
/// accepts every delivery while it switches.
pub const SECRET_OVERLAP: time::Duration = time::Duration::hours(24);

/// A signing secret rotated out, still signing until `until`.
#[derive(Clone, PartialEq, Eq)]
pub struct PreviousSecret {
    /// The rotated-out secret (`whsec_` + base64).
    pub secret: String,
    /// When it stops signing: the rotation plus the overlap.
    pub until: OffsetDateTime,
}

impl std::fmt::Debug for PreviousSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreviousSecret")
            .field("until", &self.until)
            .finish_non_exhaustive()
    }
}

/// Where notifications go: an absolute `http` or `https` URL without credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointUrl(String);

impl EndpointUrl {
    /// The longest endpoint URL accepted.
    pub const MAX_LEN: usize = 2048;

    /// Validates an `endpointUrl`: absolute `http` or `https`, a valid host and port, no user name
    /// or password, no fragment, no spaces, at most `MAX_LEN`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        const FIELD: &str = "endpointUrl";
        let bad = |why: &str| Err(Invalid::new(FIELD, why.to_owned()));
        if raw.len() > Self::MAX_LEN {
            return bad("must be at most 2048 characters");
        }
        if raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return bad("must not contain spaces or control characters");
        }
        // What an HTTP client can send: RFC 3986's characters, any other byte percent-encoded
        // (a host in punycode). Anything else was accepted once and then failed every delivery.
        if !raw.bytes().all(is_uri_byte) || !percent_escapes_are_whole(raw) {
            return bad(
                "must use only the characters of RFC 3986 (percent-encode any other, a \
                 non-ASCII host in punycode)",
            );
        }
        let lower = raw.to_ascii_lowercase();
        let Some(rest) = lower
            .strip_prefix("https://")
            .or_else(|| lower.strip_prefix("http://"))
        else {
            return bad("must be an absolute http:// or https:// URL");
        };
        let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
        if authority.contains('@') {
            return bad("must not carry a user name or password");
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => match v6.split_once(']') {
                Some((inner, "")) => (inner, None),
                Some((inner, tail)) => (inner, Some(tail.strip_prefix(':').unwrap_or("x"))),
                None => ("", None),
            },
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        let host_ok = if authority.starts_with('[') {
            host.parse::<std::net::Ipv6Addr>().is_ok()
        } else {
            !host.is_empty()
                && host.split('.').all(|label| {
                    !label.is_empty()
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        };
        if !host_ok {
            return bad("must name a valid host");
        }
        if let Some(port) = port
            && !port.parse::<u16>().is_ok_and(|p| p > 0)
        {
            return bad("must have a port from 1 to 65535");
        }
        if raw.contains('#') {
            return bad("must not have a #fragment");
        }
        let path_and_query = &rest[authority.len()..];
        if path_and_query.contains(['[', ']']) {
            return bad("must not have [ or ] outside an IPv6 host (percent-encode them)");
        }
        Ok(Self(raw.to_owned()))
    }

    /// Rebuilds a URL read back from our own storage, where it was validated on the way in.
    pub fn from_trusted(raw: String) -> Self {
        Self(raw)
    }

    /// The URL exactly as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// RFC 3986's unreserved and reserved characters, and `%`.
fn is_uri_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b)
}

/// Every `%` starts an escape of two hexadecimal digits.
fn percent_escapes_are_whole(raw: &str) -> bool {
    let bytes = raw.as_bytes();
    bytes.iter().enumerate().all(|(at, b)| {
        *b != b'%'
            || bytes
                .get(at + 1..at + 3)
                .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    })
}

/// Optional text, included in the disable email.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description(String);

impl Description {
    /// Validates a description: 1 to 500 characters once trimmed, nothing invisible.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        bounded_text("description", raw, 1, 500).map(Self)
    }
    /// Rebuilds a description read back from our own storage, where it was validated on the way in.
    pub fn from_trusted(raw: String) -> Self {
        Self(raw)
    }
    /// The description as stored and put in the disable email.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A header sent with every delivery, for example a shared secret for the receiver's gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomHeader {
    name: String,
    value: String,
}

impl CustomHeader {
    /// Headers we set ourselves or that belong to the connection: a subscription cannot replace
    /// them.
    pub const RESERVED: [&'static str; 14] = [
        "content-type",
        "content-length",
        "host",
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "user-agent",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "expect",
    ];

    /// Validates a header: a name of 1 to 64 token characters that Holdfast does not set itself,
    /// and a value of 1 to 1024 printable ASCII characters (space and tab included).
    pub fn parse(name: &str, value: &str) -> Result<Self, Invalid> {
        let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
        if name.is_empty() || name.len() > 64 || !name.bytes().all(token) {
            return Err(Invalid::new(
                "customHeader.name",
                "must be a header name of 1 to 64 letters, digits or !#$%&'*+-.^_`|~",
            ));
        }
        let lower = name.to_ascii_lowercase();
        if Self::RESERVED.contains(&lower.as_str()) || lower.starts_with("proxy-") {
            return Err(Invalid::new(
                "customHeader.name",
                "names a header Holdfast sets itself; choose another name",
            ));
        }
        // Spaces inside only: HTTP strips them at either end, so " " would arrive empty.
        let visible = |b: &u8| (b'!'..=b'~').contains(b);
        if value.len() > 1024
            || !value.bytes().all(|b| b == b' ' || visible(&b))
            || !value.bytes().next().is_some_and(|b| visible(&b))
            || !value.bytes().last().is_some_and(|b| visible(&b))
        {
            return Err(Invalid::new(
                "customHeader.value",
                "must be 1 to 1024 visible ASCII characters (spaces inside only)",
            ));
        }
        Ok(Self {
            name: name.to_owned(),
            value: value.to_owned(),
        })
    }

    /// Rebuilds a header read back from our own storage, where it was validated on the way in.
    pub fn from_trusted(name: String, value: String) -> Self {
        Self { name, value }
    }
    /// The header's name as given.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The header's value, sent as is with every delivery.
    pub fn value(&self) -> &str {
        &self.value
    }
}

/// The event types a subscription receives: at least one, each known, kept sorted and distinct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventList(Vec<EventType>);

impl EventList {
    /// Validates a request's event types: at least one, each known; repeats are dropped.
    pub fn parse<S: AsRef<str>>(raw: &[S]) -> Result<Self, Invalid> {
        if raw.is_empty() {
            return Err(Invalid::new("events", "must name at least one event type"));
        }
        let mut types = raw
            .iter()
            .map(|t| EventType::parse("events", t.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        types.sort_unstable();
        types.dedup();
        Ok(Self(types))
    }
    /// Rebuilds a list read back from our own storage, where it was validated on the way in.
    pub fn from_trusted(types: Vec<EventType>) -> Self {
        Self(types)
    }
    /// The event types, sorted and distinct.
    pub fn types(&self) -> &[EventType] {
        &self.0
    }
    /// Whether the subscription is notified of events of type `t`.
    pub fn contains(&self, t: EventType) -> bool {
        self.0.contains(&t)
    }
}

/// A webhook subscription (spec 2.3): where and what it delivers, and its failure counter.
#[derive(Clone, PartialEq, Eq)]
pub struct Subscription {
    /// The subscription's id, `{webhookId}` in paths; it never changes.
    pub id: WebhookId,
    /// The platform that owns the subscription.
    pub platform_id: PlatformId,
    /// The only mode whose events it receives.
    pub mode: Mode,
    /// Where notifications are sent by `POST`.
    pub endpoint_url: EndpointUrl,
    /// The event types it is notified of.
    pub events: EventList,
    /// Optional text, included in the disable email.
    pub description: Option<Description>,
    /// A header sent with every delivery.
    pub custom_header: Option<CustomHeader>,
    /// False: it does not deliver, and events that occur meanwhile are lost, never queued
    /// (spec 3.2).
    pub active: bool,
    /// `whsec_` + base64; replaced only by a rotation.
    pub secret: String,
    /// The secret the last rotation replaced, while it still signs.
    pub previous_secret: Option<PreviousSecret>,
    /// The user who generated the key that created the subscription; never changes.
    pub creator: UserId,
    /// Notifications failed in a row; reset to 0 by any success, disabling at `FAILURE_LIMIT`
    /// (spec 3.2).
    pub consecutive_failures: u32,
    /// When the subscription was created.
    pub created_on: OffsetDateTime,
    /// When it was last replaced, toggled or had its secret rotated.
    pub updated_on: OffsetDateTime,
    /// The platform's own key/value pairs; empty when it gave none.
    pub metadata: crate::metadata::Metadata,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("id", &self.id)
            .field("endpoint_url", &self.endpoint_url)
            .field("active", &self.active)
            .field("consecutive_failures", &self.consecutive_failures)
            .finish_non_exhaustive()
    }
}

impl Subscription {
    /// The secrets a delivery at `now` is signed with: the current one, then the previous one
    /// while its overlap lasts.
    pub fn signing_secrets(&self, now: OffsetDateTime) -> Vec<String> {
        let mut secrets = vec![self.secret.clone()];
        if let Some(previous) = self.previous_secret.as_ref().filter(|p| now < p.until) {
            secrets.push(previous.secret.clone());
        }
        secrets
    }

    /// This subscription with `secret` in place of its own, which keeps signing until
    /// `now + overlap`. A secret rotated out earlier stops signing at once: only one previous
    /// secret is kept.
    #[must_use]
    pub fn rotated(&self, secret: String, now: OffsetDateTime, overlap: time::Duration) -> Self {
        Self {
            previous_secret: Some(PreviousSecret {
                secret: self.secret.clone(),
                until: now + overlap,
            }),
            secret,
            updated_on: now,
            ..self.clone()
        }
    }
}

/// What a failed notification does to the counter (spec 3.2): one more failure; reaching the
/// limit disables. A subscription re-enabled by PATCH keeps its count, so its next failure
/// disables it again at once.
pub fn failure_disables(failures_after: u32) -> bool {
    failures_after >= FAILURE_LIMIT
}

#[cfg(test)]
mod tests;
