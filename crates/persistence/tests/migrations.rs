//! Migrations keep the data already stored: reverted and applied again, nothing is lost, on
//! both backends. Two migrations move data: plan routes from text lists into rows of their own
//! (and back), and a pending payment's status from `E` to `P` (and back).
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_domain::ids::{ConnectionId, EventId, MerchantId, PlanId, PlatformId, TxnId, UserId};
use holdfast_domain::merchant::{Currency, Merchant, MerchantDetails, MerchantName};
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::brand::{CardBrand, FundingType};
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::routing::{Plan, ProcessorConnection, ProcessorKind};
use holdfast_domain::payment::transaction::{
    AuthStatus, Authorization, AvsCode, CvvCode, Named, PaymentSummary, Transaction,
};
use holdfast_domain::platform::{Platform, PlatformName};
use holdfast_domain::ports::NewPlatform;
use holdfast_domain::scope::Scope;
use holdfast_domain::user::{Email, User};
use holdfast_persistence::Stores;
use holdfast_persistence::testing::TestDatabase;
use time::macros::datetime;

fn connection(platform: &PlatformId, suffix: &str) -> ProcessorConnection {
    ProcessorConnection {
        id: ConnectionId::from_suffix(suffix),
        platform_id: platform.clone(),
        mode: Mode::Test,
        name: format!("Sandbox {suffix}"),
        kind: ProcessorKind::Sandbox,
        created_on: datetime!(2026-11-25 10:00 UTC),
    }
}

fn plan(
    platform: &PlatformId,
    suffix: &str,
    routes: &[(CardBrand, &str)],
    fallbacks: &[&str],
) -> Plan {
    Plan {
        id: PlanId::from_suffix(suffix),
        platform_id: platform.clone(),
        mode: Mode::Test,
        name: format!("Plan {suffix}"),
        fee: FeeRule::new(290, 30).unwrap(),
        default_connection: ConnectionId::from_suffix("main"),
        brand_routes: routes
            .iter()
            .map(|(brand, id)| (*brand, ConnectionId::from_suffix(id)))
            .collect(),
        fallbacks: fallbacks
            .iter()
            .map(|id| ConnectionId::from_suffix(id))
            .collect(),
        is_default: suffix == "default",
        created_on: datetime!(2026-11-25 10:00 UTC),
    }
}

/// The version of the migration that moved plan routes into `plan_routes`.
const PLAN_ROUTES: &str = "20261125000001";
/// The version of the migration that gave pending payments the status `P`.
const PENDING_STATUS: &str = "20261202000001";

/// Reverts the newest migrations down to `version`, that one included, and applies them all
/// again, checking that the same ones came back.
async fn revert_through_and_reapply(db: &TestDatabase, version: &str, between: impl AsyncFnOnce()) {
    let mut reverted = Vec::new();
    while reverted
        .last()
        .is_none_or(|v: &String| v.replace('-', "") != version)
    {
        assert!(reverted.len() < 64, "never reached {version}: {reverted:?}");
        reverted.push(db.revert_last_migration().await);
    }
    between().await;
    let mut applied = db.reapply_migrations().await;
    applied.reverse();
    assert_eq!(applied, reverted, "the same migrations, once each");
}

/// Platform "p", created with its connection "main" and its default plan.
async fn platform(stores: &Stores) -> PlatformId {
    let platform = PlatformId::from_suffix("p");
    let owner = User {
        id: UserId::from_suffix("u"),
        platform_id: platform.clone(),
        email: Email::parse("owner@example.com").unwrap(),
        role: holdfast_domain::user::Role::Admin,
        created_on: datetime!(2026-11-25 10:00 UTC),
    };
    stores
        .platforms
        .create_platform_atomically(&NewPlatform {
            platform: Platform {
                id: platform.clone(),
                name: PlatformName::parse("Acme").unwrap(),
                owner_id: owner.id.clone(),
                created_on: datetime!(2026-11-25 10:00 UTC),
            },
            owner,
            keys: Vec::new(),
            connection: connection(&platform, "main"),
            plan: plan(&platform, "default", &[], &[]),
        })
        .await
        .unwrap();
    platform
}

