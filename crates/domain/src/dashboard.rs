//! The dashboard's people signing in: passwords, one-time links that set them, and sessions.
//!
//! Every secret here (a session's cookie, a link's token) is kept only as its SHA-256, as API
//! keys are: a copy of the database opens no session and sets no password.

use std::fmt;

use time::{Duration, OffsetDateTime};

use crate::Invalid;
use crate::api_key::KeyHash;
use crate::ids::{PlatformId, UserId};
use crate::mode::Mode;
use crate::ports::OutgoingEmail;
use crate::user::User;

/// A session ends this long after its last request.
pub const IDLE: Duration = Duration::minutes(30);
/// A session ends this long after sign-in, however busy.
pub const LIFETIME: Duration = Duration::hours(12);
/// An invitation link sets the first password within this time.
pub const INVITE_LIFETIME: Duration = Duration::hours(24);
/// A password-reset link sets a new password within this time.
pub const RESET_LIFETIME: Duration = Duration::hours(1);
/// A session's last use is written at most this often: not one write per page.
pub const TOUCH_EVERY: Duration = Duration::minutes(1);

/// A password as typed: 10 to 128 characters, taken as they are (no trimming: a space is a
/// character the user chose). Never shown, never logged.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// The fewest characters a password may have.
    pub const MIN: usize = 10;
    /// The most characters a password may have: argon2 would take more, but nobody types more.
    pub const MAX: usize = 128;

    /// Refuses, under the field `password`, a password too short or too long.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let length = raw.chars().count();
        if !(Self::MIN..=Self::MAX).contains(&length) {
            return Err(Invalid::new(
                "password",
                "must be 10 to 128 characters long",
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The characters, for the hasher only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(…)")
    }
}

/// A secret handed to a browser (a session's cookie) or put in a link (an invitation, a reset):
/// 26 characters of the key alphabet, about 155 bits. Kept server-side only as its hash.
#[derive(Clone, PartialEq, Eq)]
pub struct BearerSecret(String);

impl BearerSecret {
    /// A secret drawn by the `Ids` port.
    pub fn new(drawn: String) -> Self {
        Self(drawn)
    }

    /// A secret as a browser or a link sent it back; anything not of the alphabet or too long
    /// cannot be one of ours.
    pub fn presented(raw: &str) -> Option<Self> {
        let fits = raw.len() == 26 && raw.bytes().all(|b| b.is_ascii_alphanumeric());
        fits.then(|| Self(raw.to_owned()))
    }

    /// What the store keeps.
    pub fn hash(&self) -> KeyHash {
        KeyHash::of(&self.0)
    }

    /// The value to hand out, once.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The token a session's forms carry against cross-site request forgery: derived from the
    /// session's own secret, which a forging page cannot read, so nothing more is stored.
    pub fn csrf_token(&self) -> String {
        use base64::Engine as _;
        use hmac::Mac as _;
        let tag = self.csrf_mac().finalize().into_bytes();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag)
    }

    /// Whether `sent` is this session's form token, compared in constant time: how long a
    /// wrong token takes says nothing of the right one.
    pub fn accepts_csrf(&self, sent: &str) -> bool {
        use base64::Engine as _;
        use hmac::Mac as _;
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sent)
            .is_ok_and(|tag| self.csrf_mac().verify_slice(&tag).is_ok())
    }

    fn csrf_mac(&self) -> hmac::Hmac<sha2::Sha256> {
        use hmac::Mac as _;
        use sha2::Digest as _;
        let key = sha2::Sha256::digest(self.0.as_bytes());
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&key).expect("any key length");
        mac.update(b"holdfast dashboard csrf v1");
        mac
    }
}

impl fmt::Debug for BearerSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerSecret(…)")
    }
}

crate::words! {
    /// What a one-time link is for.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum LinkPurpose {
        /// Sets the first password of a user who has none.
        Invite,
        /// Replaces a forgotten password.
        Reset,
    }
}

impl LinkPurpose {
    /// How long a link of this purpose stays usable.
    pub fn lifetime(self) -> Duration {
        match self {
            Self::Invite => INVITE_LIFETIME,
            Self::Reset => RESET_LIFETIME,
        }
    }

    /// The email that carries a link of this purpose to `to`, the account's address on
    /// `platform`. Plain text in short lines, our words and the link only: nothing the
    /// requester typed.
    pub fn email(self, to: &crate::user::Email, platform: &PlatformId, url: &str) -> OutgoingEmail {
        let (subject, why, what, ignore) = match self {
            Self::Invite => (
                "Your Holdfast dashboard invitation",
                "You are invited to the Holdfast dashboard as",
                "Choose your password here within 24 hours; the link works once:",
                "If you did not expect this, ignore this email.",
            ),
            Self::Reset => (
                "Reset your Holdfast dashboard password",
                "Someone, we hope you, asked to reset the dashboard password of",
                "Choose a new password here within 1 hour; the link works once:",
                "If you did not ask, ignore this email: your password stays as it is,\n\
                 and whoever asked cannot see this link.",
            ),
        };
        OutgoingEmail {
            to: to.as_str().to_owned(),
            subject: subject.to_owned(),
            body: format!(
                "{why}\n  {to}\n  on platform {platform}.\n\n{what}\n{url}\n\n{ignore}\n"
            ),
        }
    }
}

