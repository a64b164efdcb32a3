//! The repository conformance suite: every store contract, written once, run on SQLite and on
//! PostgreSQL. Each test gets a database of its own; the cases are grouped by store under
//! `cases/`.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::sync::atomic::{AtomicU64, Ordering};

use holdfast_domain::api_key::{KeyHash, KeyName, KeyStatus};
use holdfast_domain::auth::Principal;
use holdfast_domain::ids::{ConnectionId, PlanId, TokenId, TxnId};
use holdfast_domain::ids::{KeyId, MerchantId, PlatformId, UserId};
use holdfast_domain::ids::{NotificationId, WebhookId};
use holdfast_domain::merchant::{Currency, Merchant, MerchantDetails, MerchantName, MerchantPatch};
use holdfast_domain::mode::{KeyType, Mode};
use holdfast_domain::page::PageRequest;
use holdfast_domain::payment::brand::{CardBrand, FundingType};
use holdfast_domain::payment::decline::DeclineCode;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::routing::{Plan, ProcessorAccount, ProcessorConnection};
use holdfast_domain::payment::token::{SINGLE_USE_LIFETIME, Token, TokenKind};
use holdfast_domain::payment::transaction::{
    AuthStatus, Authorization, AvsCode, CvvCode, Named, PaymentSummary, Transaction,
};
use holdfast_domain::platform::PlatformName;
use holdfast_domain::ports::{
    ClaimLimits, Clock, Event, EventData, Finished, Ids, NewPlatform, OriginalOutcome, ResendError,
    Reservation, Sealed, StoreError, TxnFilter,
};
use holdfast_domain::scope::Scope;
use holdfast_domain::services::{CreatedPlatform, PlatformService};
use holdfast_domain::user::{Email, User};
use holdfast_domain::webhook::{Description, EndpointUrl, EventList, Outcome, Subscription};
use holdfast_persistence::testing::PreparedPlan;
use holdfast_persistence::{Database, Stores};
use time::OffsetDateTime;
use time::macros::datetime;

const T0: OffsetDateTime = datetime!(2026-11-22 12:00:00.123456 UTC);

/// A claim limited only by its batch, for cases about what is due rather than fairness.
const UNCAPPED: ClaimLimits = ClaimLimits {
    batch: 100,
    per_subscription: 100,
    per_platform: 100,
};

struct FixedClock;
impl Clock for FixedClock {
    fn now(&self) -> OffsetDateTime {
        T0
    }
}

/// Every notification due at `at`, claimed with no cap (leased until `at` itself).
async fn claim_all_due(
    stores: &Stores,
    at: OffsetDateTime,
) -> Vec<holdfast_domain::ports::Claimed> {
    stores
        .notifications
        .claim_notifications(at, at, UNCAPPED, &[], &[])
        .await
        .unwrap()
}

