//! Wiring: the domain services over the stores of one open database.

use std::sync::Arc;

use holdfast_domain::ports::{
    BinLookup, CardVault, Clock, EmailOutbox, IdempotencyStore, Ids, KeyStore, MerchantStore,
    NotificationQueue, PaymentStore, PlatformStore, Processor, TokenStore, UserStore, WebhookStore,
};
use holdfast_domain::services::{
    Authenticator, KeyService, MerchantService, PaymentService, PlatformService, RoutingService,
    TokenService, TokenSource, UserService, WebhookService,
};
use holdfast_persistence::Database;
use holdfast_processors::{BinTable, Processors};
use holdfast_vault::{AesGcmVault, VaultKey};

use crate::config::PaymentArgs;
use crate::http::rate_limit::RateLimits;

use crate::system::{RandomIds, SystemClock};

type Shared<T> = Arc<T>;
type DynClock = Shared<dyn Clock>;
type DynIds = Shared<dyn Ids>;

/// The payment service as wired here.
pub type Payments = PaymentService<
    Shared<dyn PaymentStore>,
    Shared<dyn Processor>,
    Shared<dyn BinLookup>,
    DynClock,
    DynIds,
    Shared<dyn TokenStore>,
    Shared<dyn CardVault>,
>;

/// The token service as wired here.
pub type Tokens = TokenService<
    Shared<dyn TokenStore>,
    Shared<dyn CardVault>,
    Shared<dyn BinLookup>,
    DynClock,
    DynIds,
>;

/// Everything a request handler or an operator command needs.
#[derive(Clone)]
pub struct AppState {
    pub database: Database,
    pub auth: Authenticator<Shared<dyn KeyStore>, DynClock>,
    pub platforms: PlatformService<Shared<dyn PlatformStore>, DynClock, DynIds>,
    pub users: UserService<Shared<dyn UserStore>, Shared<dyn PlatformStore>, DynClock, DynIds>,
    pub keys: KeyService<Shared<dyn KeyStore>, Shared<dyn UserStore>, DynClock, DynIds>,
    pub merchants: MerchantService<Shared<dyn MerchantStore>, DynClock, DynIds>,
    /// Processor connections and plans.
    pub routing: RoutingService<Shared<dyn PaymentStore>, DynClock, DynIds>,
    pub payments: Payments,
    pub tokens: Tokens,
    pub webhooks:
        WebhookService<Shared<dyn WebhookStore>, Shared<dyn NotificationQueue>, DynClock, DynIds>,
    /// The queues the background workers drain.
    pub notifications: Shared<dyn NotificationQueue>,
    pub emails: Shared<dyn EmailOutbox>,
    token_store: Shared<dyn TokenStore>,
    /// The payment store itself, for the transaction reads that have no service yet (issue 9).
    pub payment_store: Shared<dyn PaymentStore>,
    pub bins: Shared<dyn BinLookup>,
    pub idempotency: Shared<dyn IdempotencyStore>,
    /// Keys the fingerprints of idempotent requests (derived from the vault key).
    pub fingerprint_secret: [u8; 32],
    pub clock: DynClock,
    pub ids: DynIds,
    /// Per-key and per-address request budgets of this replica (off unless `serve` sets them).
    pub rate_limits: Arc<RateLimits>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl AppState {
    /// The token store: reads that need no rules, and the retention worker.
    pub fn token_store(&self) -> Shared<dyn TokenStore> {
        self.token_store.clone()
    }

    /// Wiring with the default payments settings and a throw-away vault key (operator
    /// commands and tests, which never read tokens back).
    pub fn new(database: Database) -> Self {
        Self::without_vault(database, &PaymentArgs::default())
    }

    /// Wiring for work that never opens a token (operator commands, the workers), with the
    /// payments settings given.
    pub fn without_vault(database: Database, payments: &PaymentArgs) -> Self {
        let key = VaultKey::from_base64("ephemeral", &VaultKey::generate_base64()).expect("valid");
        Self::with_payments(
            database,
            BinTable::shipped(),
            AesGcmVault::new(key, Vec::new()),
            payments,
        )
    }

    pub fn with_payments(
        database: Database,
        bins: BinTable,
        vault: AesGcmVault,
        payments: &PaymentArgs,
    ) -> Self {
        let fingerprint_secret = vault.fingerprint_secret();
        let vault: Shared<dyn CardVault> = Arc::new(vault);
        let clock: DynClock = Arc::new(SystemClock);
        let ids: DynIds = Arc::new(RandomIds::default());
        let stores = database.stores();
        let bins: Shared<dyn BinLookup> = Arc::new(bins);
        let processor: Shared<dyn Processor> =
            Arc::new(Processors::new(payments.processor_timeout()));
        Self {
            auth: Authenticator::new(stores.keys.clone(), clock.clone()),
            platforms: PlatformService::new(stores.platforms.clone(), clock.clone(), ids.clone()),
            users: UserService::new(
                stores.users.clone(),
                stores.platforms.clone(),
                clock.clone(),
                ids.clone(),
            ),
            keys: KeyService::new(stores.keys, stores.users, clock.clone(), ids.clone()),
            merchants: MerchantService::new(stores.merchants, clock.clone(), ids.clone()),
            routing: RoutingService::new(stores.payments.clone(), clock.clone(), ids.clone()),
            payments: PaymentService::new(
                stores.payments.clone(),
                processor,
                bins.clone(),
                clock.clone(),
                ids.clone(),
                TokenSource {
                    tokens: stores.tokens.clone(),
                    vault: vault.clone(),
                },
            ),
            token_store: stores.tokens.clone(),
            tokens: TokenService::new(
                stores.tokens,
                vault,
                bins.clone(),
                clock.clone(),
                ids.clone(),
            ),
            webhooks: WebhookService::new(
                stores.webhooks,
                stores.notifications.clone(),
                clock.clone(),
                ids.clone(),
            ),
            notifications: stores.notifications,
            emails: stores.emails,
            payment_store: stores.payments,
            idempotency: stores.idempotency,
            fingerprint_secret,
            bins,
            clock,
            ids,
            database,
            rate_limits: Arc::new(RateLimits::off()),
        }
    }

    /// At most `max` webhook subscriptions per platform and mode.
    #[must_use]
    pub fn with_max_subscriptions(mut self, max: u32) -> Self {
        self.webhooks = self.webhooks.with_max_subscriptions(max);
        self
    }

    /// How long a rotated-out webhook signing secret keeps signing.
    #[must_use]
    pub fn with_secret_overlap(mut self, overlap: time::Duration) -> Self {
        self.webhooks = self.webhooks.with_secret_overlap(overlap);
        self
    }

    #[must_use]
    pub fn with_rate_limits(mut self, limits: RateLimits) -> Self {
        self.rate_limits = Arc::new(limits);
        self
    }
}
