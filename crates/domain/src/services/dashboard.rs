//! Signing in to the dashboard: passwords set through one-time links, sessions with idle and
//! absolute ends, and the Test/Live switch a session carries.

use std::net::IpAddr;
use std::sync::Arc;

use crate::audit::{Action, Actor};
use crate::dashboard::{
    BearerSecret, LIFETIME, LinkPurpose, Password, Session, SignedIn, UserLink,
};
use crate::ids::{PlatformId, UserId};
use crate::mode::Mode;
use crate::ports::{Clock, CredentialStore, Ids, LinkEmail, PasswordHasher, StoreError, UserStore};
use crate::user::Email;

use super::ServiceError;
use super::audit::Auditor;

/// Why a sign-in did not sign anyone in. Deliberately one refusal: it never says whether the
/// email or the password was wrong.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    /// No account with that email and password.
    #[error("that email and password do not match an account")]
    Refused,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Signs users in and out, and sets their passwords.
#[derive(Clone)]
pub struct DashboardService {
    credentials: Arc<dyn CredentialStore>,
    users: Arc<dyn UserStore>,
    hasher: Arc<dyn PasswordHasher>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    audit: Auditor,
    /// Where people reach Holdfast: the start of every one-time link.
    public_url: String,
}

/// Where links point unless told otherwise: `holdfast serve`'s default address.
pub const DEFAULT_PUBLIC_URL: &str = "http://127.0.0.1:8080";

impl std::fmt::Debug for DashboardService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DashboardService").finish_non_exhaustive()
    }
}

impl DashboardService {
    /// A service over the credential and user stores, the password hasher, the clock and the
    /// source of secrets, recording sign-ins, links and passwords in the audit log.
    pub fn new(
        credentials: Arc<dyn CredentialStore>,
        users: Arc<dyn UserStore>,
        hasher: Arc<dyn PasswordHasher>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        audit: Auditor,
    ) -> Self {
        Self {
            credentials,
            users,
            hasher,
            clock,
            ids,
            audit,
            public_url: DEFAULT_PUBLIC_URL.to_owned(),
        }
    }

    /// Where Holdfast is reached, without a trailing `/`: what links and shown addresses start
    /// with.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// Links start with `url` (its trailing slashes dropped).
    #[must_use]
    pub fn with_public_url(mut self, url: &str) -> Self {
        url.trim_end_matches('/').clone_into(&mut self.public_url);
        self
    }

