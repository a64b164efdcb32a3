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

on_both_backends!(
    repeats_replay_and_never_write_twice,
    a_duplicate_in_flight_is_refused_and_a_recorded_timeout_is_replayed,
    a_public_key_can_neither_block_nor_detect_a_private_keys_key,
    a_client_that_hangs_up_cancels_nothing,
);
