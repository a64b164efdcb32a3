//! The platform: the tenant that owns users, keys and merchants.

use time::OffsetDateTime;

use crate::Invalid;
use crate::ids::{PlatformId, UserId};
use crate::text::bounded_text;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Platform {
    pub id: PlatformId,
    pub name: PlatformName,
    /// The user who created the platform; the default generator of its keys.
    pub owner_id: UserId,
    pub created_on: OffsetDateTime,
}

/// 1 to 100 characters after trimming surrounding whitespace; no control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformName(String);

impl PlatformName {
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        bounded_text("name", raw, 1, 100).map(Self)
    }

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