async fn plan_routes_survive_a_revert_and_reapply(db: TestDatabase) {
    let stores = db.open().stores();
    let platform = platform(&stores).await;
    for suffix in ["amex", "visa", "backup", "last"] {
        stores
            .routing
            .insert_connection(&connection(&platform, suffix), None)
            .await
            .unwrap();
    }
    let plans = [
        plan(&platform, "default", &[], &[]),
        plan(
            &platform,
            "routed",
            &[(CardBrand::Amex, "amex"), (CardBrand::Visa, "visa")],
            &["backup", "last"],
        ),
        plan(&platform, "brands", &[(CardBrand::Visa, "visa")], &[]),
        plan(&platform, "falls", &[], &["last", "backup"]),
    ];
    for plan in &plans[1..] {
        stores.routing.insert_plan(plan, None).await.unwrap();
    }
    drop(stores);

    // Back through the plan_routes migration (and any newer), then forward again.
    revert_through_and_reapply(&db, PLAN_ROUTES, async || {}).await;

    let stores = db.open().stores();
    for plan in &plans {
        let read = stores
            .routing
            .get_plan(&Scope::new(platform.clone(), Mode::Test), &plan.id)
            .await
            .unwrap();
        assert_eq!(read.as_ref(), Some(plan), "{}", plan.id);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_plan_routes_survive_a_revert_and_reapply() {
    plan_routes_survive_a_revert_and_reapply(TestDatabase::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_plan_routes_survive_a_revert_and_reapply() {
    let Some(db) = TestDatabase::postgres().await else {
        return;
    };
    plan_routes_survive_a_revert_and_reapply(db).await;
}

/// A payment of `state` and authorization `status` for the test merchant `m`.
fn payment(m: &Merchant, id: &str, state: TxnState, status: AuthStatus) -> Transaction {
    Transaction {
        id: TxnId::from_suffix(id),
        kind: TxnType::Auth,
        merchant_id: m.id.clone(),
        platform_id: m.platform_id.clone(),
        amount: 1000,
        currency: m.details.currency,
        fee: 30,
        created_on: datetime!(2026-11-25 10:00 UTC),
        payment: PaymentSummary {
            bin: "411111".into(),
            brand: CardBrand::Visa,
            last4: "1111".into(),
            funding: FundingType::Credit,
        },
        plan: Named {
            id: PlanId::from_suffix("default"),
            name: "Plan default".into(),
        },
        processor: Named {
            id: ConnectionId::from_suffix("main"),
            name: "Sandbox main".into(),
        },
        authorization: Authorization {
            approved_amount: 0,
            avs: AvsCode::FullMatch,
            cvv: CvvCode::Match,
            partial: false,
            processor_code: String::new(),
            processor_message: String::new(),
            processor_transaction_id: String::new(),
            status,
        },
        mode: Mode::Test,
        state,
        parent_id: None,
        refunded_amount: 0,
    }
}

/// A payment left pending reads `E` before the pending-status migration (as the builds before
/// it wrote it) and `P` after it; a payment whose processor failed says `E` throughout, and an
/// approved one `A`.
async fn a_pending_payments_status_moves_with_its_migration(db: TestDatabase) {
    let stores = db.open().stores();
    let platform = platform(&stores).await;
    let m = Merchant {
        id: MerchantId::from_suffix("m"),
        platform_id: platform.clone(),
        mode: Mode::Test,
        details: MerchantDetails {
            name: MerchantName::parse("Shop").unwrap(),
            currency: Currency::parse("EUR").unwrap(),
            email: None,
        },
        plan_id: None,
        onboarding_status: holdfast_domain::boarding::OnboardingStatus::NotStarted,
        raw_cards_on: None,
        created_on: datetime!(2026-11-25 10:00 UTC),
        updated_on: datetime!(2026-11-25 10:00 UTC),
    };
    stores
        .merchants
        .insert_merchant_with_event(&m, &EventId::from_suffix("e"), None)
        .await
        .unwrap();
    let pending = payment(&m, "pending", TxnState::Pending, AuthStatus::Pending);
    let failed = payment(&m, "failed", TxnState::Failed, AuthStatus::Error);
    let approved = payment(&m, "approved", TxnState::Authorized, AuthStatus::Approved);
    let payments = [&pending, &failed, &approved];
    for t in payments {
        stores
            .transactions
            .insert_pending_transaction(t, None)
            .await
            .unwrap();
    }
    drop(stores);
    let scope = Scope::new(platform, Mode::Test);
    let statuses = async || {
        let stores = db.open().stores();
        let mut statuses = Vec::new();
        for t in payments {
            let read = stores.transactions.get_transaction(&scope, &t.id).await;
            statuses.push(read.unwrap().unwrap().authorization.status);
        }
        statuses
    };
    assert_eq!(
        statuses().await,
        [AuthStatus::Pending, AuthStatus::Error, AuthStatus::Approved]
    );
    revert_through_and_reapply(&db, PENDING_STATUS, async || {
        assert_eq!(
            statuses().await,
            [AuthStatus::Error, AuthStatus::Error, AuthStatus::Approved],
            "before the migration, pending rows said E"
        );
    })
    .await;
    assert_eq!(
        statuses().await,
        [AuthStatus::Pending, AuthStatus::Error, AuthStatus::Approved]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_pending_payments_status_moves_with_its_migration() {
    a_pending_payments_status_moves_with_its_migration(TestDatabase::sqlite().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_pending_payments_status_moves_with_its_migration() {
    let Some(db) = TestDatabase::postgres().await else {
        return;
    };
    a_pending_payments_status_moves_with_its_migration(db).await;
}
