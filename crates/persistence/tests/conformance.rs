//! The repository conformance suite: every store contract, written once, run on SQLite and on
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]
//! PostgreSQL. Each test gets a database of its own.

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
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::routing::{Plan, ProcessorConnection, ProcessorKind};
use holdfast_domain::payment::token::{SINGLE_USE_LIFETIME, Token, TokenKind};
use holdfast_domain::payment::transaction::{
    AuthStatus, Authorization, AvsCode, CvvCode, Named, PaymentSummary, Transaction,
};
use holdfast_domain::platform::PlatformName;
use holdfast_domain::ports::{
    ClaimLimits, Clock, Event, EventData, Finished, Ids, NewPlatform, OriginalOutcome, ResendError,
    Reservation, Sealed, StoreError, TxnFilter,
};
use holdfast_domain::services::{CreatedPlatform, PlatformService};
use holdfast_domain::user::{Email, User};
use holdfast_domain::webhook::{Description, EndpointUrl, EventList, Outcome, Subscription};
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

async fn new_platform(stores: &Stores, name: &str) -> CreatedPlatform {
    PlatformService::new(
        stores.platforms.clone(),
        std::sync::Arc::new(FixedClock),
        std::sync::Arc::new(CountingIds),
    )
    .create(
        PlatformName::parse(name).unwrap(),
        Email::parse("owner@example.com").unwrap(),
    )
    .await
    .unwrap()
}

fn principal(created: &CreatedPlatform, mode: Mode) -> Principal {
    Principal {
        platform_id: created.platform.id.clone(),
        mode,
        key_type: KeyType::Private,
        key_id: created.keys[0].key.id.clone(),
        user_id: created.owner.id.clone(),
    }
}

fn merchant(p: &Principal, name: &str) -> Merchant {
    Merchant {
        id: MerchantId::from_suffix(&CountingIds.next_id()),
        platform_id: p.platform_id.clone(),
        mode: p.mode,
        details: MerchantDetails {
            name: MerchantName::parse(name).unwrap(),
            currency: Currency::parse("EUR").unwrap(),
            email: Some(Email::parse("shop@example.com").unwrap()),
        },
        plan_id: None,
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
        kind: ProcessorKind::Sandbox,
        created_on: T0,
    }
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
            processor_message: "Approved".into(),
            processor_transaction_id: "sbx_1".into(),
            status: AuthStatus::Approved,
        },
        mode: m.mode,
        state,
        parent_id: None,
        refunded_amount: 0,
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

mod cases {
    use super::*;

    mod payment_path;
    pub use payment_path::*;