/// A one-time link as stored (its token by hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserLink {
    /// The hash of the token the link carries.
    pub token_hash: KeyHash,
    /// The user whose password it sets.
    pub user_id: UserId,
    /// The user's platform.
    pub platform_id: PlatformId,
    /// An invitation or a reset.
    pub purpose: LinkPurpose,
    /// When it was made.
    pub created_on: OffsetDateTime,
    /// After this it sets nothing.
    pub expires_on: OffsetDateTime,
}

/// A signed-in session as stored (its secret by hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The hash of the cookie's secret.
    pub id_hash: KeyHash,
    /// The signed-in user.
    pub user_id: UserId,
    /// The user's platform: everything the session sees.
    pub platform_id: PlatformId,
    /// The Test/Live switch: what every page shows and creates.
    pub mode: Mode,
    /// Sign-in time.
    pub created_on: OffsetDateTime,
    /// The last request, to the minute (`TOUCH_EVERY`).
    pub last_seen_on: OffsetDateTime,
    /// The absolute end.
    pub expires_on: OffsetDateTime,
}

impl Session {
    /// Whether the session still signs its user in at `now`: neither past its absolute end nor
    /// idle too long.
    pub fn is_live_at(&self, now: OffsetDateTime) -> bool {
        now < self.expires_on && now - self.last_seen_on < IDLE
    }

    /// Whether a request at `now` should write down the session's use.
    pub fn needs_touch_at(&self, now: OffsetDateTime) -> bool {
        now - self.last_seen_on >= TOUCH_EVERY
    }
}

/// The user a request is signed in as, with the session it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedIn {
    /// The user, with their role.
    pub user: User,
    /// The session, with its mode.
    pub session: Session,
    /// The page a flash waits for on this session, if any (`services::Flashes`), read with the
    /// session so that every other page asks nothing more.
    pub flash_for: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn password_lengths() {
        let cases = [
            ("", false),
            ("123456789", false),
            ("1234567890", true),
            (" spaced out ", true),
            ("ééééééééé", false),
            ("éééééééééé", true),
        ];
        for (raw, ok) in cases {
            assert_eq!(Password::parse(raw).is_ok(), ok, "{raw:?}");
        }
        assert!(Password::parse(&"x".repeat(128)).is_ok());
        let long = Password::parse(&"x".repeat(129)).unwrap_err();
        assert_eq!(long.field, "password");
        assert!(!format!("{:?}", Password::parse("secret pass").unwrap()).contains("secret"));
    }

    #[test]
    fn only_our_own_secrets_are_presented() {
        assert!(BearerSecret::presented("ABCDEFGHIJKLMNOPQRSTUVWXYZ").is_some());
        for raw in [
            "",
            "ABCDEFGHIJKLMNOPQRSTUVWXY",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ1",
            "ABCDEFGHIJKLMNOPQRSTUVWXY-",
            "ÀBCDEFGHIJKLMNOPQRSTUVWXY",
        ] {
            assert!(BearerSecret::presented(raw).is_none(), "{raw:?}");
        }
    }

    #[test]
    fn each_session_has_its_own_csrf_token() {
        let a = BearerSecret::new("ABCDEFGHIJKLMNOPQRSTUVWXYZ".into());
        let b = BearerSecret::new("ABCDEFGHIJKLMNOPQRSTUVWXYa".into());
        assert_eq!(a.csrf_token(), a.clone().csrf_token());
        assert_ne!(a.csrf_token(), b.csrf_token());
        assert_eq!(a.csrf_token().len(), 43);
        assert!(!a.csrf_token().contains(a.expose()));
        assert!(a.accepts_csrf(&a.csrf_token()));
        for sent in [
            b.csrf_token(),
            String::new(),
            "x".repeat(43),
            a.csrf_token() + "A",
        ] {
            assert!(!a.accepts_csrf(&sent), "{sent:?}");
        }
    }

    #[test]
    fn a_session_ends_idle_or_at_its_absolute_end() {
        let start = datetime!(2026-11-22 12:00 UTC);
        let session = Session {
            id_hash: KeyHash::of("x"),
            user_id: UserId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            created_on: start,
            last_seen_on: start,
            expires_on: start + LIFETIME,
        };
        // (minutes after the last request, live, touched)
        for (after, live, touch) in [
            (0, true, false),
            (1, true, true),
            (29, true, true),
            (30, false, true),
        ] {
            let now = start + Duration::minutes(after);
            assert_eq!(session.is_live_at(now), live, "{after} min");
            assert_eq!(session.needs_touch_at(now), touch, "{after} min");
        }
        let busy = Session {
            last_seen_on: start + LIFETIME - Duration::minutes(1),
            ..session
        };
        assert!(busy.is_live_at(start + LIFETIME - Duration::SECOND));
        assert!(!busy.is_live_at(start + LIFETIME), "however busy");
    }
}
