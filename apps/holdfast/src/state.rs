//! Wiring: the domain services over the stores of one open database.
//!
//! `AppState` is what the doors (HTTP handlers, operator commands) receive, and it holds
//! services only: its database is private to this module, so a door cannot reach a store, only
//! a service's rules. The background workers get their ports from `Background`, built here too.

use std::sync::Arc;

use holdfast_api::ApiState;
use holdfast_domain::ports::{Clock, EmailOutbox, NotificationQueue, StoreError};
use holdfast_domain::services::{
    ComplianceService, IdempotencyService, PaymentService, TokenService, WebhookService,
};
use holdfast_pages::PagesState;
use holdfast_persistence::Database;
use holdfast_processors::BinTable;
use holdfast_vault::{AesGcmVault, VaultKey};
use holdfast_web::Services;
use holdfast_web::rate_limit::RateLimits;

use crate::config::PaymentArgs;
use crate::system::SystemClock;

mod wiring;

/// Everything a request handler or an operator command may use: the domain's services
/// (`Deref`), and what this replica keeps for its web doors.
#[derive(Clone)]
pub struct AppState {
    pub services: Services,
    /// Per-key and per-address request budgets of this replica (off unless `serve` sets them).
    pub rate_limits: Arc<RateLimits>,
    /// Wrong dashboard passwords per account, on this replica (always on).
    pub sign_in_throttle: Arc<holdfast_web::throttle::SignInThrottle>,
    /// Password-reset links asked for per account, on this replica: five per 15 minutes.
    pub reset_throttle: Arc<holdfast_web::throttle::SignInThrottle>,
    /// The `/demo` checkout's keys and merchant, when `serve` set them up.
    pub demo: Option<Arc<holdfast_pages::Demo>>,
    /// Apple Pay's domain association file, when configured.
    pub apple_pay_domain_association: Option<Arc<[u8]>>,
    /// The proxies whose `X-Forwarded-For` names the client (none unless `serve` sets them).
    pub trusted_proxies: Arc<holdfast_web::client_address::TrustedProxies>,
    /// Whether the dashboard's cookie is `Secure` whatever the request's scheme: people reach
    /// Holdfast at an `https` public URL.
    pub secure_cookies: bool,
    /// Set when this process begins to stop: `/readyz` answers 503 from then on.
    pub stopping: Arc<std::sync::atomic::AtomicBool>,
    database: Database,
}

impl AppState {
    /// What the API's handlers receive.
    pub fn api(&self) -> ApiState {
        ApiState {
            services: self.services.clone(),
            rate_limits: self.rate_limits.clone(),
            apple_pay_domain_association: self.apple_pay_domain_association.clone(),
        }
    }

    /// What the pages' handlers receive.
    pub fn pages(&self) -> PagesState {
        PagesState {
            services: self.services.clone(),
            rate_limits: self.rate_limits.clone(),
            sign_in_throttle: self.sign_in_throttle.clone(),
            reset_throttle: self.reset_throttle.clone(),
            demo: self.demo.clone(),
            secure_cookies: self.secure_cookies,
        }
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.services
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

/// The ports the background workers drain and sweep, over the same database as the services.
#[derive(Clone)]
pub struct Background {
    pub notifications: Arc<dyn NotificationQueue>,
    pub emails: Arc<dyn EmailOutbox>,
    pub tokens: TokenService,
    pub webhooks: WebhookService,
    pub idempotency: IdempotencyService,
    pub compliance: ComplianceService,
    pub payments: PaymentService,
    pub settlement: holdfast_domain::services::SettlementService,
    pub payouts: holdfast_domain::services::PayoutService,
    pub loans: holdfast_domain::services::LoanService,
    pub clock: Arc<dyn Clock>,
    /// Where delivery loops hear of notifications other processes write (PostgreSQL).
    pub wake_ups: Option<Arc<dyn holdfast_domain::ports::WakeUpSource>>,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Background").finish_non_exhaustive()
    }
}

impl Background {
    /// The workers' ports over `database`, with `state`'s services. A door never holds the
    /// database, so it cannot build one of these. The notification queue is a delivery loop's
    /// (`Database::for_deliveries`): only those loops use it.
    pub fn new(database: &Database, state: &AppState) -> Self {
        let stores = database.stores();
        Self {
            notifications: database.clone().for_deliveries().stores().notifications,
            emails: stores.emails,
            tokens: state.tokens.clone(),
            webhooks: state.webhooks.clone(),
            idempotency: state.idempotency.clone(),
            compliance: state.compliance.clone(),
            payments: state.payments.clone(),
            settlement: state.settlement.clone(),
            payouts: state.payouts.clone(),
            loans: state.loans.clone(),
            clock: Arc::new(SystemClock),
            wake_ups: database
                .wake_ups()
                .map(|w| Arc::new(w) as Arc<dyn holdfast_domain::ports::WakeUpSource>),
        }
    }
}

impl AppState {
    /// Wiring with the default payments settings and a throw-away vault key (operator
    /// commands and tests, which never read tokens back).
    pub fn new(database: Database) -> Self {
        Self::without_vault(database, &PaymentArgs::default())
    }