/// Increasing, zero-padded ids, so creation order is id order as with real time-ordered ids.
struct CountingIds;
impl Ids for CountingIds {
    fn next_id(&self) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        format!("{:020}", NEXT.fetch_add(1, Ordering::Relaxed))
    }
    fn key_secret(&self) -> String {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        format!("S{:025}", NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Platforms made the way the operator CLI makes them, recorded in the stores' audit log.
fn platform_service(stores: &Stores) -> PlatformService {
    let auditor = holdfast_domain::services::Auditor::new(
        stores.audit.clone(),
        std::sync::Arc::new(FixedClock),
        std::sync::Arc::new(CountingIds),
    );
    PlatformService::new(
        stores.platforms.clone(),
        std::sync::Arc::new(FixedClock),
        std::sync::Arc::new(CountingIds),
        auditor,
    )
}

async fn new_platform(stores: &Stores, name: &str) -> CreatedPlatform {
    platform_service(stores)
        .create(
            &holdfast_domain::audit::Actor::operator(),
            PlatformName::parse(name).unwrap(),
            Email::parse("owner@example.com").unwrap(),
        )
        .await
        .unwrap()
}

fn principal(created: &CreatedPlatform, mode: Mode) -> Principal {
    Principal {
        scope: Scope::new(created.platform.id.clone(), mode),
        key_type: KeyType::Private,
        key_id: Some(created.keys[0].key.id.clone()),
        user_id: created.owner.id.clone(),
    }
}

fn merchant(p: &Principal, name: &str) -> Merchant {
    Merchant {
        id: MerchantId::from_suffix(&CountingIds.next_id()),
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        details: MerchantDetails {
            name: MerchantName::parse(name).unwrap(),
            currency: Currency::parse("EUR").unwrap(),
            email: Some(Email::parse("shop@example.com").unwrap()),
            metadata: holdfast_domain::metadata::Metadata::default(),
        },
        plan_id: None,
        onboarding_status: holdfast_domain::boarding::OnboardingStatus::NotStarted,
        raw_cards_on: None,
        created_on: T0,
        updated_on: T0,
    }
}

fn sandbox_connection(platform: &PlatformId) -> ProcessorConnection {
    ProcessorConnection {
        id: ConnectionId::from_suffix(&CountingIds.next_id()),
        platform_id: platform.clone(),
        mode: Mode::Test,
        name: "Sandbox".into(),
        account: ProcessorAccount::Sandbox,
        created_on: T0,
    }
}

/// What most ledger cases start from: platform "A", its principal in test mode, its merchant
/// "Shop" (written with its event) and the test mode's default plan.
struct Shop {
    p: Principal,
    m: Merchant,
    plan: Plan,
}

async fn shop(stores: &Stores) -> Shop {
    let a = new_platform(stores, "A").await;
    let p = principal(&a, Mode::Test);
    let m = stored_merchant(stores, &p, "Shop").await;
    let plan = stored_default_plan(stores, &p.scope).await.unwrap();
    Shop { p, m, plan }
}

/// Merchant `name` of `p`, written with its event.
async fn stored_merchant(stores: &Stores, p: &Principal, name: &str) -> Merchant {
    let m = merchant(p, name);
    stores
        .merchants
        .insert_merchant_with_event(&m, &event_id(), None)
        .await
        .unwrap();
    m
}

/// `t` written as a transaction row, whatever its state.
async fn write(stores: &Stores, t: &Transaction) {
    stores
        .transactions
        .insert_pending_transaction(t, None)
        .await
        .unwrap();
}

/// The default plan of `scope` as stored (the one its merchants without a plan use), if any.
async fn stored_default_plan(stores: &Stores, scope: &Scope) -> Option<Plan> {
    let page = PageRequest::new(Some(100), None).unwrap();
    let plans = stores.routing.list_plans(scope, &page).await.unwrap();
    let mut defaults = plans.data.into_iter().filter(|plan| plan.is_default);
    let default = defaults.next();
    assert!(
        defaults.next().is_none(),
        "one default plan per platform and mode"
    );
    default
}

fn default_plan(platform: &PlatformId, connection: &ConnectionId) -> Plan {
    Plan {
        id: PlanId::from_suffix(&CountingIds.next_id()),
        platform_id: platform.clone(),
        mode: Mode::Test,
        name: "Default plan".into(),
        fee: FeeRule::new(290, 30).unwrap(),
        default_connection: connection.clone(),
        brand_routes: vec![(CardBrand::Amex, connection.clone())],
        fallbacks: vec![connection.clone()],
        is_default: true,
        created_on: T0,
        settlement_delay: holdfast_domain::ledger::SettlementDelay::DEFAULT,
    }
}

/// A transaction of `kind` in `state` for merchant `m`, as the payment service would write it.
fn txn(m: &Merchant, plan: &Plan, kind: TxnType, state: TxnState, amount: i64) -> Transaction {
    Transaction {
        id: TxnId::from_suffix(&CountingIds.next_id()),
        kind,
        merchant_id: m.id.clone(),
        platform_id: m.platform_id.clone(),
        amount,
        currency: m.details.currency,
        fee: 30,
        created_on: T0,
        payment: PaymentSummary {
            bin: "411111".into(),
            brand: CardBrand::Visa,
            last4: "1111".into(),
            funding: FundingType::Credit,
        },
        plan: Named {
            id: plan.id.clone(),
            name: plan.name.clone(),
        },
        processor: Named {
            id: plan.default_connection.clone(),
            name: "Sandbox".into(),
        },
        authorization: Authorization {
            approved_amount: amount,
            avs: AvsCode::FullMatch,
            cvv: CvvCode::Match,
            partial: false,
            processor_code: "00".into(),
            decline_code: None,
            processor_message: "Approved".into(),
            processor_transaction_id: "sbx_1".into(),
            status: AuthStatus::Approved,
        },
        mode: m.mode,
        state,
        parent_id: None,
        refunded_amount: 0,
        // Kept and read back as written (the conformance cases compare whole transactions).
        reference: Some(holdfast_domain::payment::labels::Reference::from_trusted(
            "order-1".to_owned(),
        )),
        metadata: holdfast_domain::metadata::Metadata::from_trusted(
            [("cart".to_owned(), "c_1".to_owned())].into(),
        ),
    }
}

fn event_id() -> holdfast_domain::ids::EventId {
    holdfast_domain::ids::EventId::from_suffix(&CountingIds.next_id())
}

fn event_for(t: &Transaction) -> Event {
    Event {
        id: event_id(),
        platform_id: t.platform_id.clone(),
        mode: t.mode,
        data: EventData::TransactionCreated(Box::new(t.clone())),
        created_on: T0,
    }
}

fn subscription(p: &Principal, suffix: &str, events: &[&str], active: bool) -> Subscription {
    Subscription {
        id: WebhookId::from_suffix(suffix),
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        endpoint_url: EndpointUrl::parse("https://example.com/hooks").unwrap(),
        events: EventList::parse(events).unwrap(),
        description: Some(Description::parse("Orders").unwrap()),
        custom_header: None,
        active,
        secret: "whsec_c2VjcmV0".into(),
        previous_secret: None,
        creator: p.user_id.clone(),
        consecutive_failures: 0,
        created_on: T0,
        updated_on: T0,
        metadata: holdfast_domain::metadata::Metadata::default(),
    }
}

/// An active subscription `suffix` of `p` to `merchant.created`, stored (no cap in the way).
async fn stored_subscription(stores: &Stores, p: &Principal, suffix: &str) -> Subscription {
    let hook = subscription(p, suffix, &["merchant.created"], true);
    stores
        .webhooks
        .insert_webhook(&hook, u32::MAX, None)
        .await
        .unwrap();
    hook
}

fn failed(at: OffsetDateTime) -> Finished {
    Finished {
        outcome: Outcome::Failed,
        endpoint_url: Some("https://example.com/hooks".into()),
        request_body: Some("{}".into()),
        response: Some("HTTP 500: no".into()),
        requests: 4,
        attempted_on: at,
    }
}

fn token(p: &Principal, suffix: &str, kind: TokenKind) -> Token {
    Token {
        id: TokenId::from_suffix(suffix),
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        kind,
        card: PaymentSummary {
            bin: "411111".into(),
            brand: CardBrand::Visa,
            last4: "1111".into(),
            funding: FundingType::Credit,
        },
        sealed: Sealed {
            key_id: "k1".into(),
            nonce: vec![7; 12],
            ciphertext: vec![9; 40],
        },
        created_on: T0,
        expires_on: (kind == TokenKind::SingleUse).then_some(T0 + SINGLE_USE_LIFETIME),
        used_on: None,
        client_session_id: None,
        wallet: None,
        merchant_id: None,
        metadata: holdfast_domain::metadata::Metadata::default(),
    }
}

mod cases {
    use super::*;

    mod ach;
    mod audit;
    mod balance_transactions;
    mod boarding;
    mod books;
    mod client_sessions;
    mod compliance;
    mod credentials;
    mod delivery;
    mod idempotency;
    mod keys;
    mod ledger;
    mod merchants;
    mod metadata;
    mod money_properties;
    mod payment_path;
    mod payouts;
    mod platforms;
    mod settlement;
    mod tokens;
    mod webhooks;

    pub use ach::*;
    pub use audit::*;
    pub use balance_transactions::*;
    pub use boarding::*;
    pub use books::*;
    pub use client_sessions::*;
    pub use compliance::*;
    pub use credentials::*;
    pub use delivery::*;
    pub use idempotency::*;
    pub use keys::*;
    pub use ledger::*;
    pub use merchants::*;
    pub use metadata::*;
    pub use money_properties::*;
    pub use payment_path::*;
    pub use payouts::*;
    pub use platforms::*;
    pub use settlement::*;
    pub use tokens::*;
    pub use webhooks::*;
}

macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            use holdfast_persistence::testing::TestDatabase;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let db = TestDatabase::sqlite().await;
                    super::cases::$case(db.open()).await;
                }
            )*
        }
        mod postgres {
            use holdfast_persistence::testing::TestDatabase;
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(db) = TestDatabase::postgres().await else { return };
                    super::cases::$case(db.open()).await;
                }
            )*
        }
    };
}

