//! What the dashboard's sign-in needs: a password hasher, and where credentials, one-time links
//! and sessions are kept.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::StoreError;
use crate::api_key::KeyHash;
use crate::dashboard::{Password, Session, SignedIn, UserLink};
use crate::ids::{PlatformId, UserId};
use crate::mode::Mode;
use crate::user::{Email, User};

/// An email carrying a one-time link, with the outbox id it is queued under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkEmail {
    /// `eml_…`.
    pub id: String,
    /// What is sent.
    pub email: super::OutgoingEmail,
}

/// Hashes passwords slowly on purpose (argon2id), off the request threads.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PasswordHasher: Send + Sync {
    /// The stored form (a PHC string, salt included) of `password`. `alike` holds the stored
    /// hashes of the email's other accounts, oldest first: the new hash takes the salt of one
    /// of them (made with today's parameters if any is), so that one computation checks a
    /// password against every account of the email (`verify_any`).
    async fn hash(&self, password: &Password, alike: Vec<String>) -> String;
    /// The position of the first of `stored` that `password` was made from, if any. It spends
    /// one computation per salt among them (one for all of an email's accounts hashed alike),
    /// and one on a decoy when there is none (no such account), so timing tells neither which
    /// emails exist nor how many accounts one has.
    async fn verify_any(&self, password: &Password, stored: Vec<String>) -> Option<usize>;
}

/// Where users' passwords, their one-time links and their sessions are kept.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait CredentialStore: Send + Sync {
    /// The users with this email, on any platform, who have a password, each with its stored
    /// hash; oldest account first.
    async fn sign_in_candidates(&self, email: &Email) -> Result<Vec<(User, String)>, StoreError>;

    /// Sets a user's password hash and ends every session of the user. `NotFound` when the
    /// platform has no such user.
    async fn set_password(
        &self,
        platform: &PlatformId,
        user: &UserId,
        hash: &str,
    ) -> Result<(), StoreError>;

    /// Keeps a one-time link and, when given, queues the email that carries it (as `id`), in
    /// one transaction: no email goes out for a link that was not kept.
    async fn insert_link(
        &self,
        link: &UserLink,
        email: Option<LinkEmail>,
    ) -> Result<(), StoreError>;

    /// The user of the link whose token hashes to `token`, if it is unused and unexpired at
    /// `now`; writes nothing (the link is used by `redeem_link`).
    async fn usable_link_user(
        &self,
        token: &KeyHash,
        now: OffsetDateTime,
    ) -> Result<Option<User>, StoreError>;

    /// Atomically: uses the link whose token hashes to `token` if it is unused and unexpired at
    /// `now`, sets its user's password hash, and ends every session of the user. The user, or
    /// `None` (and nothing written) when no such link can be used.
    async fn redeem_link(
        &self,
        token: &KeyHash,
        now: OffsetDateTime,
        hash: &str,
    ) -> Result<Option<User>, StoreError>;

    /// Keeps a new session.
    async fn insert_session(&self, session: &Session) -> Result<(), StoreError>;

    /// The session whose secret hashes to `id`, with its user, whatever its age; `None` when
    /// there is none or its user is gone.
    async fn find_session(&self, id: &KeyHash) -> Result<Option<SignedIn>, StoreError>;

    /// Writes down a session's use at `now`.
    async fn touch_session(&self, id: &KeyHash, now: OffsetDateTime) -> Result<(), StoreError>;

    /// Sets the mode a session shows and creates in.
    async fn set_session_mode(&self, id: &KeyHash, mode: Mode) -> Result<(), StoreError>;

    /// Keeps `flash` (sealed by the caller) for the session's page `page`, replacing any other.
    async fn set_session_flash(
        &self,
        id: &KeyHash,
        page: &str,
        flash: &str,
    ) -> Result<(), StoreError>;

    /// The session's flash when it was left for `page`, cleared as it is read: of two views of
    /// the page at once, one gets it; any other page leaves it where it is.
    async fn take_session_flash(
        &self,
        id: &KeyHash,
        page: &str,
    ) -> Result<Option<String>, StoreError>;

    /// Ends a session (sign-out, or found expired); no error when it was already gone.
    async fn delete_session(&self, id: &KeyHash) -> Result<(), StoreError>;
}