    pub async fn platform_is_created_with_owner_and_default_keys(db: Database) {
        let stores = db.stores();
        assert!(stores.platforms.list_platforms().await.unwrap().is_empty());
        let created = new_platform(&stores, "Acme").await;
        let platform = stores
            .platforms
            .get_platform(&created.platform.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            platform, created.platform,
            "round trip, microseconds included"
        );
        let owner = stores
            .users
            .get_user(&platform.id, &platform.owner_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(owner, created.owner);
        let listed = stores.keys.list_keys(&platform.id).await.unwrap();
        let expected: Vec<_> = created.keys.iter().map(|k| k.key.clone()).collect();
        assert_eq!(listed, expected);
        assert_eq!(stores.platforms.list_platforms().await.unwrap(), [platform]);
    }

    pub async fn platform_creation_is_all_or_nothing(db: Database) {
        let stores = db.stores();
        let created = new_platform(&stores, "Acme").await;
        // A second platform whose key collides with an existing hash must leave no trace.
        let mut clash = created.clone();
        clash.platform.id = PlatformId::from_suffix("clash");
        clash.owner.id = UserId::from_suffix("clash");
        clash.owner.platform_id = clash.platform.id.clone();
        let mut key = clash.keys[0].key.clone();
        key.id = KeyId::from_suffix("clash");
        key.platform_id = clash.platform.id.clone();
        let new = NewPlatform {
            connection: sandbox_connection(&clash.platform.id),
            plan: default_plan(&clash.platform.id, &ConnectionId::from_suffix("clash")),
            platform: clash.platform.clone(),
            owner: clash.owner.clone(),
            keys: vec![key],
        };
        let err = stores
            .platforms
            .create_platform_atomically(&new)
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::Duplicate(_)), "{err:?}");
        assert!(
            stores
                .platforms
                .get_platform(&clash.platform.id)
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            stores
                .users
                .get_user(&clash.platform.id, &clash.owner.id)
                .await
                .unwrap()
                .is_none()
        );
    }

    pub async fn user_email_is_unique_per_platform(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let b = new_platform(&stores, "B").await;
        let user = |p: &CreatedPlatform, id: &str| User {
            id: UserId::from_suffix(id),
            platform_id: p.platform.id.clone(),
            email: Email::parse("dev@example.com").unwrap(),
            created_on: T0,
        };
        stores.users.insert_user(&user(&a, "a1")).await.unwrap();
        let err = stores.users.insert_user(&user(&a, "a2")).await.unwrap_err();
        assert!(
            matches!(err, StoreError::Duplicate("users.email")),
            "{err:?}"
        );
        stores.users.insert_user(&user(&b, "b1")).await.unwrap();
        assert_eq!(
            stores.users.list_users(&a.platform.id).await.unwrap().len(),
            2
        );
        // Deleting is scoped by platform.
        let err = stores
            .users
            .delete_user(&b.platform.id, &UserId::from_suffix("a1"))
            .await;
        assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
        stores
            .users
            .delete_user(&a.platform.id, &UserId::from_suffix("a1"))
            .await
            .unwrap();
        assert!(
            stores
                .users
                .get_user(&a.platform.id, &UserId::from_suffix("a1"))
                .await
                .unwrap()
                .is_none()
        );
    }

    pub async fn key_is_found_by_hash_only(db: Database) {
        let stores = db.stores();
        let created = new_platform(&stores, "Acme").await;
        let public = &created.keys[1];
        let found = stores
            .keys
            .find_key_by_hash(&public.value.hash())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(found, public.key);
        assert_eq!(found.last4, public.value.last4());
        let unknown = KeyHash::of("pub_test_00000000000000000000000000");
        assert!(
            stores
                .keys
                .find_key_by_hash(&unknown)
                .await
                .unwrap()
                .is_none()
        );
    }

    pub async fn key_lifecycle_is_scoped_by_platform(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let b = new_platform(&stores, "B").await;
        let id = &a.keys[0].key.id;
        let foreign = &b.platform.id;
        let name = KeyName::parse("Renamed key").unwrap();
        assert!(matches!(
            stores.keys.rename_key(foreign, id, &name).await,
            Err(StoreError::NotFound)
        ));
        assert!(matches!(
            stores
                .keys
                .set_key_status(foreign, id, KeyStatus::Inactive)
                .await,
            Err(StoreError::NotFound)
        ));
        assert!(matches!(
            stores.keys.delete_key(foreign, id).await,
            Err(StoreError::NotFound)
        ));
        assert!(stores.keys.get_key(foreign, id).await.unwrap().is_none());

        let own = &a.platform.id;
        stores.keys.rename_key(own, id, &name).await.unwrap();
        stores
            .keys
            .set_key_status(own, id, KeyStatus::Inactive)
            .await
            .unwrap();
        let key = stores.keys.get_key(own, id).await.unwrap().unwrap();
        assert_eq!(
            (key.name.as_str(), key.status),
            ("Renamed key", KeyStatus::Inactive)
        );
        assert_eq!(key.mode, Mode::Test, "mode never changes");

        let last_used = async |platform| {
            stores
                .keys
                .get_key(platform, id)
                .await
                .unwrap()
                .map(|k| k.last_used_on)
        };
        stores.keys.touch_key(foreign, id, T0).await.unwrap();
        assert_eq!(
            last_used(own).await,
            Some(None),
            "touching is scoped by platform"
        );
        stores.keys.touch_key(own, id, T0).await.unwrap();
        assert_eq!(last_used(own).await, Some(Some(T0)));

        stores.keys.delete_key(own, id).await.unwrap();
        assert!(stores.keys.get_key(own, id).await.unwrap().is_none());
        assert!(
            stores
                .keys
                .find_key_by_hash(&a.keys[0].value.hash())
                .await
                .unwrap()
                .is_none()
        );
        assert!(matches!(
            stores.keys.delete_key(own, id).await,
            Err(StoreError::NotFound)
        ));
    }

    pub async fn merchants_are_scoped_by_platform_and_mode(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let b = new_platform(&stores, "B").await;
        let test = principal(&a, Mode::Test);
        let m = merchant(&test, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let got = stores
            .merchants
            .get_merchant(&test.platform_id, Mode::Test, &m.id)
            .await
            .unwrap();
        assert_eq!(got.as_ref(), Some(&m));
        for (platform, mode) in [(&a.platform.id, Mode::Live), (&b.platform.id, Mode::Test)] {
            assert!(
                stores
                    .merchants
                    .get_merchant(platform, mode, &m.id)
                    .await
                    .unwrap()
                    .is_none()
            );
            let page = PageRequest::new(None, None).unwrap();
            assert!(
                stores
                    .merchants
                    .list_merchants(platform, mode, &page)
                    .await
                    .unwrap()
                    .data
                    .is_empty()
            );
            assert!(matches!(
                stores
                    .merchants
                    .delete_merchant_with_event(platform, mode, &m.id, T0, &event_id())
                    .await,
                Err(StoreError::NotFound)
            ));
        }
    }

    pub async fn merchant_update_writes_only_what_is_sent(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Live);
        let m = merchant(&p, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let later = T0 + time::Duration::seconds(5);
        // Two clients patch different fields from the same starting point: both changes stay.
        let rename = MerchantPatch {
            name: Some(MerchantName::parse("Shop renamed").unwrap()),
            ..MerchantPatch::default()
        };
        let clear_email = MerchantPatch {
            email: Some(None),
            ..MerchantPatch::default()
        };
        let after_rename = stores
            .merchants
            .update_merchant_with_event(&p.platform_id, p.mode, &m.id, &rename, later, &event_id())
            .await
            .unwrap();
        assert_eq!(after_rename.details.name.as_str(), "Shop renamed");
        assert_eq!(after_rename.details.email, m.details.email);
        assert_eq!(after_rename.updated_on, later);
        assert_eq!(after_rename.created_on, m.created_on);
        let after_both = stores
            .merchants
            .update_merchant_with_event(
                &p.platform_id,
                p.mode,
                &m.id,
                &clear_email,
                later,
                &event_id(),
            )
            .await
            .unwrap();
        assert_eq!(after_both.details.name.as_str(), "Shop renamed");
        assert_eq!(after_both.details.email, None);
        assert_eq!(after_both.details.currency, m.details.currency);
        let reread = stores
            .merchants
            .get_merchant(&p.platform_id, p.mode, &m.id)
            .await
            .unwrap();
        assert_eq!(reread, Some(after_both));
    }

    pub async fn merchant_update_and_delete_are_scoped(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let b = new_platform(&stores, "B").await;
        let p = principal(&a, Mode::Live);
        let m = merchant(&p, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let rename = MerchantPatch {
            name: Some(MerchantName::parse("Stolen").unwrap()),
            ..MerchantPatch::default()
        };
        for (platform, mode) in [(&a.platform.id, Mode::Test), (&b.platform.id, Mode::Live)] {
            let err = stores
                .merchants
                .update_merchant_with_event(platform, mode, &m.id, &rename, T0, &event_id())
                .await;
            assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
            let err = stores
                .merchants
                .delete_merchant_with_event(platform, mode, &m.id, T0, &event_id())
                .await;
            assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
        }
        let unchanged = stores
            .merchants
            .get_merchant(&p.platform_id, p.mode, &m.id)
            .await
            .unwrap();
        assert_eq!(unchanged, Some(m.clone()));

        stores
            .merchants
            .delete_merchant_with_event(&p.platform_id, p.mode, &m.id, T0, &event_id())
            .await
            .unwrap();
        assert!(
            stores
                .merchants
                .get_merchant(&p.platform_id, p.mode, &m.id)
                .await
                .unwrap()
                .is_none()
        );
        let err = stores
            .merchants
            .update_merchant_with_event(&p.platform_id, p.mode, &m.id, &rename, T0, &event_id())
            .await;
        assert!(
            matches!(err, Err(StoreError::NotFound)),
            "a deleted merchant cannot be updated"
        );
        assert!(matches!(
            stores
                .merchants
                .delete_merchant_with_event(&p.platform_id, p.mode, &m.id, T0, &event_id())
                .await,
            Err(StoreError::NotFound)
        ));
    }

    pub async fn only_one_first_platform_under_concurrency(db: Database) {
        let stores = db.stores();
        let attempts = (0..4).map(|i| {
            let stores = stores.clone();
            tokio::spawn(async move {
                let candidate = PlatformService::new(
                    stores.platforms.clone(),
                    std::sync::Arc::new(FixedClock),
                    std::sync::Arc::new(CountingIds),
                )
                .bootstrap_demo(
                    PlatformName::parse(&format!("Demo {i}")).unwrap(),
                    Email::parse("demo@example.com").unwrap(),
                )
                .await
                .unwrap();
                candidate.is_some()
            })
        });
        let mut created = 0;
        for attempt in attempts.collect::<Vec<_>>() {
            created += usize::from(attempt.await.unwrap());
        }
        assert_eq!(created, 1);
        assert_eq!(stores.platforms.list_platforms().await.unwrap().len(), 1);
        // Once a platform exists, even a platform made the ordinary way, bootstrap does nothing.
        new_platform(&stores, "Other").await;
        let again = PlatformService::new(
            stores.platforms.clone(),
            std::sync::Arc::new(FixedClock),
            std::sync::Arc::new(CountingIds),
        )
        .bootstrap_demo(
            PlatformName::parse("Demo").unwrap(),
            Email::parse("d@example.com").unwrap(),
        )
        .await
        .unwrap();
        assert!(again.is_none());
    }

    pub async fn merchant_pages_newest_first(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let mut ids = Vec::new();
        for i in 0..25 {
            let m = merchant(&p, &format!("Shop {i}"));
            stores
                .merchants
                .insert_merchant_with_event(&m, &event_id(), None)
                .await
                .unwrap();
            ids.push(m.id);
        }
        let deleted = ids.remove(3);
        stores
            .merchants
            .delete_merchant_with_event(&p.platform_id, p.mode, &deleted, T0, &event_id())
            .await
            .unwrap();
        ids.reverse();

        let mut seen = Vec::new();
        let mut cursor = None;
        let mut pages = Vec::new();
        loop {
            let req = PageRequest::new(Some(10), cursor.clone()).unwrap();
            let page = stores
                .merchants
                .list_merchants(&p.platform_id, p.mode, &req)
                .await
                .unwrap();
            pages.push((page.data.len(), page.has_more));
            cursor = page.data.last().map(|m| m.id.to_string());
            seen.extend(page.data.into_iter().map(|m| m.id));
            if !page.has_more {
                break;
            }
        }
        assert_eq!(pages, [(10, true), (10, true), (4, false)]);
        assert_eq!(seen, ids);
    }

    pub async fn new_platforms_get_a_sandbox_and_a_default_test_plan(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let plan = stores
            .routing
            .default_plan(&a.platform.id, Mode::Test)
            .await
            .unwrap()
            .unwrap();
        assert!(plan.is_default && plan.fee == FeeRule::new(290, 30).unwrap());
        let connection = stores
            .routing
            .get_connection(&a.platform.id, Mode::Test, &plan.default_connection)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(connection.kind, ProcessorKind::Sandbox);
        assert_eq!(
            stores
                .routing
                .get_plan(&a.platform.id, Mode::Test, &plan.id)
                .await
                .unwrap(),
            Some(plan.clone())
        );
        assert!(
            stores
                .routing
                .default_plan(&a.platform.id, Mode::Live)
                .await
                .unwrap()
                .is_none(),
            "live starts empty"
        );
        assert!(
            stores
                .routing
                .get_plan(&a.platform.id, Mode::Live, &plan.id)
                .await
                .unwrap()
                .is_none()
        );
        // One default per platform and mode.
        let mut second = default_plan(&a.platform.id, &connection.id);
        second.is_default = true;
        let err = stores.routing.insert_plan(&second, None).await.unwrap_err();
        assert!(
            matches!(err, StoreError::Duplicate("plans.default")),
            "{err:?}"
        );
        second.is_default = false;
        stores.routing.insert_plan(&second, None).await.unwrap();
        let round = stores
            .routing
            .get_plan(&a.platform.id, Mode::Test, &second.id)
            .await
            .unwrap();
        assert_eq!(round, Some(second), "routes and fallbacks round-trip");
    }

    #[expect(clippy::too_many_lines, reason = "one story: race, reopen, scoping")]
    pub async fn only_one_reservation_closes_an_auth(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let m = merchant(&p, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let plan = stores
            .routing
            .default_plan(&p.platform_id, p.mode)
            .await
            .unwrap()
            .unwrap();
        let auth = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
        stores
            .transactions
            .insert_pending_transaction(&auth)
            .await
            .unwrap();
        let claims = (0..4).map(|_| {
            let payments = stores.transactions.clone();
            let (platform, id) = (p.platform_id.clone(), auth.id.clone());
            let mut capture = txn(&m, &plan, TxnType::Capture, TxnState::Pending, 1000);
            capture.parent_id = Some(auth.id.clone());
            tokio::spawn(async move {
                let won = payments
                    .reserve_with_pending(
                        &platform,
                        Mode::Test,
                        &id,
                        Reservation::CloseAuth,
                        &capture,
                    )
                    .await
                    .unwrap();
                won.then_some(capture)
            })
        });
        let mut winners = Vec::new();
        for claim in claims.collect::<Vec<_>>() {
            winners.extend(claim.await.unwrap());
        }
        assert_eq!(winners.len(), 1, "exactly one capture or void proceeds");
        let mut capture = winners.pop().unwrap();
        let written = stores
            .transactions
            .get_transaction(&p.platform_id, p.mode, &capture.id)
            .await
            .unwrap();
        assert_eq!(
            written.map(|t| t.state),
            Some(TxnState::Pending),
            "the winner's pending row is written with its reservation"
        );
        let closing = stores
            .transactions
            .get_transaction(&p.platform_id, p.mode, &auth.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(closing.state, TxnState::Closing);
        // The follow-up fails: the auth is open again, and its event was written with it.
        capture.state = TxnState::Declined;
        stores
            .transactions
            .complete_transaction_with_event(
                &capture,
                Some((auth.id.clone(), OriginalOutcome::Reopened)),
                &event_for(&capture),
                None,
            )
            .await
            .unwrap();
        let reopened = stores
            .transactions
            .get_transaction(&p.platform_id, p.mode, &auth.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(reopened.state, TxnState::Authorized);
        let events = stores
            .events
            .list_events(&p.platform_id, p.mode)
            .await
            .unwrap();
        // The merchant's own `merchant.created`, then the capture's `transaction.created`.
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(types, ["merchant.created", "transaction.created"]);
        assert!(
            events[1].data.contains(capture.id.as_str())
                && events[1].data.contains("\"type\":\"capture\""),
            "{}",
            events[1].data
        );
        // Other platforms and modes cannot reserve it.
        let other = new_platform(&stores, "B").await;
        for (platform, mode) in [
            (&other.platform.id, Mode::Test),
            (&p.platform_id, Mode::Live),
        ] {
            let void = txn(&m, &plan, TxnType::Void, TxnState::Pending, 1000);
            let reserved = stores
                .transactions
                .reserve_with_pending(platform, mode, &auth.id, Reservation::CloseAuth, &void)
                .await;
            assert!(!reserved.unwrap(), "scoped by platform and mode");
            let written = stores
                .transactions
                .get_transaction(&p.platform_id, p.mode, &void.id)
                .await
                .unwrap();
            assert!(written.is_none(), "a refused reservation writes nothing");
        }
    }

    pub async fn refund_reservations_never_exceed_the_amount(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let m = merchant(&p, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let plan = stores
            .routing
            .default_plan(&p.platform_id, p.mode)
            .await
            .unwrap()
            .unwrap();
        let sale = txn(&m, &plan, TxnType::Sale, TxnState::Settled, 1000);
        stores
            .transactions
            .insert_pending_transaction(&sale)
            .await
            .unwrap();
        let claims = (0..5).map(|_| {
            let payments = stores.transactions.clone();
            let (platform, id) = (p.platform_id.clone(), sale.id.clone());
            let refund = txn(&m, &plan, TxnType::Refund, TxnState::Pending, 300);
            tokio::spawn(async move {
                payments
                    .reserve_with_pending(
                        &platform,
                        Mode::Test,
                        &id,
                        Reservation::Refund { amount: 300 },
                        &refund,
                    )
                    .await
                    .unwrap()
            })
        });
        let mut won = 0;
        for claim in claims.collect::<Vec<_>>() {
            won += usize::from(claim.await.unwrap());
        }
        assert_eq!(won, 3, "3 × 300 fit in 1000, a fourth does not");
        let now = stores
            .transactions
            .get_transaction(&p.platform_id, p.mode, &sale.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(now.refunded_amount, 900);
        // An auth is never refundable.
        let auth = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
        stores
            .transactions
            .insert_pending_transaction(&auth)
            .await
            .unwrap();
        assert!(
            !stores
                .transactions
                .reserve_with_pending(
                    &p.platform_id,
                    p.mode,
                    &auth.id,
                    Reservation::Refund { amount: 1 },
                    &txn(&m, &plan, TxnType::Refund, TxnState::Pending, 1),
                )
                .await
                .unwrap()
        );
    }

    #[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
    pub async fn transactions_list_by_filter_newest_first(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let m1 = merchant(&p, "One");
        let m2 = merchant(&p, "Two");
        stores
            .merchants
            .insert_merchant_with_event(&m1, &event_id(), None)
            .await
            .unwrap();
        stores
            .merchants
            .insert_merchant_with_event(&m2, &event_id(), None)
            .await
            .unwrap();
        let plan = stores
            .routing
            .default_plan(&p.platform_id, p.mode)
            .await
            .unwrap()
            .unwrap();
        let mut written = Vec::new();
        for (i, (m, kind)) in [
            (&m1, TxnType::Auth),
            (&m2, TxnType::Sale),
            (&m1, TxnType::Sale),
        ]
        .into_iter()
        .enumerate()
        {
            let mut t = txn(m, &plan, kind, TxnState::Settled, 100);
            t.created_on = T0 + time::Duration::seconds(i64::try_from(i).unwrap());
            stores
                .transactions
                .insert_pending_transaction(&t)
                .await
                .unwrap();
            written.push(t);
        }
        let page = PageRequest::new(None, None).unwrap();
        let list = |filter: TxnFilter| {
            let stores = stores.clone();
            let platform = p.platform_id.clone();
            let page = page.clone();
            async move {
                stores
                    .transactions
                    .list_transactions(&platform, Mode::Test, &filter, &page)
                    .await
                    .unwrap()
                    .data
                    .into_iter()
                    .map(|t| t.id)
                    .collect::<Vec<_>>()
            }
        };
        let ids = |idx: &[usize]| {
            idx.iter()
                .map(|i| written[*i].id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(list(TxnFilter::default()).await, ids(&[2, 1, 0]));
        assert_eq!(
            list(TxnFilter {
                merchant_id: Some(m1.id.clone()),
                ..TxnFilter::default()
            })
            .await,
            ids(&[2, 0])
        );
        assert_eq!(
            list(TxnFilter {
                kind: Some(TxnType::Sale),
                ..TxnFilter::default()
            })
            .await,
            ids(&[2, 1])
        );
        let from = T0 + time::Duration::seconds(1);
        assert_eq!(
            list(TxnFilter {
                created_from: Some(from),
                ..TxnFilter::default()
            })
            .await,
            ids(&[2, 1])
        );
        assert_eq!(
            list(TxnFilter {
                created_until: Some(from),
                ..TxnFilter::default()
            })
            .await,
            ids(&[0])
        );
        let live = stores
            .transactions
            .list_transactions(&p.platform_id, Mode::Live, &TxnFilter::default(), &page)
            .await
            .unwrap();
        assert!(live.data.is_empty());
        assert_eq!(
            stores
                .transactions
                .get_transaction(&p.platform_id, p.mode, &written[0].id)
                .await
                .unwrap(),
            Some(written[0].clone())
        );
    }

    /// A create's answer commits with the resource it reports (merchant, subscription, token,
    /// connection, plan), and a refused create writes neither: the key then stays running,
    /// for the HTTP layer to store or release.
    pub async fn a_created_resource_and_its_stored_answer_commit_together(db: Database) {
        use holdfast_domain::idempotency::{
            IdempotencyKey, KeyedResponse, Seen, StoredResponse, fingerprint,
        };
        use holdfast_domain::ports::Begun;
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let idem = &stores.idempotency;
        let print = fingerprint(&[7; 32], "POST", "/v1/x", b"{}");
        let answer = |n: &str| StoredResponse {
            status: 201,
            body: format!("{{\"made\":\"{n}\"}}"),
        };
        let claim = async |name: &str| {
            let key = IdempotencyKey::parse(name).unwrap();
            let begun = idem.begin(&p.platform_id, p.mode, &key, &print, T0).await;
            assert_eq!(begun.unwrap(), Begun::Started);
            Some(KeyedResponse {
                key,
                response: answer(name),
            })
        };
        let seen = async |name: &str| {
            let key = IdempotencyKey::parse(name).unwrap();
            match idem
                .begin(&p.platform_id, p.mode, &key, &print, T0)
                .await
                .unwrap()
            {
                Begun::Seen(seen) => seen,
                Begun::Started => panic!("{name}: the key was lost"),
            }
        };

        // The same key in the other mode is another key: the answers below never reach it.
        let in_live = IdempotencyKey::parse("merchant").unwrap();
        let live = async || {
            idem.begin(&p.platform_id, Mode::Live, &in_live, &print, T0)
                .await
                .unwrap()
        };
        assert_eq!(live().await, Begun::Started);

        let m = merchant(&p, "Shop");
        let reply = claim("merchant").await;
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), reply)
            .await
            .unwrap();
        let hook = subscription(&p, "h1", &["merchant.created"], true);
        let reply = claim("webhook").await;
        assert!(
            stores
                .webhooks
                .insert_webhook(&hook, 1, reply)
                .await
                .unwrap()
        );
        let c = sandbox_connection(&p.platform_id);
        let reply = claim("connection").await;
        stores.routing.insert_connection(&c, reply).await.unwrap();
        // The platform has its default plan already: this one is not, the second one is.
        let mut own = default_plan(&p.platform_id, &c.id);
        own.is_default = false;
        let reply = claim("plan").await;
        stores.routing.insert_plan(&own, reply).await.unwrap();
        let token = token(&p, "t1", TokenKind::Vault);
        let reply = claim("token").await;
        stores.tokens.save(&token, reply).await.unwrap();
        for name in ["merchant", "webhook", "connection", "plan", "token"] {
            assert_eq!(seen(name).await, Seen::Replay(answer(name)), "{name}");
        }
        assert_eq!(
            live().await,
            Begun::Seen(Seen::InProgress),
            "live mode untouched"
        );

        // Refused: the cap, a second default plan. Neither the resource nor the answer is kept.
        let over = subscription(&p, "h2", &["merchant.created"], true);
        let reply = claim("webhook-over").await;
        assert!(
            !stores
                .webhooks
                .insert_webhook(&over, 1, reply)
                .await
                .unwrap()
        );
        own.id = PlanId::from_suffix(&CountingIds.next_id());
        own.is_default = true;
        let reply = claim("plan-twice").await;
        assert!(stores.routing.insert_plan(&own, reply).await.is_err());
        for name in ["webhook-over", "plan-twice"] {
            assert_eq!(seen(name).await, Seen::InProgress, "{name}");
        }
        assert!(
            stores
                .webhooks
                .get_webhook(&p.platform_id, p.mode, &over.id)
                .await
                .unwrap()
                .is_none()
        );
    }

    pub async fn idempotency_keys_claim_replay_and_release(db: Database) {
        use holdfast_domain::idempotency::{IdempotencyKey, Seen, StoredResponse, fingerprint};
        use holdfast_domain::ports::Begun;
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let (p, mode) = (&a.platform.id, Mode::Test);
        let key = IdempotencyKey::parse("order-42").unwrap();
        let print = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{}");
        let other = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{\"x\":1}");
        let idem = &stores.idempotency;
        assert_eq!(
            idem.begin(p, mode, &key, &print, T0).await.unwrap(),
            Begun::Started
        );
        assert_eq!(
            idem.begin(p, mode, &key, &print, T0).await.unwrap(),
            Begun::Seen(Seen::InProgress)
        );
        assert_eq!(
            idem.begin(p, Mode::Live, &key, &print, T0).await.unwrap(),
            Begun::Started,
            "per mode"
        );
        let response = StoredResponse {
            status: 201,
            body: "{\"id\":1}".into(),
        };
        idem.complete(p, mode, &key, &response).await.unwrap();
        assert_eq!(
            idem.begin(p, mode, &key, &print, T0).await.unwrap(),
            Begun::Seen(Seen::Replay(response.clone()))
        );
        assert_eq!(
            idem.begin(p, mode, &key, &other, T0).await.unwrap(),
            Begun::Seen(Seen::Mismatch)
        );
        // A completed key is not released; a running one is.
        idem.release(p, mode, &key).await.unwrap();
        assert_eq!(
            idem.begin(p, mode, &key, &print, T0).await.unwrap(),
            Begun::Seen(Seen::Replay(response))
        );
        let running = IdempotencyKey::parse("order-43").unwrap();
        assert_eq!(
            idem.begin(p, mode, &running, &print, T0).await.unwrap(),
            Begun::Started
        );
        idem.release(p, mode, &running).await.unwrap();
        assert_eq!(
            idem.begin(p, mode, &running, &print, T0).await.unwrap(),
            Begun::Started
        );
        // After 24 hours a key starts afresh.
        let later = T0 + time::Duration::hours(25);
        assert_eq!(
            idem.begin(p, mode, &key, &other, later).await.unwrap(),
            Begun::Started
        );
        // Retention: keys created before the cut-off are deleted, newer ones stay.
        let fresh = IdempotencyKey::parse("order-44").unwrap();
        idem.begin(p, mode, &fresh, &print, later + time::Duration::hours(1))
            .await
            .unwrap();
        assert_eq!(
            idem.purge(later + time::Duration::minutes(1))
                .await
                .unwrap(),
            3,
            "order-42 in both modes and the abandoned order-43"
        );
        assert_eq!(
            idem.begin(p, mode, &fresh, &print, later + time::Duration::hours(1))
                .await
                .unwrap(),
            Begun::Seen(Seen::InProgress),
            "the newer key was kept"
        );
    }

    fn token(p: &Principal, suffix: &str, kind: TokenKind) -> Token {
        Token {
            id: TokenId::from_suffix(suffix),
            platform_id: p.platform_id.clone(),
            mode: p.mode,
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
        }
    }

    /// A single-use token's sealed card is erased once it is used (in the statement's SQL
    /// transaction) or once it expired unused (the sweep); the row stays. Vault tokens keep it.
    pub async fn single_use_cards_are_erased_once_used_or_expired(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let tokens = &stores.tokens;
        let (used, expired, fresh, vault) = (
            token(&p, "used", TokenKind::SingleUse),
            token(&p, "expired", TokenKind::SingleUse),
            token(&p, "fresh", TokenKind::SingleUse),
            token(&p, "vault", TokenKind::Vault),
        );
        for t in [&used, &expired, &fresh, &vault] {
            tokens.save(t, None).await.unwrap();
        }
        let read = async |t: &Token| {
            tokens
                .find(&p.platform_id, p.mode, &t.id)
                .await
                .unwrap()
                .unwrap()
        };
        let handed = tokens
            .take(&p.platform_id, p.mode, &used.id, T0)
            .await
            .unwrap();
        assert_eq!(
            handed.unwrap().sealed,
            used.sealed,
            "the payment gets the card"
        );
        let row = read(&used).await;
        assert!(row.sealed.ciphertext.is_empty() && row.sealed.nonce.is_empty());
        assert_eq!((row.used_on, row.card.last4.as_str()), (Some(T0), "1111"));
        // The sweep: only what expired unused, and only once.
        assert_eq!(tokens.erase_expired(T0).await.unwrap(), 0);
        let later = T0 + SINGLE_USE_LIFETIME;
        tokens
            .take(&p.platform_id, p.mode, &fresh.id, T0)
            .await
            .unwrap();
        assert_eq!(tokens.erase_expired(later).await.unwrap(), 1);
        assert_eq!(tokens.erase_expired(later).await.unwrap(), 0);
        assert!(read(&expired).await.sealed.ciphertext.is_empty());
        assert_eq!(
            read(&vault).await.sealed,
            vault.sealed,
            "a vault token keeps its card"
        );
    }

    pub async fn single_use_tokens_are_taken_once_and_expire(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let once = token(&p, "once", TokenKind::SingleUse);
        stores.tokens.save(&once, None).await.unwrap();
        assert_eq!(
            stores
                .tokens
                .find(&p.platform_id, p.mode, &once.id)
                .await
                .unwrap(),
            Some(once.clone()),
            "a token reads back as it was saved, sealed bytes included"
        );
        // Four payments race for one single-use token: one gets it.
        let takes = (0..4).map(|_| {
            let tokens = stores.tokens.clone();
            let (platform, id) = (p.platform_id.clone(), once.id.clone());
            tokio::spawn(async move { tokens.take(&platform, Mode::Test, &id, T0).await.unwrap() })
        });
        let mut won = 0;
        for take in takes.collect::<Vec<_>>() {
            won += usize::from(take.await.unwrap().is_some());
        }
        assert_eq!(won, 1, "a single-use token is handed out once");
        let used = stores
            .tokens
            .find(&p.platform_id, p.mode, &once.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(used.used_on, Some(T0));

        // Expired at the instant of its expiry; another mode never sees it.
        let late = token(&p, "late", TokenKind::SingleUse);
        stores.tokens.save(&late, None).await.unwrap();
        let expiry = T0 + SINGLE_USE_LIFETIME;
        assert!(
            stores
                .tokens
                .take(&p.platform_id, Mode::Live, &late.id, T0)
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            stores
                .tokens
                .take(&p.platform_id, p.mode, &late.id, expiry)
                .await
                .unwrap()
                .is_none()
        );
        let just_in_time = expiry - time::Duration::microseconds(1);
        assert!(
            stores
                .tokens
                .take(&p.platform_id, p.mode, &late.id, just_in_time)
                .await
                .unwrap()
                .is_some()
        );

        // A vault token is handed out every time and never marked used.
        let vault = token(&p, "vault", TokenKind::Vault);
        stores.tokens.save(&vault, None).await.unwrap();
        for _ in 0..3 {
            let handed = stores
                .tokens
                .take(&p.platform_id, p.mode, &vault.id, T0)
                .await
                .unwrap();
            assert_eq!(handed.unwrap().used_on, None);
        }
        let other = new_platform(&stores, "B").await;
        assert!(
            stores
                .tokens
                .take(&other.platform.id, Mode::Test, &vault.id, T0)
                .await
                .unwrap()
                .is_none()
        );
    }

    fn subscription(p: &Principal, suffix: &str, events: &[&str], active: bool) -> Subscription {
        Subscription {
            id: WebhookId::from_suffix(suffix),
            platform_id: p.platform_id.clone(),
            mode: p.mode,
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
        }
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

    /// Merchant writes emit their events with the fan-out, in the same transaction: one
    /// notification per active subscription of the platform and mode that names the type.
    #[expect(
        clippy::too_many_lines,
        reason = "one story: three writes, their events, their fan-out"
    )]
    pub async fn merchant_events_fan_out_to_matching_active_subscriptions(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let all = ["merchant.created", "merchant.updated", "merchant.deleted"];
        let hooks = &stores.webhooks;
        hooks
            .insert_webhook(&subscription(&p, "all", &all, true), u32::MAX, None)
            .await
            .unwrap();
        hooks
            .insert_webhook(
                &subscription(&p, "created", &["merchant.created"], true),
                u32::MAX,
                None,
            )
            .await
            .unwrap();
        hooks
            .insert_webhook(&subscription(&p, "off", &all, false), u32::MAX, None)
            .await
            .unwrap();
        hooks
            .insert_webhook(
                &subscription(&principal(&a, Mode::Live), "live", &all, true),
                u32::MAX,
                None,
            )
            .await
            .unwrap();

        let m = merchant(&p, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let rename = MerchantPatch {
            name: Some(MerchantName::parse("Renamed").unwrap()),
            ..MerchantPatch::default()
        };
        stores
            .merchants
            .update_merchant_with_event(&p.platform_id, p.mode, &m.id, &rename, T0, &event_id())
            .await
            .unwrap();
        stores
            .merchants
            .delete_merchant_with_event(&p.platform_id, p.mode, &m.id, T0, &event_id())
            .await
            .unwrap();
        let again = stores
            .merchants
            .delete_merchant_with_event(&p.platform_id, p.mode, &m.id, T0, &event_id())
            .await;
        assert!(
            matches!(again, Err(StoreError::NotFound)),
            "a second delete reports nothing"
        );

        let events = stores
            .events
            .list_events(&p.platform_id, p.mode)
            .await
            .unwrap();
        let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types, all,
            "one event per change, none for the refused delete"
        );
        assert!(
            events[1].data.contains(r#""name":"Renamed""#),
            "{}",
            events[1].data
        );
        assert_eq!(
            events[2].data,
            format!(r#"{{"id":"{}","deleted":true}}"#, m.id)
        );

        let later = T0 + time::Duration::seconds(1);
        let claimed = stores
            .notifications
            .claim_notifications(later, later + time::Duration::minutes(1), UNCAPPED)
            .await
            .unwrap();
        let mut got: Vec<(String, String)> = claimed
            .iter()
            .map(|c| {
                (
                    c.subscription.as_ref().unwrap().id.to_string(),
                    c.event_type.clone(),
                )
            })
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("wh_all".into(), "merchant.created".into()),
                ("wh_all".into(), "merchant.deleted".into()),
                ("wh_all".into(), "merchant.updated".into()),
                ("wh_created".into(), "merchant.created".into()),
            ],
            "the inactive and the live subscription get nothing"
        );
        // Leased: not claimed again until the lease ends.
        assert!(
            stores
                .notifications
                .claim_notifications(later, later, UNCAPPED)
                .await
                .unwrap()
                .is_empty()
        );
        let after_lease = later + time::Duration::minutes(2);
        assert_eq!(
            stores
                .notifications
                .claim_notifications(after_lease, after_lease, UNCAPPED)
                .await
                .unwrap()
                .len(),
            4
        );

        // Only transaction notifications can be resent.
        let refused = stores
            .notifications
            .resend(
                &p.platform_id,
                &claimed[0].id,
                &NotificationId::from_suffix("again"),
                later,
            )
            .await;
        assert!(
            matches!(refused, Err(ResendError::NotTransaction)),
            "{refused:?}"
        );
    }

    /// Spec 3.2: +1 per failed notification, reset by a success, inactive at 25 with one email
    /// to the creator; an outcome is recorded once.
    pub async fn the_counter_disables_at_twenty_five_and_queues_one_email(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let hook = subscription(&p, "h", &["merchant.created"], true);
        stores
            .webhooks
            .insert_webhook(&hook, 1, None)
            .await
            .unwrap();
        for i in 0..28 {
            let m = merchant(&p, &format!("Shop {i}"));
            stores
                .merchants
                .insert_merchant_with_event(&m, &event_id(), None)
                .await
                .unwrap();
        }
        let claimed = stores
            .notifications
            .claim_notifications(T0, T0 + time::Duration::minutes(1), UNCAPPED)
            .await
            .unwrap();
        assert_eq!(claimed.len(), 28);
        let q = &stores.notifications;
        let success = Finished {
            outcome: Outcome::Succeeded,
            ..failed(T0)
        };
        let first = q
            .complete_notification(&claimed[0].id, &failed(T0), "Acme")
            .await
            .unwrap();
        assert_eq!((first.recorded, first.disabled), (true, false));
        let repeat = q
            .complete_notification(&claimed[0].id, &success, "Acme")
            .await
            .unwrap();
        assert!(
            !repeat.recorded,
            "a notification's outcome is recorded once"
        );
        q.complete_notification(&claimed[1].id, &success, "Acme")
            .await
            .unwrap();
        let wh = WebhookId::from_suffix("h");
        let counter = |s: Subscription| (s.active, s.consecutive_failures);
        let now = stores
            .webhooks
            .get_webhook(&p.platform_id, p.mode, &wh)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(counter(now), (true, 0), "a success resets the counter");
        for (n, c) in claimed[2..27].iter().enumerate() {
            let r = q
                .complete_notification(&c.id, &failed(T0), "Acme")
                .await
                .unwrap();
            assert_eq!(
                r.disabled,
                n == 24,
                "disabled exactly at the 25th failure ({n})"
            );
            assert_eq!(r.email_queued, n == 24);
        }
        let now = stores
            .webhooks
            .get_webhook(&p.platform_id, p.mode, &wh)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(counter(now), (false, 25));
        let emails = stores.emails.claim_emails(T0, T0, 10).await.unwrap();
        assert_eq!(emails.len(), 1);
        assert_eq!(
            emails[0].email.subject,
            "Acme - Webhook Subscription Automatically Disabled"
        );
        assert_eq!(emails[0].email.to, a.owner.email.as_str());
        assert!(emails[0].email.body.contains("wh_h") && emails[0].email.body.contains("Orders"));
        // Another failure while inactive (a notification already claimed) sends no second email.
        let late = q
            .complete_notification(&claimed[27].id, &failed(T0), "Acme")
            .await
            .unwrap();
        assert!(!late.disabled && !late.email_queued);
        // The dashboard toggle: setting inactive keeps the counter, setting active resets it.
        let off = stores
            .webhooks
            .toggle_webhook(&p.platform_id, &wh, false, T0)
            .await
            .unwrap();
        assert_eq!(counter(off), (false, 26));
        let on = stores
            .webhooks
            .toggle_webhook(&p.platform_id, &wh, true, T0)
            .await
            .unwrap();
        assert_eq!(counter(on), (true, 0));
    }

    /// Fair claims: a subscription never holds more than its cap of attempts in flight, nor a
    /// platform more than its cap, and the least-loaded platform goes first, so another
    /// platform's notification is taken at once however large one platform's backlog is.
    pub async fn claims_cap_in_flight_and_interleave_platforms(db: Database) {
        let stores = db.stores();
        let a = principal(&new_platform(&stores, "A").await, Mode::Test);
        let b = principal(&new_platform(&stores, "B").await, Mode::Test);
        for suffix in ["a1", "a2", "a3"] {
            let hook = subscription(&a, suffix, &["merchant.created"], true);
            stores
                .webhooks
                .insert_webhook(&hook, 16, None)
                .await
                .unwrap();
        }
        let hook = subscription(&b, "b", &["merchant.created"], true);
        stores
            .webhooks
            .insert_webhook(&hook, 16, None)
            .await
            .unwrap();
        let created = async |p: &Principal, name: &str| {
            stores
                .merchants
                .insert_merchant_with_event(&merchant(p, name), &event_id(), None)
                .await
                .unwrap();
        };
        for i in 0..4 {
            created(&a, &format!("A {i}")).await;
        }
        created(&b, "B 0").await;

        let q = &stores.notifications;
        let later = T0 + time::Duration::seconds(1);
        let lease = later + time::Duration::minutes(1);
        let caps = ClaimLimits {
            batch: 100,
            per_subscription: 2,
            per_platform: 5,
        };
        let by_subscription = |claimed: &[holdfast_domain::ports::Claimed]| {
            let mut counts = std::collections::BTreeMap::<String, usize>::new();
            for c in claimed {
                let id = c.subscription.as_ref().unwrap().id.to_string();
                *counts.entry(id).or_default() += 1;
            }
            counts
        };
        let first = q.claim_notifications(later, lease, caps).await.unwrap();
        let counts = by_subscription(&first);
        assert_eq!(first.len(), 6, "five of A (its cap) and B's: {counts:?}");
        assert_eq!(counts.get("wh_b"), Some(&1), "{counts:?}");
        assert!(
            counts.values().all(|&n| n <= 2),
            "no subscription above its cap: {counts:?}"
        );
        assert!(
            q.claim_notifications(later, lease, caps)
                .await
                .unwrap()
                .is_empty(),
            "A is at its platform cap and B has nothing more: the same claim takes nothing"
        );
        // With room on the platform, only the subscription below its cap takes more.
        let per_subscription = ClaimLimits {
            per_platform: 100,
            ..caps
        };
        let topped = q
            .claim_notifications(later, lease, per_subscription)
            .await
            .unwrap();
        let before = by_subscription(&first);
        let topped_up = by_subscription(&topped);
        assert_eq!(topped.len(), 1, "{topped_up:?}");
        let (sub, _) = topped_up.iter().next().unwrap();
        assert_eq!(
            before.get(sub),
            Some(&1),
            "the one with a free place: {before:?}"
        );

        // A has 6 in flight and 6 waiting, all older than B's new row; B has 1 in flight. A
        // claim of one takes B's, the least loaded platform's, first.
        created(&b, "B 1").await;
        let one = ClaimLimits {
            batch: 1,
            ..UNCAPPED
        };
        let next = q.claim_notifications(later, lease, one).await.unwrap();
        assert_eq!(
            by_subscription(&next).keys().collect::<Vec<_>>(),
            ["wh_b"],
            "B before A's older backlog"
        );

        // Leases over: everything is due again, and nothing is lost.
        let after = lease + time::Duration::seconds(1);
        let all = q.claim_notifications(after, after, UNCAPPED).await.unwrap();
        assert_eq!(all.len(), 14, "4 × 3 of A and 2 of B");
    }

    /// A rotation writes both secrets if nobody rotated first, with its answer; a stale one
    /// writes nothing; another platform's or mode's subscription is unknown. The claim hands the
    /// worker both secrets.
    pub async fn a_secret_rotation_keeps_the_previous_one_and_happens_once(db: Database) {
        let stores = db.stores();
        let a = principal(&new_platform(&stores, "A").await, Mode::Test);
        let b = principal(&new_platform(&stores, "B").await, Mode::Test);
        let hook = subscription(&a, "h", &["merchant.created"], true);
        stores
            .webhooks
            .insert_webhook(&hook, 16, None)
            .await
            .unwrap();
        let day = holdfast_domain::webhook::SECRET_OVERLAP;
        let rotated = hook.rotated("whsec_bmV3".into(), T0, day);
        let store = &stores.webhooks;
        assert!(
            store
                .rotate_secret(&rotated, &hook.secret, None)
                .await
                .unwrap()
        );
        let read = store
            .get_webhook(&a.platform_id, a.mode, &hook.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(read, rotated, "both secrets round-trip");
        let again = rotated.rotated("whsec_YWdhaW4=".into(), T0, day);
        assert!(
            !store
                .rotate_secret(&again, &hook.secret, None)
                .await
                .unwrap(),
            "made from a stale read: refused"
        );
        let elsewhere = Subscription {
            platform_id: b.platform_id.clone(),
            ..again.clone()
        };
        assert!(matches!(
            store.rotate_secret(&elsewhere, &rotated.secret, None).await,
            Err(StoreError::NotFound)
        ));
        let live = Subscription {
            mode: Mode::Live,
            ..again
        };
        assert!(matches!(
            store.rotate_secret(&live, &rotated.secret, None).await,
            Err(StoreError::NotFound)
        ));

        stores
            .merchants
            .insert_merchant_with_event(&merchant(&a, "Shop"), &event_id(), None)
            .await
            .unwrap();
        let later = T0 + time::Duration::seconds(1);
        let claimed = stores
            .notifications
            .claim_notifications(later, later, UNCAPPED)
            .await
            .unwrap();
        let signing = claimed[0]
            .subscription
            .as_ref()
            .unwrap()
            .signing_secrets(later);
        assert_eq!(signing, ["whsec_bmV3", "whsec_c2VjcmV0"]);
    }

    /// At most `max` subscriptions per platform and mode, even when created at once; another
    /// mode or platform has its own room, and a deleted one frees a place.
    pub async fn subscriptions_are_capped_per_platform_and_mode(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let test = principal(&a, Mode::Test);
        let attempts: Vec<_> = (0..10)
            .map(|i| {
                let hooks = stores.webhooks.clone();
                let s = subscription(&test, &format!("c{i}"), &["merchant.created"], true);
                tokio::spawn(async move { hooks.insert_webhook(&s, 4, None).await.unwrap() })
            })
            .collect();
        let mut inserted = 0;
        for attempt in attempts {
            inserted += usize::from(attempt.await.unwrap());
        }
        assert_eq!(inserted, 4, "concurrent creates never exceed the cap");
        let hooks = &stores.webhooks;
        let page = PageRequest::new(None, None).unwrap();
        let listed = hooks
            .list_webhooks(&a.platform.id, Mode::Test, &page)
            .await
            .unwrap();
        assert_eq!(listed.data.len(), 4);
        let live = principal(&a, Mode::Live);
        let other = principal(&new_platform(&stores, "B").await, Mode::Test);
        for (who, suffix) in [(&live, "live"), (&other, "other")] {
            let s = subscription(who, suffix, &["merchant.created"], true);
            assert!(hooks.insert_webhook(&s, 4, None).await.unwrap(), "{suffix}");
        }
        let first = listed.data[0].id.clone();
        hooks
            .delete_webhook(&a.platform.id, Mode::Test, &first)
            .await
            .unwrap();
        let again = subscription(&test, "again", &["merchant.created"], true);
        assert!(hooks.insert_webhook(&again, 4, None).await.unwrap());
        let over = subscription(&test, "over", &["merchant.created"], true);
        assert!(!hooks.insert_webhook(&over, 4, None).await.unwrap());
    }

    /// Deleting a subscription deletes its history, and only in the caller's platform and mode.
    pub async fn webhook_delete_is_scoped_and_takes_the_history(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let live = principal(&a, Mode::Live);
        stores
            .webhooks
            .insert_webhook(
                &subscription(&live, "h", &["merchant.created"], true),
                u32::MAX,
                None,
            )
            .await
            .unwrap();
        stores
            .merchants
            .insert_merchant_with_event(&merchant(&live, "Shop"), &event_id(), None)
            .await
            .unwrap();
        let wh = WebhookId::from_suffix("h");
        let page = PageRequest::new(None, None).unwrap();
        let history = |mode| {
            stores
                .webhooks
                .list_deliveries(&live.platform_id, Some(mode), &wh, &page)
        };
        assert_eq!(history(Mode::Live).await.unwrap().data.len(), 1);
        let other = new_platform(&stores, "B").await;
        for (platform, mode) in [
            (&live.platform_id, Mode::Test),
            (&other.platform.id, Mode::Live),
        ] {
            let refused = stores.webhooks.delete_webhook(platform, mode, &wh).await;
            assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
        }
        assert_eq!(
            history(Mode::Live).await.unwrap().data.len(),
            1,
            "nothing deleted from outside the scope"
        );
        stores
            .webhooks
            .delete_webhook(&live.platform_id, Mode::Live, &wh)
            .await
            .unwrap();
        assert!(matches!(
            history(Mode::Live).await,
            Err(StoreError::NotFound)
        ));
        let left = stores
            .notifications
            .claim_notifications(T0, T0, UNCAPPED)
            .await
            .unwrap();
        assert!(left.is_empty(), "the history went with the subscription");
    }

    /// Pending rows past their age are found for reconciliation; a row is completed once.
    pub async fn stale_pending_rows_are_found_and_completed_once(db: Database) {
        let stores = db.stores();
        let a = new_platform(&stores, "A").await;
        let p = principal(&a, Mode::Test);
        let m = merchant(&p, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        let plan = stores
            .routing
            .default_plan(&p.platform_id, p.mode)
            .await
            .unwrap()
            .unwrap();
        let mut pending = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
        stores
            .transactions
            .insert_pending_transaction(&pending)
            .await
            .unwrap();
        let done = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
        stores
            .transactions
            .insert_pending_transaction(&done)
            .await
            .unwrap();
        let at = |s: i64| T0 + time::Duration::seconds(s);
        assert!(
            stores
                .transactions
                .stale_pending(T0, 10)
                .await
                .unwrap()
                .is_empty(),
            "not older than T0"
        );
        let stale = stores.transactions.stale_pending(at(1), 10).await.unwrap();
        assert_eq!(
            stale.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
            [pending.id.clone()]
        );
        pending.state = TxnState::Failed;
        stores
            .transactions
            .complete_transaction_with_event(&pending, None, &event_for(&pending), None)
            .await
            .unwrap();
        let again = stores
            .transactions
            .complete_transaction_with_event(&pending, None, &event_for(&pending), None)
            .await;
        assert!(
            matches!(again, Err(StoreError::NotFound)),
            "completed once: {again:?}"
        );
        assert!(
            stores
                .transactions
                .stale_pending(at(1), 10)
                .await
                .unwrap()
                .is_empty()
        );
        let events = stores
            .events
            .list_events(&p.platform_id, p.mode)
            .await
            .unwrap();
        assert_eq!(
            events
                .iter()
                .filter(|e| e.event_type == "transaction.created")
                .count(),
            1
        );
    }

    pub async fn ping_answers(db: Database) {
        db.ping().await.unwrap();
    }
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
    only_one_reservation_closes_an_auth,
    refund_reservations_never_exceed_the_amount,
    transactions_list_by_filter_newest_first,
    idempotency_keys_claim_replay_and_release,
    a_created_resource_and_its_stored_answer_commit_together,
    single_use_tokens_are_taken_once_and_expire,
    single_use_cards_are_erased_once_used_or_expired,
    merchant_events_fan_out_to_matching_active_subscriptions,
    the_counter_disables_at_twenty_five_and_queues_one_email,
    claims_cap_in_flight_and_interleave_platforms,
    a_secret_rotation_keeps_the_previous_one_and_happens_once,
    webhook_delete_is_scoped_and_takes_the_history,
    subscriptions_are_capped_per_platform_and_mode,
    stale_pending_rows_are_found_and_completed_once,
    payment_setup_reads_the_merchant_its_plan_and_connections,
    completion_writes_event_fan_out_and_reply_or_nothing,
    a_failed_refund_releases_its_reservation,
    ping_answers,
);
