//! Users of a platform. An email address is what the auto-disable email of spec 6.3 goes to.

use std::fmt;

use time::OffsetDateTime;

use crate::Invalid;
use crate::ids::{PlatformId, UserId};

crate::words! {
    /// What a user may do in the dashboard.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum Role {
        /// Everything: keys, webhooks, merchants, resends, secrets.
        Admin,
        /// Reads everything but secrets (no key value, no signing secret) and changes nothing.
        Viewer,
    }
}

/// A user account of a platform: generates keys and creates webhook subscriptions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// The user's id; keys and subscriptions the user created keep it after deletion.
    pub id: UserId,
    /// The platform the user belongs to.
    pub platform_id: PlatformId,
    /// Where the auto-disable email goes for subscriptions the user created; unique per platform.
    pub email: Email,
    /// What the user may do in the dashboard; a platform's owner is an admin.
    pub role: Role,
    /// When the account was created.
    pub created_on: OffsetDateTime,
}

/// An email address, trimmed and lower-cased in its domain part.
///
/// The check is deliberately modest (one `@`, a non-empty local part, a dotted domain, no
/// whitespace or control characters, at most 254 bytes): deliverability is proven by sending,
/// not by a regular expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email(String);

impl Email {
    /// Trims and checks an address, refusing it under the field `email`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let email = raw.trim();
        let bad = || Invalid::new("email", "must be an email address like name@example.com");
        if email.len() > 254 || email.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad());
        }
        let (local, domain) = email.split_once('@').ok_or_else(bad)?;
        let domain_ok = !domain.contains('@')
            && domain.contains('.')
            && domain.split('.').all(|label| !label.is_empty());
        if local.is_empty() || !domain_ok {
            return Err(bad());
        }
        Ok(Self(format!("{local}@{}", domain.to_ascii_lowercase())))
    }

    /// The normalized address as stored and mailed to.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Email {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_rules() {
        let cases = [
            ("ops@example.com", Some("ops@example.com")),
            ("  Ops@Example.COM ", Some("Ops@example.com")),
            ("ops@localhost", None),
            ("@example.com", None),
            ("ops@@example.com", None),
            ("ops example@example.com", None),
            ("ops@example..com", None),
            ("", None),
        ];
        for (raw, want) in cases {
            assert_eq!(
                Email::parse(raw).ok().map(|e| e.0),
                want.map(String::from),
                "{raw:?}"
            );
        }
    }
}
