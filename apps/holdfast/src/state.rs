//! Wiring: the domain services over the stores of one open database.
//!
//! `AppState` is what the doors (HTTP handlers, operator commands) receive, and it holds
//! services only: its database is private to this module, so a door cannot reach a store, only
//! a service's rules. The background workers get their ports from `Background`, built here too.

use std::sync::Arc;

use holdfast_adyen::{AdyenConfig, AdyenConnector};
use holdfast_domain::ports::StoreError;
use holdfast_domain::ports::{
    BinLookup, CardVault, Clock, EmailOutbox, Ids, NotificationQueue, Processor,
};
use holdfast_domain::services::{
    Auditor, Authenticator, BoardingService, ClientSessionService, ComplianceService,
    DashboardService, Flashes, IdempotencyService, KeyService, MerchantService, NoticeService,
    PaymentService, PlatformService, RoutingService, TokenService, TransactionRequests,
    UserService, WebhookService,
};
use holdfast_persistence::Database;
use holdfast_processors::{BinTable, Processors};
use holdfast_vault::{AesGcmVault, VaultKey};

use crate::config::PaymentArgs;
use holdfast_web::rate_limit::RateLimits;

use crate::system::{RandomIds, SystemClock};

/// Everything a request handler or an operator command may use: services.
#[derive(Clone)]
pub struct AppState {
    pub auth: Authenticator,
    pub platforms: PlatformService,
    pub users: UserService,
    /// Dashboard sign-in: passwords, one-time links, sessions.
    pub dashboard: DashboardService,
    /// What a dashboard page shows once after a change (a new key's value, a notice).
    pub flashes: Flashes,
    pub keys: KeyService,
    pub merchants: MerchantService,
    /// Processor connections and plans.
    pub routing: RoutingService,
    pub notices: NoticeService,
    pub payments: PaymentService,
    /// Card tokens and the BIN table.
    pub tokens: TokenService,
    /// One checkout's session, for the hosted client.
    pub client_sessions: ClientSessionService,
    pub webhooks: WebhookService,
    /// Boarding forms and their hosted page.
    pub boarding: BoardingService,
    /// Approved merchants' PCI compliance forms.
    pub compliance: ComplianceService,
    /// Who did what to keys, subscriptions and users.
    pub audit: Auditor,
    pub idempotency: IdempotencyService,
    /// Transactions as clients ask for them, under their idempotency keys.
    pub transaction_requests: TransactionRequests,
    /// Per-key and per-address request budgets of this replica (off unless `serve` sets them).
    pub rate_limits: Arc<RateLimits>,
    /// Wrong dashboard passwords per account, on this replica (always on).
    pub sign_in_throttle: Arc<holdfast_web::throttle::SignInThrottle>,
    /// Password-reset links asked for per account, on this replica: five per 15 minutes.
    pub reset_throttle: Arc<holdfast_web::throttle::SignInThrottle>,
    /// The `/demo` checkout's keys and merchant, when `serve` set them up.
    pub demo: Option<Arc<crate::demo::Demo>>,
    /// Apple Pay's domain association file, when configured.
    pub apple_pay_domain_association: Option<Arc<[u8]>>,
    /// The proxies whose `X-Forwarded-For` names the client (none unless `serve` sets them).
    pub trusted_proxies: Arc<holdfast_web::client_address::TrustedProxies>,
    /// Whether the dashboard's cookie is `Secure` whatever the request's scheme: people reach
    /// Holdfast at an `https` public URL.
    pub secure_cookies: bool,
    database: Database,
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
            clock: Arc::new(SystemClock),
            wake_ups: database
                .wake_ups()
                .map(|w| Arc::new(w) as Arc<dyn holdfast_domain::ports::WakeUpSource>),
        }
    }
}

/// The processors payments reach: the sandbox, and Adyen through the project's HTTP client.
fn processors(payments: &PaymentArgs, vault: &Arc<dyn CardVault>, public_url: &str) -> Processors {
    let processors = Processors::new(payments.processor_timeout());
    let config = AdyenConfig {
        return_url: format!("{}/", public_url.trim_end_matches('/')),
        allow_loopback: payments.adyen_allow_loopback,
    };
    match AdyenConnector::new(config, vault.clone()) {
        Ok(adyen) => processors.with_adyen(adyen),
        Err(e) => {
            // Only a broken TLS setup fails here; Adyen connections then answer unavailable.
            tracing::error!(error = %e, "no Adyen connector: its TLS setup failed");
            processors
        }
    }
}

/// The services of processor connections: the connections and plans, and what processors
/// tell Holdfast later.
fn processor_services(
    stores: &holdfast_persistence::Stores,
    vault: &Arc<dyn CardVault>,
    clock: &Arc<dyn Clock>,
    ids: &Arc<dyn Ids>,
    payments: &PaymentArgs,
) -> (RoutingService, NoticeService) {
    let routing = RoutingService::new(
        stores.routing.clone(),
        clock.clone(),
        ids.clone(),
        vault.clone(),
        payments.processor_urls(),
    );
    let notices = NoticeService::new(
        stores.notices.clone(),
        stores.transactions.clone(),
        vault.clone(),
        clock.clone(),
        ids.clone(),
    );
    (routing, notices)
}

