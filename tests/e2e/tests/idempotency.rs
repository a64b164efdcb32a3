//! `Idempotency-Key` on POST, observed from outside: replays, conflicts, in-flight duplicates,
//! transient failures never stored, recorded payments always replayed, public keys in a space of
//! their own, and nothing ever written twice.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]
#![expect(
    clippy::too_many_lines,
    reason = "end-to-end scenarios read top to bottom"
)]

use holdfast_e2e::routes::TOKEN_BODY;
use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::StatusCode;

fn auth(merchant: &str, number: &str) -> String {
    format!(
        r#"{{"merchantId": "{merchant}", "type": "auth", "amount": 1000,
            "payment": {{"number": "{number}", "cvv": "123", "expiration": "1230"}}}}"#
    )
}

fn replayed(reply: &holdfast_e2e::Reply) -> bool {
    reply
        .headers
        .get("idempotent-replayed")
        .is_some_and(|v| v == "true")
}

async fn repeats_replay_and_never_write_twice(env: Env) {
    let platform = env.create_platform("Acme");
    let other = env.create_platform("Other");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "400"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;

    let first = api
        .post_once("/v1/merchants", key, "create-shop-1", r#"{"name": "Shop"}"#)
        .await;
    assert_eq!(first.status, StatusCode::CREATED);
    assert!(!replayed(&first));
    let again = api
        .post_once("/v1/merchants", key, "create-shop-1", r#"{"name": "Shop"}"#)
        .await;
    assert_eq!(
        (again.status, &again.body),
        (StatusCode::CREATED, &first.body)
    );
    assert!(replayed(&again), "the replay says so");
    let merchants = api.get("/v1/merchants", key).await;
    assert_eq!(
        merchants.body["data"].as_array().unwrap().len(),
        1,
        "created once"
    );

    let different = api
        .post_once(
            "/v1/merchants",
            key,
            "create-shop-1",
            r#"{"name": "Other shop"}"#,
        )
        .await;
    assert_eq!(
        (different.status, different.error_param()),
        (StatusCode::CONFLICT, Some("Idempotency-Key"))
    );
    // Keys belong to a platform and mode: another platform may use the same one.
    let elsewhere = api
        .post_once(
            "/v1/merchants",
            &other.private_key,
            "create-shop-1",
            r#"{"name": "Shop"}"#,
        )
        .await;
    assert_eq!(elsewhere.status, StatusCode::CREATED);
    assert!(!replayed(&elsewhere));

    let merchant = first.body["id"].as_str().unwrap();
    // A decline is an answer: stored and replayed, one transaction only.
    let declined = api
        .post_once(
            "/v1/transactions",
            key,
            "pay-1",
            &auth(merchant, "4000000000000119"),
        )
        .await;
    let declined_again = api
        .post_once(
            "/v1/transactions",
            key,
            "pay-1",
            &auth(merchant, "4000000000000119"),
        )
        .await;
    assert_eq!(
        (declined.status, declined_again.status),
        (StatusCode::PAYMENT_REQUIRED, StatusCode::PAYMENT_REQUIRED)
    );
    assert_eq!(declined.body, declined_again.body);
    assert!(!replayed(&declined) && replayed(&declined_again));
    let approved = api
        .post_once(
            "/v1/transactions",
            key,
            "pay-2",
            &auth(merchant, "4111111111111111"),
        )
        .await;
    let approved_again = api
        .post_once(
            "/v1/transactions",
            key,
            "pay-2",
            &auth(merchant, "4111111111111111"),
        )
        .await;
    // Stored with the transaction itself: the replay is the answer, byte for byte.
    assert_eq!(
        (approved.status, approved_again.status),
        (StatusCode::CREATED, StatusCode::CREATED)
    );
    assert_eq!(approved.body, approved_again.body);
    assert!(replayed(&approved_again));
    // Refused before anything is recorded: stored by the middleware, replayed the same.
    let unknown = auth("mid_00000000000000000000000000", "4111111111111111");
    let refused = api
        .post_once("/v1/transactions", key, "pay-3", &unknown)
        .await;
    let refused_again = api
        .post_once("/v1/transactions", key, "pay-3", &unknown)
        .await;
    assert_eq!(
        (refused.status, refused.error_param()),
        (StatusCode::BAD_REQUEST, Some("merchantId"))
    );
    assert_eq!(refused.body, refused_again.body);
    assert!(replayed(&refused_again));
    let listed = api.get("/v1/transactions?limit=100", key).await;
    assert_eq!(
        listed.body["data"].as_array().unwrap().len(),
        2,
        "one decline, one approval"
    );

    for bad in ["", "has space", &"k".repeat(256)] {
        let reply = api
            .post_once("/v1/merchants", key, bad, r#"{"name": "Shop"}"#)
            .await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some("Idempotency-Key")),
            "{bad:?}"
        );
    }
}

async fn a_duplicate_in_flight_is_refused_and_a_recorded_timeout_is_replayed(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "600"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let body = auth(m.body["id"].as_str().unwrap(), "4000000000000168");
    let late = async {
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        api.post_once("/v1/transactions", key, "slow-1", &body)
            .await
    };
    let (first, second) = tokio::join!(
        api.post_once("/v1/transactions", key, "slow-1", &body),
        late
    );
    assert_eq!(first.status, StatusCode::GATEWAY_TIMEOUT, "{}", first.text);
    // Rendered on the payment's own task, the answer still names its request.
    assert_eq!(
        first.body["error"]["requestId"].as_str(),
        first
            .headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok()),
        "{}",
        first.text
    );
    assert_eq!(
        (second.status, second.error_param()),
        (StatusCode::CONFLICT, Some("Idempotency-Key")),
        "{}",
        second.text
    );
    // The 504 is a recorded transaction (timed out, reversed): the retry replays it, it never
    // makes a second payment.
    let retry = api
        .post_once("/v1/transactions", key, "slow-1", &body)
        .await;
    assert_eq!(retry.status, StatusCode::GATEWAY_TIMEOUT);
    assert!(replayed(&retry));
    assert_eq!(
        retry.body["transaction"]["id"],
        first.body["transaction"]["id"]
    );
}