conformance!(
    balance_transactions_list_each_journal_and_sum_to_the_balances,
    an_ach_file_carries_the_pending_live_payouts_once,
    a_trace_finds_its_payout_and_settled_files_pay,
    a_scheduled_run_pays_live_balances_only_in_usd_to_us_accounts,
    a_payout_takes_only_what_is_available,
    each_payout_move_is_written_once,
    payouts_are_listed_by_scope_merchant_and_state,
    the_rails_read_a_modes_payouts_oldest_first,
    a_scheduled_run_pays_out_what_each_schedule_says_once_a_day,
    platform_is_created_with_owner_and_default_keys,
    platform_creation_is_all_or_nothing,
    user_email_is_unique_per_platform,
    key_is_found_by_hash_only,
    key_lifecycle_is_scoped_by_platform,
    merchants_are_scoped_by_platform_and_mode,
    merchant_update_writes_only_what_is_sent,
    merchant_update_and_delete_are_scoped,
    only_one_first_platform_under_concurrency,
    merchant_pages_newest_first,
    new_platforms_get_a_sandbox_and_a_default_test_plan,
    an_adyen_connection_keeps_its_account_sealed,
    only_one_reservation_closes_an_auth,
    refund_reservations_never_exceed_the_amount,
    transactions_list_by_filter_newest_first,
    an_instant_past_what_is_stored_is_an_error_not_a_panic,
    idempotency_keys_claim_replay_and_release,
    a_created_resource_and_its_stored_answer_commit_together,
    single_use_tokens_are_taken_once_and_expire,
    single_use_cards_are_erased_once_used_or_expired,
    a_token_is_deleted_once_in_its_own_scope,
    merchant_events_fan_out_to_matching_active_subscriptions,
    the_counter_disables_at_twenty_five_and_queues_one_email,
    a_batch_of_outcomes_keeps_their_order_on_the_counter,
    any_pending_is_true_exactly_while_a_notification_is_pending,
    the_25th_failure_inside_one_batch_disables_once,
    an_approved_merchant_stays_approved_whatever_its_other_forms_do,
    written_notifications_are_leased_and_handed_off_at_commit,
    hand_offs_wait_in_their_process_until_its_lines_are_full,
    a_claim_does_not_count_rows_waiting_in_its_lines,
    claims_cap_in_flight_and_interleave_platforms,
    a_claim_does_not_count_ended_attempts_against_the_caps,
    a_secret_rotation_keeps_the_previous_one_and_happens_once,
    webhook_delete_is_scoped_and_takes_the_history,
    subscriptions_are_capped_per_platform_and_mode,
    stale_pending_rows_are_found_and_completed_once,
    payment_setup_reads_the_merchant_its_plan_and_connections,
    completion_writes_event_fan_out_and_reply_or_nothing,
    a_failed_refund_releases_its_reservation,
    a_resources_deliveries_are_found_by_its_id,
    client_sessions_are_scoped_and_closed_once,
    a_held_session_takes_no_other_payment_nor_cancel,
    racing_payments_of_one_session_hold_it_once,
    a_wallet_payment_is_claimed_once,
    passwords_links_and_sessions_are_kept_by_hash_and_used_once,
    sessions_are_found_with_their_user_and_ended_with_it,
    a_sessions_flash_is_taken_once,
    the_audit_log_lists_a_platforms_mode_newest_first,
    a_links_email_is_queued_with_it_or_not_at_all,
    boarding_forms_are_written_whole_with_their_events,
    compliance_forms_go_overdue_once_and_only_the_latest_renews,
    a_raw_card_is_noted_on_its_merchant_once,
    a_pending_row_claims_its_key_or_is_not_written,
    metadata_is_kept_on_merchants_tokens_and_subscriptions,
    a_test_event_goes_to_its_subscription_only,
    a_completion_posts_its_journal_or_nothing,
    a_run_settles_each_due_charge_once,
    a_run_reads_from_the_oldest_charge_left_pending,
    ping_answers,
);

/// Spec 3.1, a deactivated key answers 401 at once on every replica: a change committed
/// through one `Database` (a replica) is seen by the very next read through another, in both
/// directions, and a deletion too. Repeated, since a cache that heard changes only "soon" was
/// right most of the time (docs/decisions.md, "Finding a request's API key").
async fn a_key_change_is_seen_by_the_next_request_on_another_replica(
    test_db: holdfast_persistence::testing::TestDatabase,
) {
    let (reader, writer) = (test_db.open(), test_db.open());
    let created = new_platform(&writer.stores(), "Acme").await;
    let (platform, id) = (&created.platform.id, &created.keys[0].key.id);
    let hash = created.keys[0].value.hash();
    let status = async || {
        let keys = reader.stores().keys;
        keys.find_key_by_hash(&hash)
            .await
            .unwrap()
            .map(|k| k.status)
    };
    let keys = writer.stores().keys;
    for round in 0..50 {
        let to = if round % 2 == 0 {
            KeyStatus::Inactive
        } else {
            KeyStatus::Active
        };
        keys.set_key_status(platform, id, to).await.unwrap();
        assert_eq!(status().await, Some(to), "round {round}");
    }
    keys.delete_key(platform, id).await.unwrap();
    assert_eq!(status().await, None, "the deletion too");
}

