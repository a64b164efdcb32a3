//! Use-case services. Each holds its ports as `Arc<dyn Port>`: one concrete type per service,
//! whatever adapters (or mocks) it was built with.

mod audit;
mod authenticator;
mod boarding;
mod client_sessions;
mod compliance;
mod dashboard;
#[cfg(test)]
pub(crate) mod fixtures;
mod flashes;
mod idempotency;
mod keys;
mod ledger;
mod loans;
mod merchants;
mod notices;
mod payments;
mod payouts;
mod platforms;
mod routing;
mod settlement;
mod tokens;
mod users;
mod webhooks;

pub use audit::Auditor;
pub use authenticator::{AuthenticateError, Authenticator};
pub use boarding::{BoardingService, FormFor, IssuedForm, PageError};
pub use client_sessions::{ClientSessionService, CreatedSession, NewClientSession};
pub use compliance::{ComplianceService, CurrentCompliance, Signer};
pub use dashboard::{DEFAULT_PUBLIC_URL, DashboardService, SignInError};
pub use flashes::{Flash, Flashes};
pub use idempotency::IdempotencyService;
pub use keys::{CreatedKey, KeyService};
pub use ledger::LedgerService;
pub use loans::{
    Consent, DEFAULT_OFFER_DAYS, LoanService, MAX_OFFER_DAYS, NewLoan, OfferPageError, OfferedLoan,
    ReviewReport,
};
pub use merchants::{MerchantService, NO_SUCH_PLAN};
pub use notices::{BasicCredentials, NoticeError, NoticeReport, NoticeService, ReceivedItem};
pub use payments::{
    Created, NewPayment, PaymentError, PaymentService, PaymentSource, Reconciled, Renders,
    RequestKey, TransactionRequest, TransactionRequests,
};
pub use payouts::{AchRail, NewPayout, PayoutService, RailReport};
pub use platforms::{CreatedPlatform, PlatformService};
pub use routing::{
    FALLBACK_FIELDS, NO_SUCH_CONNECTION, NewAccount, NewPlan, RoutingService, brand_route_field,
};
pub use settlement::{SettlementAnnouncer, SettlementService};
pub use tokens::{PaymentTerms, Redeemed, TokenError, TokenService};
pub use users::UserService;
pub use webhooks::{DEFAULT_MAX_SUBSCRIPTIONS, NewWebhook, WebhookService};

/// Services hold only ports, which have nothing worth printing.
macro_rules! opaque_debug {
    ($($service:ty),* $(,)?) => {
        $(impl std::fmt::Debug for $service {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($service)).finish_non_exhaustive()
            }
        })*
    };
}

opaque_debug!(
    Authenticator,
    ClientSessionService,
    IdempotencyService,
    KeyService,
    MerchantService,
    PaymentService,
    PlatformService,
    RoutingService,
    TokenService,
    UserService,
    WebhookService,
);

use crate::Invalid;
use crate::ports::StoreError;

/// The error contract of the CRUD-like use cases.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The resource does not exist in the caller's scope (platform and, where it applies, mode).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A field of the request broke a validation rule.
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// The request conflicts with existing state; the message says how.
    #[error("{message}")]
    Conflict {
        /// The request field (camelCase API name) the conflict concerns.
        field: &'static str,
        /// What the conflict is, in words fit to show the caller.
        message: String,
    },
    /// A per-platform limit is reached; the message names it.
    #[error("{0}")]
    LimitReached(String),
    /// Nothing was done because what the request depends on kept changing under it; the same
    /// request may be sent again (a transient answer, never kept for an idempotency key).
    #[error("{0}")]
    Busy(String),
    /// The store failed in a way the caller cannot fix.
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