/// A public key lives in web pages: whoever copies it can neither block a server's key nor
/// learn that it is in use (spec 5.3; docs/decisions.md, Idempotency).
async fn a_public_key_can_neither_block_nor_detect_a_private_keys_key(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let private = &platform.private_key;
    let public = &platform.public_key;
    let token = TOKEN_BODY;
    // The attacker goes first with the key the server will use…
    let squat = api
        .post_once("/v1/tokens", public, "order-1001", token)
        .await;
    assert_eq!(squat.status, StatusCode::CREATED, "{}", squat.text);
    // …and the server's request with that key runs as new.
    let m = api
        .post_once(
            "/v1/merchants",
            private,
            "order-1001",
            r#"{"name": "Shop"}"#,
        )
        .await;
    assert_eq!(m.status, StatusCode::CREATED, "{}", m.text);
    assert!(!replayed(&m));
    let sale = auth(m.body["id"].as_str().unwrap(), "4111111111111111").replace("auth", "sale");
    let paid = api
        .post_once("/v1/transactions", private, "order-2002", &sale)
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    // Probing the server's key with an empty body: the 400 any unused key gets, never the 409
    // that would say "in use".
    let probe = api
        .post_once("/v1/tokens", public, "order-2002", "{}")
        .await;
    assert_eq!(probe.status, StatusCode::BAD_REQUEST, "{}", probe.text);
    // The public key's own replay still works.
    let again = api
        .post_once("/v1/tokens", public, "order-1001", token)
        .await;
    assert!(replayed(&again));
    assert_eq!(again.body["id"], squat.body["id"]);
}