    /// Wiring for work that never opens a token (operator commands, the workers), with the
    /// payments settings given.
    #[expect(
        clippy::expect_used,
        reason = "a key just generated is 32 bytes of base64; the default payments settings have no live rail to refuse"
    )]
    pub fn without_vault(database: Database, payments: &PaymentArgs) -> Self {
        let key = VaultKey::from_base64("ephemeral", &VaultKey::generate_base64()).expect("valid");
        Self::with_payments(
            database,
            BinTable::shipped(),
            Arc::new(AesGcmVault::new(key, Vec::new())),
            holdfast_wallets::Wallets::default(),
            payments,
            holdfast_domain::services::DEFAULT_PUBLIC_URL,
        )
        .expect("settings without a live rail")
    }

    /// Wiring over the real vault and payments settings; `public_url` is where Holdfast is
    /// reached (a processor is told it as the shopper's return address). Refused when the live
    /// rail's settings are incomplete.
    pub fn with_payments(
        database: Database,
        bins: BinTable,
        vault: Arc<AesGcmVault>,
        wallets: holdfast_wallets::Wallets,
        payments: &PaymentArgs,
        public_url: &str,
    ) -> anyhow::Result<Self> {
        let services = wiring::services(&database, bins, vault, wallets, payments, public_url)?;
        Ok(Self {
            services,
            rate_limits: Arc::new(RateLimits::off()),
            sign_in_throttle: Arc::default(),
            reset_throttle: Arc::default(),
            demo: None,
            apple_pay_domain_association: None,
            trusted_proxies: Arc::default(),
            secure_cookies: false,
            stopping: Arc::default(),
            database,
        })
    }

    /// Whether the database answers (the readiness probe).
    pub async fn ping_database(&self) -> Result<(), StoreError> {
        self.database.ping().await
    }

    /// At most `max` webhook subscriptions per platform and mode.
    #[must_use]
    pub fn with_max_subscriptions(mut self, max: u32) -> Self {
        self.services.webhooks = self.services.webhooks.with_max_subscriptions(max);
        self
    }

    /// Where people reach Holdfast: the start of the dashboard's one-time links.
    #[must_use]
    pub fn with_public_url(mut self, url: &str) -> Self {
        self.services.dashboard = self.services.dashboard.with_public_url(url);
        self.services.boarding = self.services.boarding.with_public_url(url);
        self.services.loans = self.services.loans.with_public_url(url);
        self.secure_cookies = url
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
        self
    }

    /// How long a rotated-out webhook signing secret keeps signing.
    #[must_use]
    pub fn with_secret_overlap(mut self, overlap: time::Duration) -> Self {
        self.services.webhooks = self.services.webhooks.with_secret_overlap(overlap);
        self
    }

    #[must_use]
    pub fn with_apple_pay_domain_association(mut self, file: Option<Vec<u8>>) -> Self {
        self.apple_pay_domain_association = file.map(Arc::from);
        self
    }

    /// Merchant validation through Apple's gateway. (The payment service's copy of the token
    /// service only redeems tokens, so it goes without.)
    #[must_use]
    pub fn with_apple_pay_gateway(
        mut self,
        gateway: Option<Arc<dyn holdfast_domain::ports::ApplePayGateway>>,
    ) -> Self {
        if let Some(gateway) = gateway {
            self.services.tokens = self.services.tokens.with_apple_pay_gateway(gateway);
        }
        self
    }

    #[must_use]
    pub fn with_demo(mut self, demo: Option<holdfast_pages::Demo>) -> Self {
        self.demo = demo.map(Arc::new);
        self
    }

    #[must_use]
    pub fn with_rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = Arc::new(limits);
        self
    }

    /// Believe these proxies about the address they forward for.
    #[must_use]
    pub fn with_trusted_proxies(
        mut self,
        proxies: holdfast_web::client_address::TrustedProxies,
    ) -> Self {
        self.trusted_proxies = Arc::new(proxies);
        self
    }
}