mod replicas {
    use holdfast_persistence::testing::TestDatabase;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_a_key_change_is_seen_by_the_next_request_on_another_replica() {
        let db = TestDatabase::sqlite().await;
        super::a_key_change_is_seen_by_the_next_request_on_another_replica(db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_key_change_is_seen_by_the_next_request_on_another_replica() {
        let Some(db) = TestDatabase::postgres().await else {
            return;
        };
        super::a_key_change_is_seen_by_the_next_request_on_another_replica(db).await;
    }
}

/// The pending-status migration moves stored data both ways: a payment left pending reads
/// `E` reverted (as the builds before it wrote it) and `P` applied again; a payment whose
/// processor failed reads `E` throughout, and an approved one `A`.
async fn a_pending_payments_status_moves_with_its_migration(
    test_db: holdfast_persistence::testing::TestDatabase,
) {
    const PENDING_STATUS: &str = "20261202000001";
    let Shop { p, m, plan } = shop(&test_db.open().stores()).await;
    let mut pending = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    pending.authorization.status = AuthStatus::Pending;
    let mut failed = txn(&m, &plan, TxnType::Auth, TxnState::Failed, 1000);
    failed.authorization.status = AuthStatus::Error;
    let approved = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
    let payments = [&pending, &failed, &approved];
    let stores = test_db.open().stores();
    for t in payments {
        write(&stores, t).await;
    }
    drop(stores);
    let statuses = async || {
        let stores = test_db.open().stores();
        let mut statuses = Vec::new();
        for t in payments {
            let read = stores.transactions.get_transaction(&p.scope, &t.id).await;
            statuses.push(read.unwrap().unwrap().authorization.status);
        }
        statuses
    };
    let applied = [AuthStatus::Pending, AuthStatus::Error, AuthStatus::Approved];
    assert_eq!(statuses().await, applied);
    test_db
        .revert_through_and_reapply(PENDING_STATUS, async || {
            // Read as rows, not through the stores: the code expects every later migration.
            let mut before = Vec::new();
            for t in payments {
                let sql = format!(
                    "SELECT status AS text FROM transactions WHERE id = '{}'",
                    t.id
                );
                before.extend(test_db.texts(&sql).await);
            }
            assert_eq!(
                before,
                ["E", "E", "A"],
                "before the migration, pending rows said E"
            );
        })
        .await;
    assert_eq!(statuses().await, applied);
}

/// Declines recorded before `declineCode` was stored get the word their ISO code gave them.
async fn a_declines_word_is_backfilled_by_its_migration(
    test_db: holdfast_persistence::testing::TestDatabase,
) {
    const DECLINE_CODE: &str = "20261205000002";
    let Shop { p, m, plan } = shop(&test_db.open().stores()).await;
    let declined = |code: &str| {
        let mut t = txn(&m, &plan, TxnType::Auth, TxnState::Declined, 1000);
        t.authorization.status = AuthStatus::Declined;
        t.authorization.processor_code = code.into();
        t
    };
    let payments = [declined("51"), declined("43"), declined("N7"), {
        txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000)
    }];
    let stores = test_db.open().stores();
    for t in &payments {
        write(&stores, t).await;
    }
    drop(stores);
    test_db
        .revert_through_and_reapply(DECLINE_CODE, async || {})
        .await;
    let stores = test_db.open().stores();
    let mut words = Vec::new();
    for t in &payments {
        let read = stores.transactions.get_transaction(&p.scope, &t.id).await;
        words.push(read.unwrap().unwrap().authorization.decline_code);
    }
    assert_eq!(
        words,
        [
            Some(DeclineCode::InsufficientFunds),
            Some(DeclineCode::StolenCard),
            Some(DeclineCode::GenericDecline),
            None
        ]
    );
}

mod migrations {
    use holdfast_persistence::testing::TestDatabase;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_the_ledgers_migrations_post_what_came_before() {
        let db = TestDatabase::sqlite().await;
        super::cases::the_ledgers_migrations_post_what_came_before(db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_the_ledgers_migrations_post_what_came_before() {
        let Some(db) = TestDatabase::postgres().await else {
            return;
        };
        super::cases::the_ledgers_migrations_post_what_came_before(db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_a_declines_word_is_backfilled_by_its_migration() {
        let db = TestDatabase::sqlite().await;
        super::a_declines_word_is_backfilled_by_its_migration(db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_declines_word_is_backfilled_by_its_migration() {
        let Some(db) = TestDatabase::postgres().await else {
            return;
        };
        super::a_declines_word_is_backfilled_by_its_migration(db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn sqlite_a_pending_payments_status_moves_with_its_migration() {
        let db = TestDatabase::sqlite().await;
        super::a_pending_payments_status_moves_with_its_migration(db).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_pending_payments_status_moves_with_its_migration() {
        let Some(db) = TestDatabase::postgres().await else {
            return;
        };
        super::a_pending_payments_status_moves_with_its_migration(db).await;
    }
}

/// Runs `case` on a thread of its own with a single-threaded runtime, as each HTTP worker has
/// (the test database is made first: migrations need the multi-threaded one).
fn on_a_worker_thread<F: Future<Output = ()>>(
    db: holdfast_persistence::testing::TestDatabase,
    case: fn(holdfast_persistence::testing::TestDatabase) -> F,
) {
    std::thread::scope(|scope| {
        scope.spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(case(db));
        });
    });
}

/// Cases about what a worker thread does differently, run on one on both backends.
macro_rules! on_a_worker_thread {
    ($($case:ident),* $(,)?) => {
        mod on_a_worker_thread {
            mod sqlite {
                use holdfast_persistence::testing::TestDatabase;
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $case() {
                        let db = TestDatabase::sqlite().await;
                        super::super::on_a_worker_thread(db, super::super::cases::$case);
                    }
                )*
            }
            mod postgres {
                use holdfast_persistence::testing::TestDatabase;
                $(
                    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                    async fn $case() {
                        let Some(db) = TestDatabase::postgres().await else { return };
                        super::super::on_a_worker_thread(db, super::super::cases::$case);
                    }
                )*
            }
        }
    };
}

/// Property tests over random sequences of payments and settlement runs (issue 41), on each
/// backend: each a plain test with a runtime of its own, which the property drives.
mod properties {
    use holdfast_persistence::testing::TestDatabase;

    const CASES: u32 = 32;

    /// Multi-threaded: migrating a SQLite file blocks in place.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn sqlite_random_sequences_keep_the_books() {
        let runtime = runtime();
        let db = runtime.block_on(TestDatabase::sqlite());
        super::cases::random_sequences_keep_the_books(&runtime, &db.open(), CASES);
    }

    #[test]
    fn postgres_random_sequences_keep_the_books() {
        let runtime = runtime();
        let Some(db) = runtime.block_on(TestDatabase::postgres()) else {
            return;
        };
        super::cases::random_sequences_keep_the_books(&runtime, &db.open(), CASES);
    }
}

on_a_worker_thread!(
    batched_completions_post_their_journals,
    payment_writes_arriving_together_are_each_written_whole,
    one_bad_write_in_a_batch_costs_the_others_nothing,
);

/// A PostgreSQL test database opened with a pool of one connection, so the statement after a
/// write runs on the connection the write used; `None` where PostgreSQL tests are skipped.
async fn postgres_on_one_connection()
-> Option<(holdfast_persistence::testing::TestDatabase, Database)> {
    use holdfast_persistence::{DatabaseUrl, PoolOptions};
    let test_db = holdfast_persistence::testing::TestDatabase::postgres().await?;
    let one_connection = PoolOptions {
        max_size: 1,
        ..PoolOptions::default()
    };
    let db = Database::open(&DatabaseUrl::parse(test_db.url()).unwrap(), one_connection).unwrap();
    Some((test_db, db))
}

/// The idempotency claim commits without waiting for the disk on PostgreSQL
/// (docs/decisions.md): that setting is the claim statement's own and never reaches the
/// statements that follow it on the connection, whose commits must be durable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claims_relaxed_commit_stays_in_its_statement() {
    use holdfast_domain::idempotency::{IdempotencyKey, fingerprint};
    use holdfast_domain::ports::Begun;
    let Some((_test_db, db)) = postgres_on_one_connection().await else {
        return;
    };
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let scope = Scope::new(a.platform.id.clone(), Mode::Test);
    let key = IdempotencyKey::parse("order-1").unwrap();
    let print = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{}");
    assert_eq!(
        db.setting("synchronous_commit").await.unwrap().as_deref(),
        Some("on")
    );
    let begun = stores
        .idempotency
        .begin(&scope, &key, &print, T0)
        .await
        .unwrap();
    assert_eq!(begun, Begun::Started);
    assert_eq!(
        db.setting("synchronous_commit").await.unwrap().as_deref(),
        Some("on"),
        "the claim's setting outlived it"
    );
}

/// A batch of successes commits without waiting for the disk on PostgreSQL unless it resets a
/// counter (docs/decisions.md, "Recorded successes commit asynchronously"): its statement sets
/// that for itself (the planner keeps the setting's call), and the setting never reaches the
/// statements that follow it on the connection, whether the batch was alone, reset a counter,
/// or held a failure (a transaction whose counter, disable and email commit durably; which
/// batches may relax is `Commit::of`'s unit test).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_successes_relaxes_only_its_own_commit() {
    use holdfast_persistence::testing::statements_finding_pending_rows_by_key;
    let Some((test_db, db)) = postgres_on_one_connection().await else {
        return;
    };
    let (_, batch_sql) = statements_finding_pending_rows_by_key()
        .into_iter()
        .find(|(what, _)| *what == "a batch of outcomes")
        .unwrap();
    let plan = test_db.generic_plan(&batch_sql).await.unwrap();
    assert!(
        plan.contains("set_config('synchronous_commit'::text, 'off'::text, true)"),
        "{plan}"
    );

    let stores = db.stores();
    let (_, p, hook, claimed) = cases::claimed_merchant_notifications(&stores, 5).await;
    let succeeded = Finished {
        outcome: Outcome::Succeeded,
        ..failed(T0)
    };
    let batches = [
        vec![(claimed[0].id.clone(), succeeded.clone())],
        vec![
            (claimed[1].id.clone(), failed(T0)),
            (claimed[2].id.clone(), succeeded.clone()),
        ],
        vec![(claimed[3].id.clone(), failed(T0))],
        vec![(claimed[4].id.clone(), succeeded)],
    ];
    for batch in batches {
        let recorded = stores
            .notifications
            .complete_notifications(&batch, "Holdfast")
            .await
            .unwrap();
        assert!(recorded.iter().all(|r| r.recorded), "{recorded:?}");
        assert_eq!(
            db.setting("synchronous_commit").await.unwrap().as_deref(),
            Some("on"),
            "the batch's setting outlived it"
        );
    }
    let now = stores
        .webhooks
        .get_webhook(&p.scope, &hook.id)
        .await
        .unwrap();
    assert_eq!(
        now.unwrap().consecutive_failures,
        0,
        "the last batch, a success alone, reset the counter (spec 6.3)"
    );
}

/// A merchant's write and its fan-out lock no parent row (docs/decisions.md, "Fan-out locks no
/// parent row"): a foreign key check takes a KEY SHARE lock on its parent, so every concurrent
/// write of a platform queued on its one `platforms` row, and every notification to a
/// subscription on its `webhooks` row. A lock sets the row's `xmax` to the locker.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_locks_neither_its_platform_nor_its_subscription() {
    let Some(test_db) = holdfast_persistence::testing::TestDatabase::postgres().await else {
        return;
    };
    let stores = test_db.open().stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let hook = stored_subscription(&stores, &p, "h").await;
    let parents = [
        ("platforms", a.platform.id.as_str()),
        ("webhooks", hook.id.as_str()),
    ];
    let mut before = Vec::new();
    for (table, id) in parents {
        before.push(test_db.row_xmax(table, id).await);
    }
    stored_merchant(&stores, &p, "Shop").await;
    assert_eq!(
        records_of(&stores, &p, &hook.id).await,
        1,
        "the merchant's event fanned out"
    );
    for ((table, id), before) in parents.into_iter().zip(before) {
        assert_eq!(
            test_db.row_xmax(table, id).await,
            before,
            "the merchant's write locked its parent in {table}"
        );
    }
}

/// Spec 3.2, a deleted subscription's history goes with it, also when a fan-out that read the
/// subscription before its deletion commits its record after it: nothing in the database stops
/// that record (no foreign key, above), and the retention pass deletes it. The late record is
/// written here as such a fan-out would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_record_written_after_its_subscription_was_deleted_is_deleted() {
    let Some(test_db) = holdfast_persistence::testing::TestDatabase::postgres().await else {
        return;
    };
    let stores = test_db.open().stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let (kept, gone) = (
        stored_subscription(&stores, &p, "kept").await,
        stored_subscription(&stores, &p, "gone").await,
    );
    stored_merchant(&stores, &p, "Shop").await;
    stores
        .webhooks
        .delete_webhook(&p.scope, &gone.id)
        .await
        .unwrap();
    let queue = &stores.notifications;
    assert_eq!(queue.delete_orphaned_deliveries().await.unwrap(), 0);
    test_db
        .execute(&format!(
            "INSERT INTO notifications (id, webhook_id, platform_id, mode, event_id, event_type,
                                        state, due_on, created_on)
             SELECT id || '_late', '{}', platform_id, mode, event_id, event_type, state, due_on,
                    created_on
               FROM notifications WHERE webhook_id = '{}'",
            gone.id, kept.id
        ))
        .await;
    // Until the retention pass, a claim takes the late record with no subscription to send it
    // to (the loop records it skipped).
    let claimed = claim_all_due(&stores, T0 + time::Duration::minutes(1)).await;
    let late = claimed.iter().find(|c| c.webhook_id == gone.id).unwrap();
    assert!(late.subscription.is_none(), "{late:?}");
    assert_eq!(queue.delete_orphaned_deliveries().await.unwrap(), 1);
    assert_eq!(queue.delete_orphaned_deliveries().await.unwrap(), 0);
    assert_eq!(
        records_of(&stores, &p, &kept.id).await,
        1,
        "a live subscription's history stays"
    );
}

/// How many delivery records `webhook`, a subscription of `p`'s platform, has.
async fn records_of(stores: &Stores, p: &Principal, webhook: &WebhookId) -> usize {
    let page = PageRequest::new(Some(100), None).unwrap();
    let history = stores
        .webhooks
        .list_deliveries(&p.scope.platform, Some(p.scope.mode), webhook, &page)
        .await
        .unwrap();
    history.data.len()
}

/// The generic plan of `sql` on a new PostgreSQL database where sequential scans are off:
/// whatever a table's size, a sequential scan is then the plan only where no index serves.
async fn plan_where_an_index_serves(sql: &str) -> Option<String> {
    let test_db = holdfast_persistence::testing::TestDatabase::postgres().await?;
    test_db
        .execute(
            "DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET enable_seqscan = off', \
             current_database()); END $$",
        )
        .await;
    test_db.generic_plan(sql).await
}

/// The hourly archive finds the records attempted before a time through
/// `notifications_archive_idx`, which holds attempted records only (a new notification adds no
/// entry to it): the index's condition must still be implied by the archive's, or the archive
/// would read every record of the platform's history each hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_archive_reads_only_attempted_records_by_its_index() {
    let sql = holdfast_persistence::testing::archive_statement();
    let Some(plan) = plan_where_an_index_serves(&sql).await else {
        return;
    };
    assert!(plan.contains("notifications_archive_idx"), "{plan}");
}

