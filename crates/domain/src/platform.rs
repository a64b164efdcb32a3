//! The platform: the tenant that owns users, keys and merchants.

use time::OffsetDateTime;

use crate::Invalid;
use crate::ids::{PlatformId, UserId};
use crate::text::bounded_text;

/// A platform: the tenant whose users, keys and merchants live under it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    /// The platform's id (`pfm_`), the scope of every store lookup.
    pub id: PlatformId,
    /// The platform's display name.
    pub name: PlatformName,
    /// The user who created the platform; the default generator of its keys.
    pub owner_id: UserId,
    /// When the platform was created.
    pub created_on: OffsetDateTime,
}

/// 1 to 100 characters after trimming surrounding whitespace; no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformName(String);

impl PlatformName {
    /// Trims and checks a submitted name, refusing it under the field `name` when out of bounds.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        bounded_text("name", raw, 1, 100).map(Self)
    }

    /// The trimmed name as stored and shown.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_bounds() {
        assert!(PlatformName::parse("").is_err());
        assert!(PlatformName::parse("  ").is_err());
        assert!(PlatformName::parse("A").is_ok());
        assert!(PlatformName::parse(&"x".repeat(100)).is_ok());
        assert!(PlatformName::parse(&"x".repeat(101)).is_err());
    }
}
