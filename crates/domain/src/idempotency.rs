//! Idempotency keys: what a repeated request gets.
//!
//! | A request with a key already seen… | gets |
//! |---|---|
//! | same fingerprint, first one answered and its answer kept, within 24 h | that answer, replayed |
//! | same key, different method, path or body | refused, nothing runs |
//! | while the first is still running | refused, nothing runs |
//! | first one failed transiently (its key released, no answer kept) | runs again |
//! | older than 24 h, or a first attempt abandoned for 5 minutes | runs as new |
//!
//! Which answers are kept is the door's rule (the HTTP API keeps all but 5xx); that an answer
//! reporting a change is stored with the change, in one SQL transaction, is the domain's
//! (`Recorder`). The whole flow is drawn in docs/architecture.md.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use time::{Duration, OffsetDateTime};

use crate::Invalid;

/// How long a completed response is replayed.
pub const RETENTION: Duration = Duration::hours(24);
/// After this, a request still marked running is taken to have died with its process.
pub const ABANDONED_AFTER: Duration = Duration::minutes(5);

/// A client's idempotency key: 1 to 255 visible ASCII characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Validates an `Idempotency-Key` header: 1 to 255 visible ASCII characters.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let ok = (1..=255).contains(&raw.len()) && raw.bytes().all(|b| (0x21..=0x7e).contains(&b));
        if ok {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid::new(
                "Idempotency-Key",
                "must be 1 to 255 visible ASCII characters",
            ))
        }
    }

    /// The key as sent or, once scoped, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key as stored for `who`. Private keys of a platform and mode share one space (a
    /// server retrying through a rotated key still finds its request); each public key has a
    /// space of its own, because a public key lives in web pages: whoever copies it must be able
    /// neither to block a server's `order-1001` nor to learn that it was used. A client's key
    /// never holds a space, so the prefix cannot be forged from either side.
    #[must_use]
    pub(crate) fn scoped_to(self, who: &crate::auth::Principal) -> Self {
        match (who.key_type, &who.key_id) {
            (crate::mode::KeyType::Public, Some(key)) => Self(format!("{key} {}", self.0)),
            _ => self,
        }
    }
}

/// What makes two requests "the same" (method, path and body), as an HMAC-SHA256 under a
/// server secret: the body may hold a card number and CVV, and an unkeyed hash of it beside the
/// stored bin and last four could be brute-forced.
pub fn fingerprint(secret: &[u8; 32], method: &str, path: &str, body: &[u8]) -> [u8; 32] {
    hmac_sha256(
        secret,
        &[method.as_bytes(), b"\n", path.as_bytes(), b"\n", body],
    )
}

/// HMAC-SHA256 (RFC 2104) of the concatenated `parts`, for a 32-byte key.
pub fn hmac_sha256(key: &[u8; 32], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes a key of any length");
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// The answer a door gave to a request under a key, kept to be sent again to its retries.
///
/// The domain stores it and hands it back without reading it: what it holds is the door's
/// (the HTTP API puts its status code and JSON body here, and decides which answers are kept).
/// It is stored byte for byte rather than re-rendered from the resource on replay, because a
/// retry must see the answer the first request got: the merchant as it was created, not as it
/// was edited or deleted since.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The door's code for the answer (for HTTP, its status).
    pub status: u16,
    /// The answer's body, exactly as first sent.
    pub body: String,
}

/// Whether an answer of `status` is kept for replay: everything but a 5xx, a transient failure
/// the client's retry must run again.
pub fn kept_for_replay(status: u16) -> bool {
    status < 500
}

/// An answer stored under the request's key, written by the same SQL transaction as the change
/// it reports (see `Recorder`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyedAnswer {
    /// The request's idempotency key, under which the answer is stored.
    pub key: IdempotencyKey,
    /// The answer a retry with this key gets.
    pub answer: Answer,
}

/// The request's key and how its response is rendered from what it made (`T`: a transaction,
/// a merchant, a subscription, a token, a plan or a connection).
///
/// A response is stored in the SQL transaction that writes the change it reports, not after it:
/// otherwise a crash between the two leaves the key "running" with the change made, and once
/// the key is taken for abandoned, the client's retry makes a second one (a second payment, a
/// second merchant).
pub struct Recorder<'a, T = crate::payment::transaction::Transaction> {
    /// The request's idempotency key.
    pub key: &'a IdempotencyKey,
    /// Renders the answer the client gets from what the request made.
    pub render: &'a (dyn Fn(&T) -> Answer + Sync),
    /// Set when the key is not claimed yet: the request's first write is to claim it, in the
    /// same statement (only a card payment's pending row can; a request that cannot is refused
    /// with nothing written, and claims the key the ordinary way: `TransactionRequests`).
    pub claim_at_first_write: Option<&'a KeyClaim>,
}

/// A claim on a key as stored: the key in its caller's space, the request's fingerprint, when
/// the request arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyClaim {
    /// The key as stored (`IdempotencyKey::scoped_to`).
    pub key: IdempotencyKey,
    /// The request's fingerprint, which a repeat must match.
    pub fingerprint: [u8; 32],
    /// When the request arrived.
    pub at: OffsetDateTime,
}

impl<T> Recorder<'_, T> {
    /// The answer to store with `made`. A recorded transaction's answer is always stored, a
    /// processor failure or timeout included: the transaction exists with its final status (a
    /// timeout was reversed and recorded), so a retry must see that answer, not make a second
    /// payment at a processor that may have approved the first.
    pub fn answer_for(&self, made: &T) -> KeyedAnswer {
        KeyedAnswer {
            key: self.key.clone(),
            answer: (self.render)(made),
        }
    }
}