/// The hourly sweep of deleted subscriptions' records walks the subscriptions that records
/// name by the history index, one probe per subscription, and deletes by it: it never reads
/// the whole table, which holds fifteen days of every subscription's deliveries.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_orphan_sweep_reads_notifications_only_by_index() {
    let sql = holdfast_persistence::testing::orphan_sweep_statement();
    let Some(plan) = plan_where_an_index_serves(sql).await else {
        return;
    };
    assert!(
        !plan.contains("Seq Scan on public.notifications"),
        "a whole read of notifications: {plan}"
    );
    assert!(plan.contains("notifications_history_idx"), "{plan}");
}

/// An idle worker's probe for pending notifications reads the pending rows' partial index, on
/// a delivery connection's generic plan: bound, the state could not prove the index's
/// condition, and the probe read the whole history (25–75 ms on a small bench database).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pending_probe_reads_only_the_pending_index() {
    let sql = holdfast_persistence::testing::any_pending_statement();
    let Some(plan) = plan_where_an_index_serves(sql).await else {
        return;
    };
    assert!(plan.contains("notifications_pending_idx"), "{plan}");
}

/// The notification claim reads its indexes with plain index scans (docs/decisions.md, "The
/// claim reads its indexes one entry at a time"): that setting is the claim's transaction's own
/// and never reaches the statements that follow it on the connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claims_plain_index_scans_stay_in_its_transaction() {
    use holdfast_domain::ports::ClaimLimits;
    let Some((_test_db, db)) = postgres_on_one_connection().await else {
        return;
    };
    let bitmap_scans = async || db.setting("enable_bitmapscan").await.unwrap();
    let plans = async || db.setting("plan_cache_mode").await.unwrap();
    assert_eq!(bitmap_scans().await.as_deref(), Some("on"));
    assert_eq!(plans().await.as_deref(), Some("auto"));
    let limits = ClaimLimits {
        batch: 10,
        per_subscription: 16,
        per_platform: 64,
    };
    let claimed = db
        .stores()
        .notifications
        .claim_notifications(T0, T0 + time::Duration::minutes(1), limits, &[], &[])
        .await
        .unwrap();
    assert!(claimed.is_empty());
    assert_eq!(
        bitmap_scans().await.as_deref(),
        Some("on"),
        "the claim's setting outlived its transaction"
    );
    assert_eq!(
        plans().await.as_deref(),
        Some("auto"),
        "so did its planning"
    );
}

