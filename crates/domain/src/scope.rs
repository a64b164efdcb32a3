//! The platform and mode a request acts in.

use crate::ids::PlatformId;
use crate::mode::Mode;

/// The platform and mode a request acts in. Every scoped store call takes one, so a resource
/// of another platform or mode is never seen (spec 5.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The platform whose resources are seen.
    pub platform: PlatformId,
    /// The only mode whose resources are seen.
    pub mode: Mode,
}

impl Scope {
    /// `platform`'s resources in `mode`.
    pub fn new(platform: PlatformId, mode: Mode) -> Self {
        Self { platform, mode }
    }
}
