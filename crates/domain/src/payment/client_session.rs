//! Client sessions: one checkout, created by the merchant's server with a private key, whose
//! client secret the checkout page hands to the hosted client script. A token made under a
//! session is bound to it, and a payment with that token must be for the session's merchant,
//! amount and currency; the first successful payment completes the session, and nothing can be
//! tokenized or paid under it afterwards.

use std::fmt;

use sha2::{Digest, Sha256};
use time::{Duration, OffsetDateTime};

use crate::Invalid;
use crate::ids::{ClientSessionId, MerchantId, PlatformId, TxnId};
use crate::merchant::Currency;
use crate::mode::Mode;

/// How long a session lives when the request does not say.
pub const DEFAULT_LIFETIME: Duration = Duration::minutes(30);
/// The shortest lifetime a request may ask for.
pub const MIN_LIFETIME: Duration = Duration::minutes(1);
/// The longest lifetime a request may ask for.
pub const MAX_LIFETIME: Duration = Duration::hours(24);

/// What joins the session id and the random part of a client secret.
const SECRET_SEPARATOR: &str = "_secret_";

crate::words! {
    /// A way the checkout may pay.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum PaymentMethod {
        /// A card typed into the hosted fields.
        Card,
        /// Apple Pay on the web.
        ApplePay,
        /// Google Pay for web.
        GooglePay,
    }
}

crate::words! {
    /// Where a session is in its life. `expired` is never stored: an open session past its
    /// `expiresAt` reads as expired.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum SessionStatus {
        /// Tokens may be made under it, and paid with.
        Open,
        /// Its first successful payment was made; it takes nothing more.
        Completed,
        /// Canceled by the merchant's server; it takes nothing more.
        Canceled,
        /// Past its `expiresAt` without a successful payment; it takes nothing more.
        Expired,
    }
}

/// The secret a checkout page holds for one session: `cs_…_secret_…`. It lets the page's
/// public key tokenize under the session and nothing else. Only its SHA-256 is stored.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientSecret(String);

impl ClientSecret {
    /// A new secret for session `id`, its random part from a secure source.
    pub fn new(id: &ClientSessionId, random: &str) -> Self {
        Self(format!("{id}{SECRET_SEPARATOR}{random}"))
    }

    /// The session a secret as sent names, and the secret; `None` for anything else (which
    /// a caller refuses without saying why: a secret is not an oracle).
    pub fn parse(raw: &str) -> Option<(ClientSessionId, Self)> {
        let (id, random) = raw.split_once(SECRET_SEPARATOR)?;
        if random.len() < 16 || !random.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return None;
        }
        let id = ClientSessionId::parse("clientSecret", id).ok()?;
        Some((id, Self(raw.to_owned())))
    }

    /// What is stored and compared: SHA-256 of the whole secret.
    pub fn hash(&self) -> Vec<u8> {
        Sha256::digest(self.0.as_bytes()).to_vec()
    }

    /// The value, for the one answer that creates it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ClientSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientSecret(…)")
    }
}

/// One checkout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientSession {
    /// `cs_…`.
    pub id: ClientSessionId,
    /// The platform whose private key created it.
    pub platform_id: PlatformId,
    /// The mode of that key; only keys of this mode see or use it.
    pub mode: Mode,
    /// The merchant the checkout pays.
    pub merchant_id: MerchantId,
    /// The amount the checkout pays, in minor units.
    pub amount: i64,
    /// The currency of `amount`: the merchant's.
    pub currency: Currency,
    /// The ways the checkout may pay; never empty.
    pub payment_methods: Vec<PaymentMethod>,
    /// SHA-256 of the client secret.
    pub secret_hash: Vec<u8>,
    /// `Open`, `Completed` or `Canceled` as stored; see `status_at` for what a caller sees.
    pub status: SessionStatus,
    /// The payment that completed it.
    pub transaction_id: Option<TxnId>,
    /// When it was created.
    pub created_on: OffsetDateTime,
    /// When it stops taking tokens and payments, if still open.
    pub expires_on: OffsetDateTime,
    /// When it was completed or canceled.
    pub closed_on: Option<OffsetDateTime>,
    /// While a payment with one of its tokens runs, the session is held for it until then (at
    /// most `token::SESSION_HOLD`): no other payment and no cancel can take it meanwhile.
    pub held_until: Option<OffsetDateTime>,
}

impl ClientSession {
    /// The status as of `now`: an open session past its expiry is expired.
    pub fn status_at(&self, now: OffsetDateTime) -> SessionStatus {
        match self.status {
            SessionStatus::Open if now >= self.expires_on => SessionStatus::Expired,
            status => status,
        }
    }

    /// Whether a payment holds the session at `now`.
    pub fn is_held_at(&self, now: OffsetDateTime) -> bool {
        self.held_until.is_some_and(|until| until > now)
    }

    /// Whether `secret` is this session's.
    pub fn has_secret(&self, secret: &ClientSecret) -> bool {
        // Both are hashes of the whole secret: comparing them leaks nothing usable by timing.
        self.secret_hash == secret.hash()
    }

