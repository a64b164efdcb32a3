//! Use-case services, generic over their ports.

mod authenticator;
#[cfg(test)]
mod fixtures;
mod keys;
mod merchants;
mod payments;
mod platforms;
mod routing;
mod tokens;
mod users;
mod webhooks;

pub use authenticator::{AuthenticateError, Authenticator};
pub use keys::{CreatedKey, KeyService};
pub use merchants::MerchantService;
pub use payments::{
    NewPayment, PaymentError, PaymentService, PaymentSource, Reconciled, TokenSource,
};
pub use platforms::{CreatedPlatform, PlatformService};
pub use routing::{
    FALLBACK_FIELDS, NO_SUCH_CONNECTION, NewPlan, RoutingService, brand_route_field,
};
pub use tokens::{TokenError, TokenService};
pub use users::UserService;
pub use webhooks::{DEFAULT_MAX_SUBSCRIPTIONS, NewWebhook, WebhookService};

use crate::Invalid;
use crate::ports::StoreError;

/// The error contract of the CRUD-like use cases.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The resource does not exist in the caller's scope (platform and, where it applies, mode).
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The request conflicts with existing state; the message says how.
    #[error("{message}")]
    Conflict {
        field: &'static str,
        message: String,
    },
    /// A per-platform limit is reached; the message names it.
    #[error("{0}")]
    LimitReached(String),
    #[error(transparent)]
    Store(StoreError),
}

impl ServiceError {
    /// Maps a store error, turning `NotFound` into this operation's resource name.
    pub(crate) fn from_store(resource: &'static str, err: StoreError) -> Self {
        match err {
            StoreError::NotFound => ServiceError::NotFound(resource),
            other => ServiceError::Store(other),
        }
    }
}
