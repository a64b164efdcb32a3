//! Migrations keep the data already stored: reverted and applied again, nothing is lost, on
//! both backends. Here, the migration that moves plan routes from text lists into rows of
//! their own (and back); the pending status's is a conformance case (`migrations` there).
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_domain::ids::{ConnectionId, PlanId, PlatformId, UserId};
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::brand::CardBrand;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::routing::{Plan, ProcessorAccount, ProcessorConnection};
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
        account: ProcessorAccount::Sandbox,
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
        settlement_delay: holdfast_domain::ledger::SettlementDelay::DEFAULT,
    }
}

/// The version of the migration that moved plan routes into `plan_routes`.
const PLAN_ROUTES: &str = "20261125000001";
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
    db.revert_through_and_reapply(PLAN_ROUTES, async || {})
        .await;

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