/// A delivery loop's connections keep their generic plans (docs/decisions.md, "A delivery
/// connection keeps its generic plans"): the statement that records a batch of outcomes is
/// planned once, not for every batch as on a request's connection, and it finds each row by its
/// key: on a new database, whose tables have no statistics, and after an `ANALYZE` that finds
/// few pending rows (the plan used to read all of `notifications_pending_idx` then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_connection_plans_its_outcome_statement_once() {
    use holdfast_persistence::testing::TestDatabase;
    let (Some(for_delivery), Some(for_requests)) = (
        TestDatabase::postgres().await,
        TestDatabase::postgres().await,
    ) else {
        return;
    };
    let (young, analyzed) = outcome_plans_on_own_thread(&for_delivery, true);
    assert_eq!(young.runs(), (0, 3), "{}", young.plan);
    let analyzed = analyzed.expect("planned again after ANALYZE");
    assert_eq!(analyzed.custom_plans, 0, "{}", analyzed.plan);
    for plan in [&young.plan, &analyzed.plan] {
        assert!(
            plan.contains("Index Scan using notifications_pkey"),
            "each row by its key: {plan}"
        );
        for never in ["Seq Scan", "notifications_pending_idx"] {
            assert!(!plan.contains(never), "{never}: {plan}");
        }
    }

    let (request, _) = outcome_plans_on_own_thread(&for_requests, false);
    assert_eq!(
        request.runs(),
        (3, 0),
        "a request's connection: {}",
        request.plan
    );
}

/// Every statement that finds rows by their key and checks they are still pending plans a key
/// lookup (docs/decisions.md, "Rows found by their key, never by a pending index"), on tables
/// whose statistics count no pending row: there, `state = 'pending'` written out made the
/// planner read `transactions_pending_idx` or `notifications_pending_idx` whole, with a dead
/// entry for every row finished since the last vacuum, for each completion, lease and outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_still_pending_are_found_by_their_key() {
    use holdfast_persistence::testing::{TestDatabase, statements_finding_pending_rows_by_key};
    let Some(test_db) = TestDatabase::postgres().await else {
        return;
    };
    test_db
        .execute(
            "INSERT INTO platforms (id, name, owner_id, created_on)
             VALUES ('plt_x', 'History', 'usr_x', now());
             INSERT INTO webhooks (id, platform_id, mode, endpoint_url, events, active, secret,
                                   creator_id, created_on, updated_on)
             VALUES ('wbh_x', 'plt_x', 'test', 'https://example.com/hooks', 'merchant.created',
                     true, 'secret', 'usr_x', now(), now());
             INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount,
                 currency, fee, created_on, bin, brand, last4, funding, plan_id, plan_name,
                 connection_id, connection_name, approved_amount, avs, cvv, partial,
                 processor_code, processor_message, processor_transaction_id, status)
             SELECT 'txn_' || g, 'plt_x', 'test', 'mer_x', 'auth', 'authorized', 1000, 'USD', 30,
                    now(), '411111', 'visa', '1111', 'credit', 'pln_x', 'Default', 'con_x',
                    'Sandbox', 1000, 'Y', 'M', false, '00', 'Approved', 'sbx_' || g, 'A'
               FROM generate_series(1, 5000) g;
             INSERT INTO notifications (id, webhook_id, platform_id, mode, event_id, event_type,
                                        state, due_on, created_on)
             SELECT 'ntf_' || g, 'wbh_x', 'plt_x', 'test', 'evt_' || g, 'merchant.created',
                    'succeeded', now(), now()
               FROM generate_series(1, 5000) g;
             ANALYZE transactions, notifications",
        )
        .await;
    let statements = statements_finding_pending_rows_by_key();
    assert_eq!(
        statements.len(),
        6,
        "both completions, lease, read, one outcome, a batch"
    );
    for (what, sql) in statements {
        let plan = test_db.generic_plan(&sql).await.expect("PostgreSQL");
        let scans: Vec<&str> = plan
            .lines()
            .filter(|line| line.contains("Scan") && !line.contains("Bitmap Heap Scan"))
            .filter(|line| line.contains("transactions") || line.contains("notifications"))
            .collect();
        assert!(!scans.is_empty(), "{what}: {plan}");
        for scan in scans {
            assert!(
                scan.contains("transactions_pkey") || scan.contains("notifications_pkey"),
                "{what} reads a table other than by its key: {scan}\n{plan}"
            );
        }
    }
}

