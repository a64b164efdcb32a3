//! Platforms and users: creation all or nothing, the first platform once, what a new platform starts with.

use super::*;

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
        role: holdfast_domain::user::Role::Viewer,
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

pub async fn only_one_first_platform_under_concurrency(db: Database) {
    let stores = db.stores();
    let attempts = (0..4).map(|i| {
        let stores = stores.clone();
        tokio::spawn(async move {
            let candidate = platform_service(&stores)
                .bootstrap_demo(
                    &holdfast_domain::audit::Actor::operator(),
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
    let again = platform_service(&stores)
        .bootstrap_demo(
            &holdfast_domain::audit::Actor::operator(),
            PlatformName::parse("Demo").unwrap(),
            Email::parse("d@example.com").unwrap(),
        )
        .await
        .unwrap();
    assert!(again.is_none());
}

pub async fn new_platforms_get_a_sandbox_and_a_default_test_plan(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let plan = stored_default_plan(&stores, &Scope::new(a.platform.id.clone(), Mode::Test))
        .await
        .unwrap();
    assert!(plan.is_default && plan.fee == FeeRule::new(290, 30).unwrap());
    let connection = stores
        .routing
        .get_connection(
            &Scope::new(a.platform.id.clone(), Mode::Test),
            &plan.default_connection,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        connection.kind(),
        holdfast_domain::payment::routing::ProcessorKind::Sandbox
    );
    assert_eq!(
        stores
            .routing
            .get_plan(&Scope::new(a.platform.id.clone(), Mode::Test), &plan.id)
            .await
            .unwrap(),
        Some(plan.clone())
    );
    assert!(
        stored_default_plan(&stores, &Scope::new(a.platform.id.clone(), Mode::Live))
            .await
            .is_none(),
        "live starts empty"
    );
    assert!(
        stores
            .routing
            .get_plan(&Scope::new(a.platform.id.clone(), Mode::Live), &plan.id)
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
    // Routes to three different connections, so no column can stand in for another.
    let (visa, backup) = (
        sandbox_connection(&a.platform.id),
        sandbox_connection(&a.platform.id),
    );
    for c in [&visa, &backup] {
        stores.routing.insert_connection(c, None).await.unwrap();
    }
    second.is_default = false;
    second.brand_routes = vec![
        (CardBrand::Visa, visa.id.clone()),
        (CardBrand::Amex, connection.id.clone()),
    ];
    second.fallbacks = vec![backup.id.clone(), visa.id.clone()];
    stores.routing.insert_plan(&second, None).await.unwrap();
    let round = stores
        .routing
        .get_plan(&Scope::new(a.platform.id.clone(), Mode::Test), &second.id)
        .await
        .unwrap();
    assert_eq!(round, Some(second), "routes and fallbacks round-trip");
}

pub async fn ping_answers(db: Database) {
    db.ping().await.unwrap();
}

/// An Adyen connection reads back as written, its secrets still sealed, in its own mode only.
pub async fn an_adyen_connection_keeps_its_account_sealed(db: Database) {
    use holdfast_domain::payment::adyen::{AdyenAccount, SealedSecret};
    use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorKind};
    use holdfast_domain::ports::Sealed;

    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let sealed = |n: u8| SealedSecret {
        sealed: Sealed {
            key_id: "k1".into(),
            nonce: vec![n; 12],
            ciphertext: vec![n; 40],
        },
        last4: format!("{n:04}"),
    };
    let connection = ProcessorConnection {
        id: ConnectionId::from_suffix("adyen1"),
        platform_id: a.platform.id.clone(),
        mode: Mode::Live,
        name: "Adyen".into(),
        account: ProcessorAccount::Adyen(Box::new(AdyenAccount {
            merchant_account: "HoldfastECOM".into(),
            checkout_url: "https://p-checkout-live.adyenpayments.com/checkout/v71".into(),
            api_key: sealed(1),
            hmac_key: sealed(2),
            notification_username: "adyen".into(),
            notification_password: sealed(3),
        })),
        created_on: datetime!(2026-12-05 12:00 UTC),
    };
    stores
        .routing
        .insert_connection(&connection, None)
        .await
        .unwrap();
    let live = Scope::new(a.platform.id.clone(), Mode::Live);
    let read = stores
        .routing
        .get_connection(&live, &connection.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, connection);
    assert_eq!(read.kind(), ProcessorKind::Adyen);
    let test = Scope::new(a.platform.id.clone(), Mode::Test);
    assert!(
        stores
            .routing
            .get_connection(&test, &connection.id)
            .await
            .unwrap()
            .is_none()
    );
}