/// The response to store with `made`, when the request runs under a key.
pub fn reply_for<T>(recorder: Option<&Recorder<'_, T>>, made: &T) -> Option<KeyedAnswer> {
    recorder.map(|r| r.answer_for(made))
}

impl<T> std::fmt::Debug for Recorder<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("key", &self.key)
            .field("claim_at_first_write", &self.claim_at_first_write)
            .finish_non_exhaustive()
    }
}

/// A key's record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRecord {
    /// The first request's fingerprint, which a repeat must match to be replayed.
    pub fingerprint: [u8; 32],
    /// When the first request arrived: the start of both the 24 h retention and the 5-minute
    /// abandonment timeout.
    pub created_on: OffsetDateTime,
    /// `None` while the first request is running.
    pub response: Option<Answer>,
}

/// What to do with a request whose key already has a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// The same request, completed within 24 h: send this stored response again.
    Replay(Answer),
    /// The same key with another method, path or body: 409, nothing runs.
    Mismatch,
    /// The first request is still running: 409, nothing runs.
    InProgress,
    /// The record is stale (expired or abandoned): replace it and run the request.
    Restart,
}

/// What a request with `fingerprint`, arriving at `now` under a key that has `existing`, gets
/// (the table in the module docs).
pub fn on_seen(existing: &KeyRecord, fingerprint: &[u8; 32], now: OffsetDateTime) -> Seen {
    let age = now - existing.created_on;
    match &existing.response {
        Some(_) if age >= RETENTION => Seen::Restart,
        None if age >= ABANDONED_AFTER => Seen::Restart,
        _ if &existing.fingerprint != fingerprint => Seen::Mismatch,
        Some(response) => Seen::Replay(response.clone()),
        None => Seen::InProgress,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const T0: OffsetDateTime = datetime!(2026-11-22 12:00 UTC);

    fn record(response: Option<u16>, fingerprint: [u8; 32]) -> KeyRecord {
        KeyRecord {
            fingerprint,
            created_on: T0,
            response: response.map(|status| Answer {
                status,
                body: "{}".into(),
            }),
        }
    }

    #[test]
    fn hmac_matches_an_independent_implementation() {
        // Python: hmac.new(b"\x0b" * 32, b"Hi There", hashlib.sha256).hexdigest()
        let mac = hmac_sha256(&[0x0b; 32], &[b"Hi ", b"There"]);
        let hex = mac.iter().fold(String::new(), |mut hex, b| {
            use std::fmt::Write as _;
            let _ = write!(hex, "{b:02x}");
            hex
        });
        assert_eq!(
            hex,
            "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7"
        );
    }

    #[test]
    fn fingerprints_depend_on_the_secret() {
        let body = b"{\"number\":\"4111111111111111\"}";
        assert_ne!(
            fingerprint(&[1; 32], "POST", "/v1/transactions", body),
            fingerprint(&[2; 32], "POST", "/v1/transactions", body)
        );
    }

    #[test]
    fn every_row_of_the_table() {
        let same = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{}");
        let other = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{\"a\":1}");
        let minute = Duration::minutes(1);
        let replay = Seen::Replay(Answer {
            status: 201,
            body: "{}".into(),
        });
        let rows = [
            (record(Some(201), same), same, T0 + minute, replay.clone()),
            (record(Some(201), same), other, T0 + minute, Seen::Mismatch),
            (record(None, same), same, T0 + minute, Seen::InProgress),
            (record(None, same), other, T0 + minute, Seen::Mismatch),
            (record(Some(201), same), same, T0 + RETENTION, Seen::Restart),
            (
                record(Some(201), same),
                same,
                T0 + RETENTION - minute,
                replay,
            ),
            (
                record(None, same),
                same,
                T0 + ABANDONED_AFTER,
                Seen::Restart,
            ),
        ];
        for (existing, fp, now, expected) in rows {
            assert_eq!(
                on_seen(&existing, &fp, now),
                expected,
                "{existing:?} at {now}"
            );
        }
    }

    #[test]
    fn a_public_key_has_a_key_space_of_its_own() {
        use crate::auth::Principal;
        use crate::ids::{KeyId, PlatformId, UserId};
        use crate::mode::{KeyType, Mode};
        let who = |key_type, key: &str| Principal {
            scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Test),
            key_type,
            key_id: Some(KeyId::from_suffix(key)),
            user_id: UserId::from_suffix("1"),
        };
        let key = || IdempotencyKey::parse("order-1001").unwrap();
        let private_a = key().scoped_to(&who(KeyType::Private, "a"));
        let private_b = key().scoped_to(&who(KeyType::Private, "b"));
        let public_a = key().scoped_to(&who(KeyType::Public, "c"));
        let public_b = key().scoped_to(&who(KeyType::Public, "d"));
        assert_eq!(private_a, private_b, "private keys share their space");
        assert_ne!(public_a, private_a);
        assert_ne!(public_a, public_b);
        // No client key can spell a public key's stored form: it would need a space.
        assert!(IdempotencyKey::parse(public_a.as_str()).is_err());
    }

    #[test]
    fn keys_and_fingerprints() {
        for (raw, ok) in [
            ("a", true),
            (&"k".repeat(255)[..], true),
            (&"k".repeat(256)[..], false),
            ("", false),
            ("has space", false),
            ("é", false),
        ] {
            assert_eq!(IdempotencyKey::parse(raw).is_ok(), ok, "{raw:?}");
        }
        assert_ne!(
            fingerprint(&[7; 32], "POST", "/v1/a", b"x"),
            fingerprint(&[7; 32], "POST", "/v1/b", b"x")
        );
        assert_ne!(
            fingerprint(&[7; 32], "POST", "/v1/a", b"x"),
            fingerprint(&[7; 32], "POST", "/v1/a", b"y")
        );
    }
}
