//! Idempotency keys, and a created resource committed with its stored answer.

use super::*;

/// A create's answer commits with the resource it reports (merchant, subscription, token,
/// connection, plan), and a refused create writes neither: the key then stays running,
/// for the HTTP layer to store or release.
pub async fn a_created_resource_and_its_stored_answer_commit_together(db: Database) {
    use holdfast_domain::idempotency::{Answer, IdempotencyKey, KeyedAnswer, Seen, fingerprint};
    use holdfast_domain::ports::Begun;
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let idem = &stores.idempotency;
    let print = fingerprint(&[7; 32], "POST", "/v1/x", b"{}");
    let answer = |n: &str| Answer {
        status: 201,
        body: format!("{{\"made\":\"{n}\"}}"),
    };
    let claim = async |name: &str| {
        let key = IdempotencyKey::parse(name).unwrap();
        let begun = idem.begin(&p.scope, &key, &print, T0).await;
        assert_eq!(begun.unwrap(), Begun::Started);
        Some(KeyedAnswer {
            key,
            answer: answer(name),
        })
    };
    let seen = async |name: &str| {
        let key = IdempotencyKey::parse(name).unwrap();
        match idem.begin(&p.scope, &key, &print, T0).await.unwrap() {
            Begun::Seen(seen) => seen,
            Begun::Started => panic!("{name}: the key was lost"),
        }
    };

    // The same key in the other mode is another key: the answers below never reach it.
    let (in_live, live) = (IdempotencyKey::parse("merchant").unwrap(), p.scope.clone());
    let live_scope = Scope::new(live.platform, Mode::Live);
    let live = async || idem.begin(&live_scope, &in_live, &print, T0).await.unwrap();
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
    let c = sandbox_connection(&p.scope.platform);
    let reply = claim("connection").await;
    stores.routing.insert_connection(&c, reply).await.unwrap();
    // The platform has its default plan already: this one is not, the second one is.
    let mut own = default_plan(&p.scope.platform, &c.id);
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
            .get_webhook(&p.scope, &over.id)
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn idempotency_keys_claim_replay_and_release(db: Database) {
    use holdfast_domain::idempotency::{Answer, IdempotencyKey, Seen, fingerprint};
    use holdfast_domain::ports::Begun;
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let (p, mode) = (&a.platform.id, Mode::Test);
    let (test, live) = (
        Scope::new(p.clone(), mode),
        Scope::new(p.clone(), Mode::Live),
    );
    let key = IdempotencyKey::parse("order-42").unwrap();
    let print = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{}");
    let other = fingerprint(&[7; 32], "POST", "/v1/merchants", b"{\"x\":1}");
    let idem = &stores.idempotency;
    assert_eq!(
        idem.begin(&test, &key, &print, T0).await.unwrap(),
        Begun::Started
    );
    assert_eq!(
        idem.begin(&test, &key, &print, T0).await.unwrap(),
        Begun::Seen(Seen::InProgress)
    );
    assert_eq!(
        idem.begin(&live, &key, &print, T0).await.unwrap(),
        Begun::Started,
        "per mode"
    );
    let response = Answer {
        status: 201,
        body: "{\"id\":1}".into(),
    };
    idem.complete(&test, &key, &response).await.unwrap();
    assert_eq!(
        idem.begin(&test, &key, &print, T0).await.unwrap(),
        Begun::Seen(Seen::Replay(response.clone()))
    );
    assert_eq!(
        idem.begin(&test, &key, &other, T0).await.unwrap(),
        Begun::Seen(Seen::Mismatch)
    );
    // A completed key is not released; a running one is.
    idem.release(&test, &key).await.unwrap();
    assert_eq!(
        idem.begin(&test, &key, &print, T0).await.unwrap(),
        Begun::Seen(Seen::Replay(response))
    );
    let running = IdempotencyKey::parse("order-43").unwrap();
    assert_eq!(
        idem.begin(&test, &running, &print, T0).await.unwrap(),
        Begun::Started
    );
    idem.release(&test, &running).await.unwrap();
    assert_eq!(
        idem.begin(&test, &running, &print, T0).await.unwrap(),
        Begun::Started
    );
    // After 24 hours a key starts afresh.
    let later = T0 + time::Duration::hours(25);
    assert_eq!(
        idem.begin(&test, &key, &other, later).await.unwrap(),
        Begun::Started
    );
    // Retention: keys created before the cut-off are deleted, newer ones stay.
    let fresh = IdempotencyKey::parse("order-44").unwrap();
    idem.begin(&test, &fresh, &print, later + time::Duration::hours(1))
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
        idem.begin(&test, &fresh, &print, later + time::Duration::hours(1))
            .await
            .unwrap(),
        Begun::Seen(Seen::InProgress),
        "the newer key was kept"
    );
}
