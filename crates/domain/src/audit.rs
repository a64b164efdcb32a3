//! The audit log: who did what to a platform's keys, webhook subscriptions and users, when, and
//! from which address, whichever door they came through.

use std::net::IpAddr;

use time::OffsetDateTime;

use crate::ids::{KeyId, PlatformId, UserId};
use crate::mode::Mode;

crate::words! {
    /// The door an action came through.
    pub enum Door {
        /// A user signed in to the dashboard.
        #[strum(serialize = "dashboard")]
        Dashboard,
        /// A request authenticated with an API key.
        #[strum(serialize = "api")]
        Api,
        /// An operator's `holdfast` command (including the demo bootstrap of `serve`).
        #[strum(serialize = "cli")]
        Cli,
    }
}

/// Who acted: a user, an API key, or the operator at the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Who {
    /// A signed-in dashboard user.
    User(UserId),
    /// The API key that authenticated the request.
    Key(KeyId),
    /// Whoever runs `holdfast` on the machine: the database's own access control names them.
    Operator,
}

impl Who {
    /// The stored form: the user's or key's id, or `operator`.
    pub fn as_str(&self) -> &str {
        match self {
            Self::User(id) => id.as_str(),
            Self::Key(id) => id.as_str(),
            Self::Operator => "operator",
        }
    }

    /// Reads the stored form back.
    pub fn from_stored(raw: String) -> Self {
        if raw.starts_with(UserId::PREFIX) {
            Self::User(UserId::from_trusted(raw))
        } else if raw.starts_with(KeyId::PREFIX) {
            Self::Key(KeyId::from_trusted(raw))
        } else {
            Self::Operator
        }
    }
}

/// The acting party of a change, handed by the door to the service that makes the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Who acted.
    pub who: Who,
    /// Through which door.
    pub door: Door,
    /// The address the request came from (the TCP peer, or the client a trusted proxy forwards for); `None` at the command line.
    pub address: Option<IpAddr>,
}

impl Actor {
    /// A signed-in dashboard user, from `address`.
    pub fn dashboard(user: UserId, address: Option<IpAddr>) -> Self {
        Self {
            who: Who::User(user),
            door: Door::Dashboard,
            address,
        }
    }

    /// An API key's request, from `address`.
    pub fn api(key: KeyId, address: Option<IpAddr>) -> Self {
        Self {
            who: Who::Key(key),
            door: Door::Api,
            address,
        }
    }

    /// The operator at the command line.
    pub fn operator() -> Self {
        Self {
            who: Who::Operator,
            door: Door::Cli,
            address: None,
        }
    }
}

crate::words! {
    /// What was done. Each is recorded once the change has been made, never for a refusal.
    pub enum Action {
        /// An API key was generated.
        #[strum(serialize = "key.generated")]
        KeyGenerated,
        /// An API key was renamed.
        #[strum(serialize = "key.renamed")]
        KeyRenamed,
        /// An API key was activated.
        #[strum(serialize = "key.activated")]
        KeyActivated,
        /// An API key was deactivated.
        #[strum(serialize = "key.deactivated")]
        KeyDeactivated,
        /// An API key was deleted.
        #[strum(serialize = "key.deleted")]
        KeyDeleted,
        /// A webhook subscription was created.
        #[strum(serialize = "webhook.created")]
        WebhookCreated,
        /// A webhook subscription was replaced (spec 4.2).
        #[strum(serialize = "webhook.replaced")]
        WebhookReplaced,
        /// A webhook subscription was set active (its counter reset to 0).
        #[strum(serialize = "webhook.activated")]
        WebhookActivated,
        /// A webhook subscription was set inactive.
        #[strum(serialize = "webhook.deactivated")]
        WebhookDeactivated,
        /// A webhook subscription was deleted.
        #[strum(serialize = "webhook.deleted")]
        WebhookDeleted,
        /// A webhook subscription's signing secret was rotated.
        #[strum(serialize = "webhook.secret_rotated")]
        WebhookSecretRotated,
        /// A webhook subscription's signing secret was shown in the dashboard.
        #[strum(serialize = "webhook.secret_revealed")]
        WebhookSecretRevealed,
        /// A delivery was resent (spec 6.4); the target is the new delivery.
        #[strum(serialize = "webhook.resent")]
        WebhookResent,
        /// A test event was sent to a subscription; the target is its delivery.
        #[strum(serialize = "webhook.tested")]
        WebhookTested,
        /// A user account was created.
        #[strum(serialize = "user.created")]
        UserCreated,
        /// A user account was deleted.
        #[strum(serialize = "user.deleted")]
        UserDeleted,
        /// A one-time link that sets a user's first password was issued.
        #[strum(serialize = "user.invited")]
        UserInvited,
        /// A one-time link that resets a user's password was issued.
        #[strum(serialize = "user.reset_requested")]
        UserResetRequested,
        /// A user's password was set (through a link, or by an operator).
        #[strum(serialize = "user.password_set")]
        UserPasswordSet,
        /// A user signed in to the dashboard.
        #[strum(serialize = "user.signed_in")]
        UserSignedIn,
    }
}

impl Action {
    /// The action in words, for the dashboard's Audit Log page.
    pub fn describe(self) -> &'static str {
        match self {
            Self::KeyGenerated => "Generated API key",
            Self::KeyRenamed => "Renamed API key",
            Self::KeyActivated => "Activated API key",
            Self::KeyDeactivated => "Deactivated API key",
            Self::KeyDeleted => "Deleted API key",
            Self::WebhookCreated => "Created webhook subscription",
            Self::WebhookReplaced => "Edited webhook subscription",
            Self::WebhookActivated => "Set webhook subscription active",
            Self::WebhookDeactivated => "Set webhook subscription inactive",
            Self::WebhookDeleted => "Deleted webhook subscription",
            Self::WebhookTested => "Sent a test event to a webhook subscription",
            Self::WebhookSecretRotated => "Rotated signing secret",
            Self::WebhookSecretRevealed => "Revealed signing secret",
            Self::WebhookResent => "Resent webhook",
            Self::UserCreated => "Created user",
            Self::UserDeleted => "Deleted user",
            Self::UserInvited => "Issued invitation link",
            Self::UserResetRequested => "Issued password reset link",
            Self::UserPasswordSet => "Set password",
            Self::UserSignedIn => "Signed in",
        }
    }
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// `aud_…`, time-ordered like every id.
    pub id: String,
    /// The platform acted upon.
    pub platform_id: PlatformId,
    /// The mode of the thing acted upon; `None` for users, who have no mode.
    pub mode: Option<Mode>,
    /// Who acted, through which door, from where.
    pub actor: Actor,
    /// What was done.
    pub action: Action,
    /// The id of what it was done to.
    pub target: String,
    /// When.
    pub created_on: OffsetDateTime,
}

impl AuditEntry {
    /// The prefix of every entry's id.
    pub const PREFIX: &'static str = "aud_";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_reads_back_as_stored() {
        for who in [
            Who::User(UserId::from_suffix("1")),
            Who::Key(KeyId::from_suffix("2")),
            Who::Operator,
        ] {
            assert_eq!(Who::from_stored(who.as_str().to_owned()), who);
        }
    }

    #[test]
    fn every_action_has_a_stored_word_and_words_for_people() {
        for &action in Action::ALL {
            assert_eq!(action.as_str().parse::<Action>().unwrap(), action);
            assert!(!action.describe().is_empty());
        }
    }
}
