//! What the API's handlers receive: the domain's services, and this replica's request budgets.

use std::sync::Arc;

use holdfast_web::Services;
use holdfast_web::rate_limit::RateLimits;

/// The API door's state.
#[derive(Debug, Clone)]
pub struct ApiState {
    pub services: Services,
    /// Per-key and per-address request budgets of this replica (off unless `serve` sets them).
    pub rate_limits: Arc<RateLimits>,
    /// Apple Pay's domain association file, when configured.
    pub apple_pay_domain_association: Option<Arc<[u8]>>,
}

impl std::ops::Deref for ApiState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}
