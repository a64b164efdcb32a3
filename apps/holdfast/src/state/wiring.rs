//! The services over one open database: every store adapter, the vault, the processors and the
//! clock, wired once.

use std::sync::Arc;

use holdfast_adyen::{AdyenConfig, AdyenConnector};
use holdfast_domain::ports::{BinLookup, CardVault, Clock, Ids, Processor};
use holdfast_domain::services::{
    Auditor, Authenticator, BoardingService, ClientSessionService, ComplianceService,
    DashboardService, Flashes, IdempotencyService, KeyService, LedgerService, LoanService,
    MerchantService, NoticeService, PaymentService, PayoutService, PlatformService, RoutingService,
    SettlementService, TokenService, TransactionRequests, UserService, WebhookService,
};
use holdfast_persistence::Database;
use holdfast_processors::{BinTable, Processors};
use holdfast_vault::AesGcmVault;
use holdfast_web::Services;

use crate::config::PaymentArgs;
use crate::system::{RandomIds, SystemClock};

/// Every service, over `database`'s stores, the real vault and payments settings; `public_url`
/// is where Holdfast is reached (a processor is told it as the shopper's return address).
pub(super) fn services(
    database: &Database,
    bins: BinTable,
    vault: Arc<AesGcmVault>,
    wallets: holdfast_wallets::Wallets,
    payments: &PaymentArgs,
    public_url: &str,
) -> anyhow::Result<Services> {
    let fingerprint_secret = vault.fingerprint_secret();
    let vault: Arc<dyn CardVault> = vault;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ids: Arc<dyn Ids> = Arc::new(RandomIds::default());
    let stores = database.stores();
    let (boarding, compliance) = onboarding(&stores, &vault, &clock, &ids);
    let (ledger, settlement, payouts, loans) = money(&stores, &vault, &clock, &ids, payments)?;
    let flashes = Flashes::new(stores.credentials.clone(), vault.clone());
    let bins: Arc<dyn BinLookup> = Arc::new(bins);
    let processor: Arc<dyn Processor> = Arc::new(holdfast_processors::MeteredProcessor(Arc::new(
        processors(payments, &vault, public_url),
    )));
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
    Ok(Services {
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
        ledger,
        settlement,
        loans,
        payouts,
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
    })
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

/// The ledger's reads, settlement runs, payouts (with the live rail, when configured) and the
/// loans they pay out.
fn money(
    stores: &holdfast_persistence::Stores,
    vault: &Arc<dyn CardVault>,
    clock: &Arc<dyn Clock>,
    ids: &Arc<dyn Ids>,
    payments: &PaymentArgs,
) -> anyhow::Result<(LedgerService, SettlementService, PayoutService, LoanService)> {
    let ledger = LedgerService::new(
        stores.ledger.clone(),
        stores.merchants.clone(),
        clock.clone(),
    );
    let settlement = SettlementService::new(stores.ledger.clone(), clock.clone(), ids.clone());
    let payouts = PayoutService::new(
        stores.payouts.clone(),
        stores.ledger.clone(),
        stores.merchants.clone(),
        stores.boarding.clone(),
        vault.clone(),
        clock.clone(),
        ids.clone(),
    );
    let payouts = match payments.ach.rail(stores.ach.clone())? {
        Some(rail) => payouts.with_ach_rail(rail),
        None => payouts,
    };
    let loans = LoanService::new(
        stores.loans.clone(),
        stores.merchants.clone(),
        stores.ledger.clone(),
        payouts.clone(),
        clock.clone(),
        ids.clone(),
    );
    Ok((ledger, settlement, payouts, loans))
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
