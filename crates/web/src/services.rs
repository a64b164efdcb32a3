//! The domain's services, as every door holds them: a door reaches the stores only through
//! these, which apply the rules (the binary builds them over one open database).

use holdfast_domain::services::{
    Auditor, Authenticator, BoardingService, ClientSessionService, ComplianceService,
    DashboardService, Flashes, IdempotencyService, KeyService, LedgerService, LoanService,
    MerchantService, NoticeService, PaymentService, PayoutService, PlatformService, RoutingService,
    SettlementService, TokenService, TransactionRequests, UserService, WebhookService,
};

/// Every service a door may call.
#[derive(Clone)]
pub struct Services {
    pub auth: Authenticator,
    pub platforms: PlatformService,
    pub users: UserService,
    /// Dashboard sign-in: passwords, one-time links, sessions.
    pub dashboard: DashboardService,
    /// What a dashboard page shows once after a change (a new key's value, a notice).
    pub flashes: Flashes,
    pub keys: KeyService,
    pub merchants: MerchantService,
    /// Merchants' balances and the books' check.
    pub ledger: LedgerService,
    /// Settlement runs: charges' nets moved from pending to available.
    pub settlement: SettlementService,
    /// Payouts of merchants' available money, and the rails that take them to the bank.
    pub payouts: PayoutService,
    /// Merchant loans: offers, acceptance, repayments.
    pub loans: LoanService,
    /// Processor connections and plans.
    pub routing: RoutingService,
    /// What processors tell Holdfast later (Adyen's notifications).
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
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services").finish_non_exhaustive()
    }
}
