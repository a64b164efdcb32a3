//! What the pages' handlers receive: the domain's services, and what this replica keeps for
//! sign-in and its budgets.

use std::sync::Arc;

use holdfast_web::Services;
use holdfast_web::rate_limit::RateLimits;
use holdfast_web::throttle::SignInThrottle;

use crate::Demo;

/// The pages door's state.
#[derive(Debug, Clone)]
pub struct PagesState {
    pub services: Services,
    /// Per-address budgets of this replica (failed sign-ins and form posts count here too).
    pub rate_limits: Arc<RateLimits>,
    /// Wrong dashboard passwords per account, on this replica (always on).
    pub sign_in_throttle: Arc<SignInThrottle>,
    /// Password-reset links asked for per account, on this replica: five per 15 minutes.
    pub reset_throttle: Arc<SignInThrottle>,
    /// The `/demo` checkout's keys and merchant, when `serve` set them up.
    pub demo: Option<Arc<Demo>>,
    /// Whether the dashboard's cookie is `Secure` whatever the request's scheme: people reach
    /// Holdfast at an `https` public URL.
    pub secure_cookies: bool,
}

impl std::ops::Deref for PagesState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}