/// On this thread, with a runtime and a one-connection pool of its own (a delivery loop's when
/// `deliveries`): three notifications recorded one batch each, and how the connection runs the
/// outcome statement then; for a delivery loop, also once 5,000 finished rows are written and
/// analyzed.
fn outcome_plans_on_own_thread(
    test_db: &holdfast_persistence::testing::TestDatabase,
    deliveries: bool,
) -> (PreparedPlan, Option<PreparedPlan>) {
    std::thread::scope(|scope| {
        scope
            .spawn(|| outcome_plans(test_db, deliveries))
            .join()
            .unwrap()
    })
}

fn outcome_plans(
    test_db: &holdfast_persistence::testing::TestDatabase,
    deliveries: bool,
) -> (PreparedPlan, Option<PreparedPlan>) {
    let url = holdfast_persistence::DatabaseUrl::parse(test_db.url()).unwrap();
    let one_connection = holdfast_persistence::PoolOptions {
        max_size: 1,
        ..holdfast_persistence::PoolOptions::default()
    };
    let db = Database::open(&url, one_connection).unwrap();
    let db = if deliveries { db.for_deliveries() } else { db };
    let succeeded = Finished {
        outcome: Outcome::Succeeded,
        ..failed(T0)
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let stores = db.stores();
        let record = async |id: NotificationId| {
            let outcome = [(id, succeeded.clone())];
            let recorded = stores
                .notifications
                .complete_notifications(&outcome, "Holdfast");
            recorded.await.unwrap()[0].recorded
        };
        let (_, _, hook, claimed) = cases::claimed_merchant_notifications(&stores, 3).await;
        for notification in claimed {
            assert!(record(notification.id).await);
        }
        let plan = async || db.prepared_plan("WITH v AS").await.unwrap().unwrap();
        let first = plan().await;
        if !deliveries {
            return (first, None);
        }
        test_db
            .execute(&format!(
                "INSERT INTO notifications (id, webhook_id, platform_id, mode, event_id,
                                            event_type, state, due_on, created_on)
                 SELECT 'ntf_' || g, '{hook}', 'plt_x', 'test', 'evt_' || g, 'merchant.created',
                        'succeeded', now(), now()
                   FROM generate_series(1, 5000) g;
                 ANALYZE notifications",
                hook = hook.id
            ))
            .await;
        assert!(!record(NotificationId::from_trusted("ntf_gone".into())).await);
        (first, Some(plan().await))
    })
}

/// On PostgreSQL, a process without deliverers of its own announces the notifications it
/// writes for the claim, and a delivering process listening hears of each once it is committed;
/// a process that does not announce wakes nobody. A listener whose connection is cut says so
/// (its loops then poll as usual), listens again, and wakes its loops once for what it may have
/// missed meanwhile.
mod wake_ups {
    use std::time::Duration;

    use holdfast_domain::ids::NotificationId;
    use holdfast_domain::mode::Mode;
    use holdfast_domain::ports::WakeUpSource;
    use holdfast_persistence::testing::TestDatabase;
    use holdfast_worker::load::{DeliveryLoad, LoadLimits};

    use super::{
        Principal, Stores, Subscription, T0, claim_all_due, new_platform, principal,
        stored_merchant, stored_subscription,
    };

    const HEARD_WITHIN: Duration = Duration::from_secs(5);