    /// Signs in with an email and password as typed: a new session (in test mode) and the
    /// secret for its cookie. An address with accounts on several platforms signs in to the
    /// oldest account the password opens, or to its account on `platform` when one is named
    /// (the platform switch, which asks for the password again).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn sign_in(
        &self,
        email: &str,
        password: &str,
        platform: Option<&PlatformId>,
        address: Option<IpAddr>,
    ) -> Result<(BearerSecret, SignedIn), SignInError> {
        let (Ok(email), Ok(password)) = (Email::parse(email), Password::parse(password)) else {
            // Spend what a real check spends: the refusal's timing says nothing either.
            let filler = Password::parse("not anybody's password").expect("long enough");
            self.hasher.verify_any(&filler, Vec::new()).await;
            return Err(SignInError::Refused);
        };
        let mut candidates = self.credentials.sign_in_candidates(&email).await?;
        if let Some(platform) = platform {
            candidates.retain(|(user, _)| &user.platform_id == platform);
        }
        // One check for all of them (an email's accounts share a salt): the time a wrong
        // password takes does not tell how many accounts the email has, or whether it has any.
        let stored = candidates.iter().map(|(_, hash)| hash.clone()).collect();
        let opened = self.hasher.verify_any(&password, stored).await;
        let Some((user, _)) = opened.and_then(|at| candidates.into_iter().nth(at)) else {
            return Err(SignInError::Refused);
        };
        let now = self.clock.now();
        let secret = BearerSecret::new(self.ids.key_secret());
        let session = Session {
            id_hash: secret.hash(),
            user_id: user.id.clone(),
            platform_id: user.platform_id.clone(),
            mode: Mode::Test,
            created_on: now,
            last_seen_on: now,
            expires_on: now + LIFETIME,
        };
        self.credentials.insert_session(&session).await?;
        let actor = Actor::dashboard(user.id.clone(), address);
        self.audit
            .record_user(&actor, Action::UserSignedIn, &user.platform_id, &user.id)
            .await;
        Ok((
            secret,
            SignedIn {
                user,
                session,
                flash_for: None,
            },
        ))
    }

    /// Who the cookie's secret signs in, if anyone: a session past its absolute end or idle too
    /// long is ended here.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn signed_in(&self, secret: &BearerSecret) -> Result<Option<SignedIn>, StoreError> {
        let id = secret.hash();
        let Some(mut found) = self.credentials.find_session(&id).await? else {
            return Ok(None);
        };
        let now = self.clock.now();
        if !found.session.is_live_at(now) {
            self.credentials.delete_session(&id).await?;
            return Ok(None);
        }
        if found.session.needs_touch_at(now) {
            self.credentials.touch_session(&id, now).await?;
            found.session.last_seen_on = now;
        }
        Ok(Some(found))
    }

    /// The accounts an email has, one per platform at most, each with a password; oldest first.
    pub async fn accounts(&self, email: &Email) -> Result<Vec<crate::user::User>, StoreError> {
        let found = self.credentials.sign_in_candidates(email).await?;
        Ok(found.into_iter().map(|(user, _)| user).collect())
    }

    /// Ends the session.
    pub async fn sign_out(&self, secret: &BearerSecret) -> Result<(), StoreError> {
        self.credentials.delete_session(&secret.hash()).await
    }

    /// The Test/Live switch: what the session shows and creates from now on.
    pub async fn switch_mode(&self, secret: &BearerSecret, mode: Mode) -> Result<(), StoreError> {
        self.credentials
            .set_session_mode(&secret.hash(), mode)
            .await
    }

    /// A one-time link for user `id`: an invitation sets the first password, a reset replaces
    /// one. With `email`, the link is also queued to the user's address (sent by the mail
    /// worker). `NotFound("user")` when the platform has no such user.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn link(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        id: &UserId,
        purpose: LinkPurpose,
        email: bool,
    ) -> Result<String, ServiceError> {
        let user = self.user(platform, id).await?;
        self.issue(actor, &user, purpose, email).await
    }

    /// Emails a reset link to every account with this address that has a password, one link
    /// each. Whether there is any is never told: the answer is the same either way. A malformed
    /// address is refused under `email`.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn request_reset(
        &self,
        email: &str,
        address: Option<IpAddr>,
    ) -> Result<(), ServiceError> {
        let email = Email::parse(email)?;
        let accounts = self
            .credentials
            .sign_in_candidates(&email)
            .await
            .map_err(ServiceError::Store)?;
        for (user, _) in accounts {
            // Who asked is unknown: the entry names the account it was asked for, and where
            // from.
            let actor = Actor::dashboard(user.id.clone(), address);
            self.issue(&actor, &user, LinkPurpose::Reset, true).await?;
        }
        Ok(())
    }

    async fn issue(
        &self,
        actor: &Actor,
        user: &crate::user::User,
        purpose: LinkPurpose,
        email: bool,
    ) -> Result<String, ServiceError> {
        let (platform, id) = (&user.platform_id, &user.id);
        let now = self.clock.now();
        let secret = BearerSecret::new(self.ids.key_secret());
        let link = UserLink {
            token_hash: secret.hash(),
            user_id: id.clone(),
            platform_id: platform.clone(),
            purpose,
            created_on: now,
            expires_on: now + purpose.lifetime(),
        };
        let url = format!(
            "{}/dashboard/welcome?token={}",
            self.public_url,
            secret.expose()
        );
        let email = email.then(|| LinkEmail {
            id: format!("eml_{}", self.ids.next_id()),
            email: purpose.email(&user.email, platform, &url),
        });
        self.credentials
            .insert_link(&link, email)
            .await
            .map_err(ServiceError::Store)?;
        let action = match purpose {
            LinkPurpose::Invite => Action::UserInvited,
            LinkPurpose::Reset => Action::UserResetRequested,
        };
        self.audit.record_user(actor, action, platform, id).await;
        Ok(url)
    }

    /// The platform's user `id`, or `NotFound("user")`.
    async fn user(
        &self,
        platform: &PlatformId,
        id: &UserId,
    ) -> Result<crate::user::User, ServiceError> {
        self.users
            .get_user(platform, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("user"))
    }

    /// The stored hashes of the other accounts of `user`'s email, oldest first, one of whose
    /// salts `user`'s new password takes: one check then covers every account at sign-in.
    async fn hashed_alike(&self, user: &crate::user::User) -> Result<Vec<String>, ServiceError> {
        let accounts = self
            .credentials
            .sign_in_candidates(&user.email)
            .await
            .map_err(ServiceError::Store)?;
        Ok(accounts
            .into_iter()
            .filter(|(account, _)| account.id != user.id)
            .map(|(_, hash)| hash)
            .collect())
    }

    /// Whether the link `token` can still set a password (unused and unexpired): its page says
    /// at once when it cannot, rather than after a password was typed. Writes nothing.
    pub async fn link_is_usable(&self, token: &BearerSecret) -> Result<bool, StoreError> {
        Ok(self
            .credentials
            .usable_link_user(&token.hash(), self.clock.now())
            .await?
            .is_some())
    }

    /// Sets the password of the link's user and uses the link up; every session of the user
    /// ends. `NotFound("link")` when the link is unknown, used or expired.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn redeem(
        &self,
        token: &BearerSecret,
        password: &Password,
        address: Option<IpAddr>,
    ) -> Result<crate::user::User, ServiceError> {
        // An unknown, used or expired link costs no hash (the answer says it is unusable
        // anyway); one used meanwhile is still refused by `redeem_link` below.
        let holder = self
            .credentials
            .usable_link_user(&token.hash(), self.clock.now())
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("link"))?;
        let alike = self.hashed_alike(&holder).await?;
        let hash = self.hasher.hash(password, alike).await;
        let user = self
            .credentials
            .redeem_link(&token.hash(), self.clock.now(), &hash)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("link"))?;
        let actor = Actor::dashboard(user.id.clone(), address);
        self.audit
            .record_user(&actor, Action::UserPasswordSet, &user.platform_id, &user.id)
            .await;
        Ok(user)
    }

    /// Sets a user's password directly (operators); every session of the user ends.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform, id = %id))]
    pub async fn set_password(
        &self,
        actor: &Actor,
        platform: &PlatformId,
        id: &UserId,
        password: &Password,
    ) -> Result<(), ServiceError> {
        let user = self.user(platform, id).await?;
        let alike = self.hashed_alike(&user).await?;
        let hash = self.hasher.hash(password, alike).await;
        self.credentials
            .set_password(platform, id, &hash)
            .await
            .map_err(|e| ServiceError::from_store("user", e))?;
        self.audit
            .record_user(actor, Action::UserPasswordSet, platform, id)
            .await;
        Ok(())
    }
}

#[cfg(test)]
mod tests;