    /// Why a payment of `amount` in `currency` for `merchant` may not be made under this
    /// session as of `now`, naming the payment's field; `Ok` when it may.
    pub fn admits(
        &self,
        merchant: &MerchantId,
        amount: i64,
        currency: Currency,
        now: OffsetDateTime,
    ) -> Result<(), Invalid> {
        match self.status_at(now) {
            SessionStatus::Open => {}
            status => {
                return Err(Invalid::new(
                    "payment.token",
                    format!("the token's client session is {status}"),
                ));
            }
        }
        if *merchant != self.merchant_id {
            return Err(Invalid::new(
                "merchantId",
                "is not the merchant of the token's client session",
            ));
        }
        if amount != self.amount {
            return Err(Invalid::new(
                "amount",
                "is not the amount of the token's client session",
            ));
        }
        if currency != self.currency {
            return Err(Invalid::new(
                "currency",
                "is not the currency of the token's client session",
            ));
        }
        Ok(())
    }
}

/// A lifetime as a request gives it, in seconds, checked against the bounds.
pub fn lifetime(seconds: Option<i64>) -> Result<Duration, Invalid> {
    let Some(seconds) = seconds else {
        return Ok(DEFAULT_LIFETIME);
    };
    let asked = Duration::seconds(seconds);
    if asked < MIN_LIFETIME || asked > MAX_LIFETIME {
        return Err(Invalid::new(
            "expiresIn",
            "must be 60 to 86400 seconds (one minute to 24 hours)",
        ));
    }
    Ok(asked)
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    const NOW: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);

    fn session() -> ClientSession {
        let id = ClientSessionId::from_suffix("01S");
        ClientSession {
            secret_hash: ClientSecret::new(&id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ").hash(),
            id,
            platform_id: PlatformId::from_suffix("01P"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("01M"),
            amount: 2500,
            currency: Currency::USD,
            payment_methods: vec![PaymentMethod::Card],
            status: SessionStatus::Open,
            transaction_id: None,
            created_on: NOW,
            expires_on: NOW + DEFAULT_LIFETIME,
            closed_on: None,
            held_until: None,
        }
    }

    #[test]
    fn a_hold_lasts_until_its_time() {
        let held = ClientSession {
            held_until: Some(NOW + Duration::minutes(5)),
            ..session()
        };
        assert!(!session().is_held_at(NOW));
        assert!(held.is_held_at(NOW));
        assert!(held.is_held_at(NOW + Duration::minutes(5) - Duration::seconds(1)));
        assert!(!held.is_held_at(NOW + Duration::minutes(5)));
    }

    #[test]
    fn an_open_session_expires_at_its_time() {
        let s = session();
        assert_eq!(s.status_at(NOW), SessionStatus::Open);
        assert_eq!(
            s.status_at(s.expires_on - Duration::seconds(1)),
            SessionStatus::Open
        );
        assert_eq!(s.status_at(s.expires_on), SessionStatus::Expired);
        let done = ClientSession {
            status: SessionStatus::Completed,
            ..session()
        };
        assert_eq!(done.status_at(done.expires_on), SessionStatus::Completed);
    }

    #[test]
    fn a_payment_must_match_merchant_amount_and_currency() {
        let s = session();
        let other = MerchantId::from_suffix("02M");
        let eur = Currency::parse("EUR").unwrap();
        let cases = [
            (&s.merchant_id, 2500, Currency::USD, NOW, None),
            (&other, 2500, Currency::USD, NOW, Some("merchantId")),
            (&s.merchant_id, 2499, Currency::USD, NOW, Some("amount")),
            (&s.merchant_id, 2500, eur, NOW, Some("currency")),
            (
                &s.merchant_id,
                2500,
                Currency::USD,
                s.expires_on,
                Some("payment.token"),
            ),
        ];
        for (merchant, amount, currency, at, refused) in cases {
            let got = s.admits(merchant, amount, currency, at);
            assert_eq!(
                got.err().map(|e| e.field),
                refused,
                "{merchant} {amount} {currency:?} {at}"
            );
        }
        for status in [SessionStatus::Completed, SessionStatus::Canceled] {
            let closed = ClientSession {
                status,
                ..session()
            };
            let got = closed.admits(&closed.merchant_id, 2500, Currency::USD, NOW);
            assert!(got.unwrap_err().message.contains(status.as_str()));
        }
    }

    #[test]
    fn a_secret_names_its_session_and_only_its_hash_is_compared() {
        let s = session();
        let raw = format!("{}_secret_ABCDEFGHIJKLMNOPQRSTUVWXYZ", s.id);
        let (id, secret) = ClientSecret::parse(&raw).unwrap();
        assert_eq!(id, s.id);
        assert!(s.has_secret(&secret));
        let (_, wrong) =
            ClientSecret::parse(&format!("{}_secret_ABCDEFGHIJKLMNOPQRSTUVWXYA", s.id)).unwrap();
        assert!(!s.has_secret(&wrong));
        for bad in [
            "",
            "cs_01S",
            "cs_01S_secret_",
            "cs_01S_secret_short",
            "cs_01S_secret_ABCDEFGHIJKLMNOP!",
            "mid_01S_secret_ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        ] {
            assert!(ClientSecret::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(format!("{secret:?}"), "ClientSecret(…)");
    }

    #[test]
    fn lifetimes_are_bounded() {
        assert_eq!(lifetime(None).unwrap(), DEFAULT_LIFETIME);
        assert_eq!(lifetime(Some(60)).unwrap(), MIN_LIFETIME);
        assert_eq!(lifetime(Some(86_400)).unwrap(), MAX_LIFETIME);
        for bad in [59, 86_401, 0, -1] {
            assert_eq!(lifetime(Some(bad)).unwrap_err().field, "expiresIn");
        }
    }
}