/// The services of merchant onboarding: boarding forms and compliance.
fn onboarding(
    stores: &holdfast_persistence::Stores,
    vault: &Arc<dyn CardVault>,
    clock: &Arc<dyn Clock>,
    ids: &Arc<dyn Ids>,
) -> (BoardingService, ComplianceService) {
    let boarding = BoardingService::new(
        stores.boarding.clone(),
        stores.merchants.clone(),
        vault.clone(),
        clock.clone(),
        ids.clone(),
    );
    let compliance = ComplianceService::new(
        stores.compliance.clone(),
        stores.merchants.clone(),
        clock.clone(),
        ids.clone(),
    );
    (boarding, compliance)
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
        reason = "a key just generated is 32 bytes of base64"
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
    }

    /// Wiring over the real vault and payments settings; `public_url` is where Holdfast is
    /// reached (a processor is told it as the shopper's return address).
    pub fn with_payments(
        database: Database,
        bins: BinTable,
        vault: Arc<AesGcmVault>,
        wallets: holdfast_wallets::Wallets,
        payments: &PaymentArgs,
        public_url: &str,
    ) -> Self {
        let fingerprint_secret = vault.fingerprint_secret();
        let vault: Arc<dyn CardVault> = vault;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let ids: Arc<dyn Ids> = Arc::new(RandomIds::default());
        let stores = database.stores();
        let (boarding, compliance) = onboarding(&stores, &vault, &clock, &ids);
        let flashes = Flashes::new(stores.credentials.clone(), vault.clone());
        let bins: Arc<dyn BinLookup> = Arc::new(bins);
        let processor: Arc<dyn Processor> = Arc::new(processors(payments, &vault, public_url));
        let (routing, notices) = processor_services(&stores, &vault, &clock, &ids, payments);
        let tokens = TokenService::new(
            stores.tokens,
            stores.client_sessions.clone(),
            Arc::new(wallets),
            vault.clone(),
            bins.clone(),
            clock.clone(),
            ids.clone(),
        );
        let audit = Auditor::new(stores.audit, clock.clone(), ids.clone());
        let payments = PaymentService::new(
            stores.transactions,
            stores.routing.clone(),
            processor,
            bins.clone(),
            clock.clone(),
            ids.clone(),
            tokens.clone(),
        );
        let idempotency =
            IdempotencyService::new(stores.idempotency, clock.clone(), fingerprint_secret);
        Self {
            auth: Authenticator::new(stores.keys.clone(), clock.clone()),
            platforms: PlatformService::new(
                stores.platforms.clone(),
                clock.clone(),
                ids.clone(),
                audit.clone(),
            ),
            users: UserService::new(
                stores.users.clone(),
                stores.platforms.clone(),
                clock.clone(),
                ids.clone(),
                audit.clone(),
            ),
            flashes,
            dashboard: DashboardService::new(
                stores.credentials,
                stores.users.clone(),
                Arc::new(holdfast_vault::Argon2Hasher::default()),
                clock.clone(),
                ids.clone(),
                audit.clone(),
            ),
            keys: KeyService::new(
                stores.keys,
                stores.users,
                clock.clone(),
                ids.clone(),
                audit.clone(),
            ),
            client_sessions: ClientSessionService::new(
                stores.client_sessions,
                stores.merchants.clone(),
                clock.clone(),
                ids.clone(),
            ),
            merchants: MerchantService::new(
                stores.merchants,
                stores.routing.clone(),
                clock.clone(),
                ids.clone(),
            ),
            notices,
            routing,
            transaction_requests: TransactionRequests::new(payments.clone(), idempotency.clone()),
            payments,
            tokens,
            webhooks: WebhookService::new(
                stores.webhooks,
                stores.notifications,
                clock.clone(),
                ids,
                audit.clone(),
            ),
            audit,
            boarding,
            compliance,
            idempotency,
            rate_limits: Arc::new(RateLimits::off()),
            sign_in_throttle: Arc::default(),
            reset_throttle: Arc::default(),
            demo: None,
            apple_pay_domain_association: None,
            trusted_proxies: Arc::default(),
            secure_cookies: false,
            database,
        }
    }

    /// Whether the database answers (the readiness probe).
    pub async fn ping_database(&self) -> Result<(), StoreError> {
        self.database.ping().await
    }

    /// At most `max` webhook subscriptions per platform and mode.
    #[must_use]
    pub fn with_max_subscriptions(mut self, max: u32) -> Self {
        self.webhooks = self.webhooks.with_max_subscriptions(max);
        self
    }

    /// Where people reach Holdfast: the start of the dashboard's one-time links.
    #[must_use]
    pub fn with_public_url(mut self, url: &str) -> Self {
        self.dashboard = self.dashboard.with_public_url(url);
        self.boarding = self.boarding.with_public_url(url);
        self.secure_cookies = url
            .get(..8)
            .is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
        self
    }

    /// How long a rotated-out webhook signing secret keeps signing.
    #[must_use]
    pub fn with_secret_overlap(mut self, overlap: time::Duration) -> Self {
        self.webhooks = self.webhooks.with_secret_overlap(overlap);
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
            self.tokens = self.tokens.with_apple_pay_gateway(gateway);
        }
        self
    }

    #[must_use]
    pub fn with_demo(mut self, demo: Option<crate::demo::Demo>) -> Self {
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