/// A client that hangs up mid-payment cancels nothing: the payment runs to its end (here a
/// processor timeout and its reversal), and the same key then replays the recorded answer.
async fn a_client_that_hangs_up_cancels_nothing(env: Env) {
    use holdfast_e2e::raw::RawRequest;
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "1000"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let merchant = m.body["id"].as_str().unwrap().to_owned();
    let body = auth(&merchant, "4000000000000168");
    let request = RawRequest::new("POST", "/v1/transactions")
        .header("x-api-key", key.as_str())
        .header("idempotency-key", "hang-up-1")
        .json(body.clone());
    let started = std::time::Instant::now();
    request
        .reset_after(&server.base_url, std::time::Duration::from_millis(200))
        .await;

    let deadline = started + std::time::Duration::from_secs(3);
    let txn = loop {
        let list = api
            .get(&format!("/v1/transactions?merchantId={merchant}"), key)
            .await;
        let txn = list.body["data"][0].clone();
        if txn["state"] == "failed" || std::time::Instant::now() > deadline {
            break txn;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(
        (
            txn["state"].as_str(),
            txn["authorization"]["status"].as_str()
        ),
        (Some("failed"), Some("T")),
        "3 s after the hang-up: {txn}"
    );
    let retry = api
        .post_once("/v1/transactions", key, "hang-up-1", &body)
        .await;
    assert_eq!(retry.status, StatusCode::GATEWAY_TIMEOUT, "{}", retry.text);
    assert!(replayed(&retry), "{}", retry.text);
    assert_eq!(retry.body["transaction"]["id"], txn["id"]);
}

/// A card payment claims its key with its pending row (docs/decisions.md, "A card payment's
/// key is claimed by its pending row"); everything else about keys holds as when the key was
/// claimed first: another request's key is a conflict, whatever the body; concurrent repeats
/// make one payment; a token payment and a capture, which cannot claim that way, still replay
/// and never redeem or capture twice.
async fn a_payment_claims_its_key_with_its_first_write(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "600"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = api
        .post_once("/v1/merchants", key, "shop-1", r#"{"name": "Shop"}"#)
        .await;
    let merchant = m.body["id"].as_str().unwrap();
    let card = auth(merchant, "4111111111111111");

    let slow = usize::from(env.backend == holdfast_e2e::Backend::Postgres);
    if slow == 1 {
        // While the processor is called, the key's row and the pending row are there, written
        // by one commit (the same `xmin`).
        let slow = auth(merchant, "4000000000000168");
        let (api, key) = (api.clone(), key.clone());
        let paying = tokio::spawn(async move {
            api.post_once("/v1/transactions", &key, "slow-1", &slow)
                .await
        });
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let rows = env
            .query_text(
                "SELECT k.xmin::text = t.xmin::text FROM idempotency_keys k, transactions t \
                 WHERE k.key = 'slow-1' AND t.state = 'pending'",
            )
            .await;
        assert_eq!(rows, [[Some("t".to_owned())]], "one commit for both");
        let paid = paying.await.unwrap();
        assert_eq!(paid.status, StatusCode::GATEWAY_TIMEOUT, "{}", paid.text);
    }
    let conflict = |reply: &holdfast_e2e::Reply| {
        (reply.status, reply.error_param()) == (StatusCode::CONFLICT, Some("Idempotency-Key"))
    };

    // A key another request holds: 409, whether the body would pay or be refused.
    let held = api
        .post_once("/v1/transactions", key, "shop-1", &card)
        .await;
    assert!(conflict(&held), "{}", held.text);
    let invalid = api
        .post_once("/v1/transactions", key, "shop-1", r#"{"type": "auth"}"#)
        .await;
    assert!(conflict(&invalid), "{}", invalid.text);
    let unreadable = api.post_once("/v1/transactions", key, "shop-1", "{").await;
    assert!(conflict(&unreadable), "{}", unreadable.text);

    // Ten repeats at once: one payment; each answer is the payment, its replay, or "running".
    let mut repeats = tokio::task::JoinSet::new();
    for _ in 0..10 {
        let (api, key, card) = (api.clone(), key.clone(), card.clone());
        repeats.spawn(async move {
            api.post_once("/v1/transactions", &key, "pay-once", &card)
                .await
        });
    }
    let repeats = repeats.join_all().await;
    let made: Vec<_> = repeats
        .iter()
        .filter(|r| r.status == StatusCode::CREATED)
        .map(|r| r.body["id"].clone())
        .collect();
    assert!(!made.is_empty(), "one of them paid");
    assert!(made.iter().all(|id| *id == made[0]), "{made:?}");
    assert!(
        repeats
            .iter()
            .all(|r| r.status == StatusCode::CREATED || conflict(r)),
        "{:?}",
        repeats.iter().map(|r| &r.text).collect::<Vec<_>>()
    );
    let listed = api.get("/v1/transactions?limit=100", key).await;
    let payments = listed.body["data"].as_array().unwrap().len();
    assert_eq!(payments, 1 + slow, "one payment of the ten");

    // A refusal before the pending row is stored and replayed; the key is then taken.
    let no_amount = format!(r#"{{"merchantId": "{merchant}", "type": "auth"}}"#);
    let refused = api
        .post_once("/v1/transactions", key, "pay-bad", &no_amount)
        .await;
    let refused_again = api
        .post_once("/v1/transactions", key, "pay-bad", &no_amount)
        .await;
    assert_eq!(
        (refused.status, refused.error_param()),
        (StatusCode::BAD_REQUEST, Some("amount"))
    );
    assert!(replayed(&refused_again) && refused_again.body == refused.body);
    let other_body = api
        .post_once("/v1/transactions", key, "pay-bad", &card)
        .await;
    assert!(conflict(&other_body), "{}", other_body.text);

    // A token payment: replayed, the token redeemed once.
    let token = api
        .post("/v1/tokens", &platform.public_key, TOKEN_BODY)
        .await;
    let by_token = format!(
        r#"{{"merchantId": "{merchant}", "type": "auth", "amount": 500,
            "payment": {{"token": "{}"}}}}"#,
        token.body["id"].as_str().unwrap()
    );
    let paid = api
        .post_once("/v1/transactions", key, "pay-token", &by_token)
        .await;
    let paid_again = api
        .post_once("/v1/transactions", key, "pay-token", &by_token)
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert!(replayed(&paid_again) && paid_again.body == paid.body);
    let token_again = api
        .post_once("/v1/transactions", key, "pay-token-2", &by_token)
        .await;
    assert_eq!(
        (token_again.status, token_again.error_param()),
        (StatusCode::BAD_REQUEST, Some("payment.token")),
        "{}",
        token_again.text
    );

    // A capture: replayed, captured once.
    let capture = format!(
        r#"{{"type": "capture", "transactionId": "{}"}}"#,
        made[0].as_str().unwrap()
    );
    let captured = api
        .post_once("/v1/transactions", key, "capture-1", &capture)
        .await;
    let captured_again = api
        .post_once("/v1/transactions", key, "capture-1", &capture)
        .await;
    assert_eq!(captured.status, StatusCode::CREATED, "{}", captured.text);
    assert!(replayed(&captured_again) && captured_again.body == captured.body);
    let listed = api.get("/v1/transactions?limit=100", key).await;
    let kinds: Vec<&str> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    let expected = [&["capture", "auth", "auth"][..], &vec!["auth"; slow]].concat();
    assert_eq!(kinds, expected, "each made once");
}

on_both_backends!(
    a_payment_claims_its_key_with_its_first_write,
    repeats_replay_and_never_write_twice,
    a_duplicate_in_flight_is_refused_and_a_recorded_timeout_is_replayed,
    a_public_key_can_neither_block_nor_detect_a_private_keys_key,
    a_client_that_hangs_up_cancels_nothing,
);