    async fn until(what: &str, condition: impl Fn() -> bool) {
        for _ in 0..500 {
            if condition() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("not {what} within 5 s");
    }

    /// A claiming process's load, for a listener to poke.
    fn a_load() -> std::sync::Arc<DeliveryLoad> {
        DeliveryLoad::claiming(LoadLimits {
            concurrency: 8,
            per_platform: 8,
            per_subscription: 8,
            lease: Duration::from_secs(30),
        })
    }

    /// A load with a listener on `test_db`, listening and past its first wake-up.
    async fn a_listening_load(
        test_db: &TestDatabase,
    ) -> (std::sync::Arc<DeliveryLoad>, tokio::task::JoinHandle<()>) {
        let load = a_load();
        let listener = listen(test_db.open().wake_ups().unwrap(), &load);
        until("listening", || load.listening()).await;
        assert!(woken(&load, HEARD_WITHIN).await);
        (load, listener)
    }

    /// Stores that announce what they write for the claim, with a platform and one
    /// subscription in test mode.
    async fn an_announcing_subscriber(test_db: &TestDatabase) -> (Stores, Principal, Subscription) {
        let stores = test_db
            .open()
            .announcing(Duration::from_millis(50))
            .stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let hook = stored_subscription(&stores, &p, "h").await;
        (stores, p, hook)
    }

    /// `wake_ups` listening for `load`, until the task is aborted.
    fn listen(
        wake_ups: holdfast_persistence::WakeUps,
        load: &std::sync::Arc<DeliveryLoad>,
    ) -> tokio::task::JoinHandle<()> {
        let hints = load.hints();
        tokio::spawn(async move { wake_ups.listen(hints).await })
    }

    async fn woken(load: &DeliveryLoad, wait: Duration) -> bool {
        tokio::time::timeout(wait, load.wait_due()).await.is_ok()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_write_for_the_claim_wakes_the_processes_listening() {
        let Some(test_db) = TestDatabase::postgres().await else {
            return;
        };
        let load = a_load();
        assert!(!load.listening());
        let listener = listen(test_db.open().wake_ups().unwrap(), &load);
        until("listening", || load.listening()).await;
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "listening starts with one wake-up, for what was written unheard"
        );

        let quiet = test_db.open();
        let stores = quiet.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        stored_subscription(&stores, &p, "h").await;
        stored_merchant(&stores, &p, "Not announced").await;
        assert!(
            !woken(&load, Duration::from_millis(500)).await,
            "a process that does not announce woke the listener"
        );

        let announcing = test_db.open().announcing(Duration::from_millis(50));
        stored_merchant(&announcing.stores(), &p, "Announced").await;
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "the announcement was not heard"
        );
        assert_eq!(
            claim_all_due(&stores, T0 + time::Duration::minutes(1))
                .await
                .len(),
            2,
            "what is heard of is committed: the claim finds it"
        );

        // The listener's connection cut from the server's side.
        let mut admin =
            <diesel_async::AsyncPgConnection as diesel_async::AsyncConnection>::establish(
                test_db.url(),
            )
            .await
            .unwrap();
        let cut = diesel_async::RunQueryDsl::execute(
            diesel::sql_query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND query LIKE 'LISTEN%'",
            ),
            &mut admin,
        )
        .await
        .unwrap();
        assert_eq!(cut, 1, "one listening connection");
        until("deaf once cut", || !load.listening()).await;
        until("listening again", || load.listening()).await;
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "listening again wakes the loops for what was written unheard"
        );
        stored_merchant(&announcing.stores(), &p, "Announced again").await;
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "heard after the reconnection"
        );
        listener.abort();
    }

    /// A resend (spec 4.6) is a write for the claim like any other: a process without
    /// deliverers announces it, and it goes out at once rather than at the next poll.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_resend_wakes_the_processes_listening() {
        let Some(test_db) = TestDatabase::postgres().await else {
            return;
        };
        let (load, listener) = a_listening_load(&test_db).await;

        let (stores, p, hook) = an_announcing_subscriber(&test_db).await;
        // A transaction's notification, delivered: written here, where nothing announces it.
        test_db
            .execute(&format!(
                "INSERT INTO notifications (id, webhook_id, platform_id, mode, event_id,
                                            event_type, state, due_on, requests, attempted_on,
                                            created_on)
                 VALUES ('ntf_delivered', '{hook}', '{platform}', 'test', 'evt_x',
                         'transaction.created', 'succeeded', now(), 1, now(), now())",
                hook = hook.id,
                platform = p.scope.platform,
            ))
            .await;
        assert!(
            !woken(&load, Duration::from_millis(300)).await,
            "woken before the resend"
        );
        stores
            .notifications
            .resend(
                &p.scope.platform,
                &NotificationId::from_trusted("ntf_delivered".into()),
                &NotificationId::from_suffix("again"),
                T0,
            )
            .await
            .unwrap();
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "the resend was not announced"
        );
        listener.abort();
    }

    /// A listener whose connection goes silent, neither closed nor answering (a firewall's
    /// idle timeout), finds out at its next heartbeat, says so, and listens again.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_a_listener_whose_connection_goes_silent_listens_again() {
        let Some(test_db) = TestDatabase::postgres().await else {
            return;
        };
        let proxy = silenceable::Proxy::start(test_db.url()).await;
        let via_proxy = proxy.database();
        let load = a_load();
        let wake_ups = via_proxy
            .wake_ups()
            .unwrap()
            .heartbeat(Duration::from_millis(300));
        let listener = listen(wake_ups, &load);
        until("listening", || load.listening()).await;
        assert!(woken(&load, HEARD_WITHIN).await);

        proxy.silence_all();
        until("deaf once silenced", || !load.listening()).await;
        until("listening again", || load.listening()).await;
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "listening again wakes the loops"
        );
        let (stores, p, _) = an_announcing_subscriber(&test_db).await;
        stored_merchant(&stores, &p, "Announced").await;
        assert!(
            woken(&load, HEARD_WITHIN).await,
            "heard on the new connection"
        );
        listener.abort();
    }

    /// An announcer whose connection goes silent gives it up after the heartbeat, and the
    /// announcements after it go out on a new connection: one silent connection never stops
    /// a process's announcements for good.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_an_announcer_whose_connection_goes_silent_announces_again() {
        let Some(test_db) = TestDatabase::postgres().await else {
            return;
        };
        let (load, listener) = a_listening_load(&test_db).await;

        let proxy = silenceable::Proxy::start(test_db.url()).await;
        let via_proxy = proxy.database();
        let announcer = via_proxy
            .wake_ups()
            .unwrap()
            .heartbeat(Duration::from_millis(300))
            .announcer(Duration::from_millis(10));
        announcer.announce();
        assert!(woken(&load, HEARD_WITHIN).await, "the first announcement");

        proxy.silence_all();
        announcer.announce();
        assert!(
            !woken(&load, Duration::from_millis(200)).await,
            "an announcement passed a silent connection"
        );
        // Given up after the heartbeat; the next goes out on a new connection.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let heard = async {
            loop {
                announcer.announce();
                if woken(&load, Duration::from_millis(200)).await {
                    return;
                }
            }
        };
        assert!(
            tokio::time::timeout(HEARD_WITHIN, heard).await.is_ok(),
            "no announcement heard after the connection went silent"
        );
        listener.abort();
    }

    /// A TCP proxy to PostgreSQL whose open connections can be silenced: kept open, but
    /// nothing more passes either way. Connections made afterwards pass.
    mod silenceable {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};

        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        use tokio::net::{TcpListener, TcpStream};

        pub struct Proxy {
            /// The database's URL, through the proxy.
            pub url: String,
            silenced: Arc<Mutex<Vec<Arc<AtomicBool>>>>,
        }

        impl Proxy {
            pub async fn start(database_url: &str) -> Self {
                let (scheme, rest) = database_url.split_once("://").unwrap();
                let (user, rest) = rest.split_once('@').unwrap_or(("", rest));
                let (server, path) = rest.split_once('/').unwrap();
                let server = server.to_owned();
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let at = listener.local_addr().unwrap();
                let user = if user.is_empty() {
                    String::new()
                } else {
                    format!("{user}@")
                };
                let url = format!("{scheme}://{user}{at}/{path}");
                let silenced: Arc<Mutex<Vec<Arc<AtomicBool>>>> = Arc::default();
                let all = silenced.clone();
                tokio::spawn(async move {
                    while let Ok((client, _)) = listener.accept().await {
                        let upstream = TcpStream::connect(&server).await.unwrap();
                        let flag = Arc::new(AtomicBool::new(false));
                        all.lock().unwrap().push(flag.clone());
                        let (client_in, client_out) = client.into_split();
                        let (server_in, server_out) = upstream.into_split();
                        tokio::spawn(pump(client_in, server_out, flag.clone()));
                        tokio::spawn(pump(server_in, client_out, flag));
                    }
                });
                Self { url, silenced }
            }

            /// The database, opened through the proxy.
            pub fn database(&self) -> holdfast_persistence::Database {
                holdfast_persistence::Database::open(
                    &holdfast_persistence::DatabaseUrl::parse(&self.url).unwrap(),
                    holdfast_persistence::PoolOptions::default(),
                )
                .unwrap()
            }

            pub fn silence_all(&self) {
                for flag in self.silenced.lock().unwrap().iter() {
                    flag.store(true, Ordering::SeqCst);
                }
            }
        }

        async fn pump(
            mut from: tokio::net::tcp::OwnedReadHalf,
            mut to: tokio::net::tcp::OwnedWriteHalf,
            silenced: Arc<AtomicBool>,
        ) {
            let mut buffer = vec![0; 16 * 1024];
            loop {
                let read = match from.read(&mut buffer).await {
                    Ok(0) | Err(_) => return,
                    Ok(read) => read,
                };
                if silenced.load(Ordering::SeqCst) {
                    // Holds both ends open, passing nothing, for good.
                    std::future::pending::<()>().await;
                }
                if to.write_all(&buffer[..read]).await.is_err() {
                    return;
                }
            }
        }
    }
}
