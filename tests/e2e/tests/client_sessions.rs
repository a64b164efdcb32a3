//! Client sessions from outside: opened with a private key for one checkout, read back without
//! their secret, canceled once, and every bad field named.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_e2e::{Api, Env, contains, on_both_backends};
use reqwest::StatusCode;

async fn a_session_is_opened_read_and_canceled_once(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = api
        .post(
            "/v1/merchants",
            key,
            r#"{"name": "Shop", "currency": "EUR"}"#,
        )
        .await;
    let merchant = merchant.body["id"].as_str().unwrap().to_owned();

    let made = api
        .post(
            "/v1/client-sessions",
            key,
            &format!(
                r#"{{"merchantId": "{merchant}", "amount": 2500, "paymentMethods": ["card", "google_pay", "card"], "expiresIn": 600}}"#
            ),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let session = &made.body;
    let id = session["id"].as_str().unwrap();
    assert!(id.starts_with("cs_"));
    let secret = session["clientSecret"].as_str().unwrap();
    assert!(secret.starts_with(&format!("{id}_secret_")), "{secret}");
    assert_eq!(session["merchantId"], merchant.as_str());
    assert_eq!(session["amount"], 2500);
    assert_eq!(session["currency"], "EUR", "the merchant's currency");
    assert_eq!(
        session["paymentMethods"],
        serde_json::json!(["card", "google_pay"])
    );
    assert_eq!(session["status"], "open");
    assert_eq!(session["mode"], "test");
    assert!(session["transactionId"].is_null());
    let created = time::OffsetDateTime::parse(
        session["createdOn"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let expires = time::OffsetDateTime::parse(
        session["expiresAt"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    assert_eq!(expires - created, time::Duration::seconds(600));

    // Read back: everything but the secret, which is shown once and never stored.
    let read = api.get(&format!("/v1/client-sessions/{id}"), key).await;
    assert_eq!(read.status, StatusCode::OK);
    assert!(read.body.get("clientSecret").is_none());
    assert_eq!(read.body["status"], "open");
    // Only its hash is kept (no Idempotency-Key was sent, so no stored answer holds it).
    let dump = env.dump().await;
    assert!(
        !holdfast_e2e::contains(&dump, secret.as_bytes()),
        "the client secret is in the database"
    );

    let canceled = api
        .post(&format!("/v1/client-sessions/{id}/cancel"), key, "")
        .await;
    assert_eq!(canceled.status, StatusCode::OK, "{}", canceled.text);
    assert_eq!(canceled.body["status"], "canceled");
    assert!(canceled.body["closedOn"].is_string());
    let again = api
        .post(&format!("/v1/client-sessions/{id}/cancel"), key, "")
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    assert_eq!(again.body["error"]["param"], "id");
    assert!(
        again.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("canceled")
    );
}

async fn a_bad_session_request_names_its_field(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let m = merchant.body["id"].as_str().unwrap().to_owned();
    let cases = [
        (r#"{"amount": 100}"#.to_owned(), "merchantId"),
        (format!(r#"{{"merchantId": "{m}"}}"#), "amount"),
        (format!(r#"{{"merchantId": "{m}", "amount": 0}}"#), "amount"),
        (
            r#"{"merchantId": "mid_nope", "amount": 100}"#.to_owned(),
            "merchantId",
        ),
        (
            format!(r#"{{"merchantId": "{m}", "amount": 100, "currency": "EUR"}}"#),
            "currency",
        ),
        (
            format!(r#"{{"merchantId": "{m}", "amount": 100, "paymentMethods": []}}"#),
            "paymentMethods",
        ),
        (
            format!(
                r#"{{"merchantId": "{m}", "amount": 100, "paymentMethods": ["card", "cash"]}}"#
            ),
            "paymentMethods[1]",
        ),
        (
            format!(r#"{{"merchantId": "{m}", "amount": 100, "expiresIn": 59}}"#),
            "expiresIn",
        ),
        (
            format!(r#"{{"merchantId": "{m}", "amount": 100, "expiresIn": 86401}}"#),
            "expiresIn",
        ),
    ];
    for (body, field) in cases {
        let reply = api.post("/v1/client-sessions", key, &body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.error_param(), Some(field), "{body}");
    }
    let list = api.get("/v1/client-sessions/cs_nope", key).await;
    assert_eq!(list.status, StatusCode::NOT_FOUND);
}

/// A token made with a session's secret pays only that checkout: the wrong amount or merchant
/// is refused by name (the token stays usable), the right payment completes the session, and
/// then nothing more is tokenized or paid under it.
async fn a_session_token_pays_only_its_checkout_once(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let api = Api::new(&server);
    let (private, public) = (&platform.private_key, &platform.public_key);
    let mut merchants = Vec::new();
    for name in ["Shop", "Other"] {
        let made = api
            .post(
                "/v1/merchants",
                private,
                &format!(r#"{{"name": "{name}"}}"#),
            )
            .await;
        merchants.push(made.body["id"].as_str().unwrap().to_owned());
    }
    let (shop, other) = (&merchants[0], &merchants[1]);
    let (id, secret) = open_checkout(&api, private, shop).await;
    let (id, secret) = (id.as_str(), secret.as_str());
    let tokenize = |secret: String| {
        let api = api.clone();
        let public = public.clone();
        async move {
            api.post(
                "/v1/tokens",
                &public,
                &format!(
                    r#"{{"clientSecret": "{secret}", "payment": {{"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}}}"#
                ),
            )
            .await
        }
    };
    let first = tokenize(secret.to_owned()).await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    // While the session is open, a live public key cannot use a test session's secret: the
    // modes are isolated (spec 5.5).
    let (_, live_public) = env.create_key(&platform.id, "public", "live");
    let live = api
        .post(
            "/v1/tokens",
            &live_public,
            &format!(
                r#"{{"clientSecret": "{secret}", "payment": {{"number": "4111111111111111", "expiration": "1230"}}}}"#
            ),
        )
        .await;
    assert_eq!(live.error_param(), Some("clientSecret"), "{}", live.text);
    assert!(
        live.text
            .contains("not the secret of an open client session"),
        "{}",
        live.text
    );
    let second = tokenize(secret.to_owned()).await;
    let (first, second) = (
        first.body["id"].as_str().unwrap().to_owned(),
        second.body["id"].as_str().unwrap().to_owned(),
    );
    let pay = |merchant: &str, amount: i64, token: &str| {
        let api = api.clone();
        let private = private.clone();
        let body = format!(
            r#"{{"merchantId": "{merchant}", "type": "sale", "amount": {amount}, "payment": {{"token": "{token}"}}}}"#
        );
        async move { api.post("/v1/transactions", &private, &body).await }
    };
    for (merchant, amount, field) in [(shop, 2499, "amount"), (other, 2500, "merchantId")] {
        let refused = pay(merchant, amount, &first).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
        assert_eq!(refused.error_param(), Some(field));
    }
    let paid = pay(shop, 2500, &first).await;
    assert_eq!(
        paid.status,
        StatusCode::CREATED,
        "the token was left unused: {}",
        paid.text
    );
    let read = api.get(&format!("/v1/client-sessions/{id}"), private).await;
    assert_eq!(read.body["status"], "completed");
    assert_eq!(read.body["transactionId"], paid.body["id"]);

    // Completed: the other token of the session, and a new one, are refused.
    let late = pay(shop, 2500, &second).await;
    assert_eq!(late.status, StatusCode::BAD_REQUEST, "{}", late.text);
    assert_eq!(late.error_param(), Some("payment.token"));
    let again = tokenize(secret.to_owned()).await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "{}", again.text);
    assert_eq!(again.error_param(), Some("clientSecret"));
    assert!(!again.text.contains(secret), "the secret is not echoed");
    // A made-up secret of the same shape says nothing more.
    let forged = tokenize(format!("{id}_secret_ABCDEFGHIJKLMNOPQRSTUVWXYZ")).await;
    assert_eq!(
        forged.body["error"]["message"],
        again.body["error"]["message"]
    );
}

/// A client session for 2500 of `merchant`: its id and secret.
async fn open_checkout(api: &Api, private: &str, merchant: &str) -> (String, String) {
    let session = api
        .post(
            "/v1/client-sessions",
            private,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 2500}}"#),
        )
        .await;
    assert_eq!(session.status, StatusCode::CREATED, "{}", session.text);
    let field = |name: &str| session.body[name].as_str().unwrap().to_owned();
    (field("id"), field("clientSecret"))
}

/// A session is held by one payment at a time: a declined payment releases it, so the checkout
/// pays with a new token; of payments racing with several tokens of one session, exactly one
/// is made, and the others are refused before any processor call.
async fn a_session_pays_once_however_its_payments_race(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let api = Api::new(&server);
    let (private, public) = (&platform.private_key, &platform.public_key);
    let made = api
        .post("/v1/merchants", private, r#"{"name": "Shop"}"#)
        .await;
    let shop = made.body["id"].as_str().unwrap().to_owned();
    let (id, secret) = open_checkout(&api, private, &shop).await;
    let tokenize = async |number: &str| {
        let made = api
            .post(
                "/v1/tokens",
                public,
                &format!(
                    r#"{{"clientSecret": "{secret}", "payment": {{"number": "{number}", "cvv": "123", "expiration": "1230"}}}}"#
                ),
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
        made.body["id"].as_str().unwrap().to_owned()
    };
    let pay = |token: String| {
        let (api, private) = (api.clone(), private.clone());
        let body = format!(
            r#"{{"merchantId": "{shop}", "type": "sale", "amount": 2500, "payment": {{"token": "{token}"}}}}"#
        );
        async move { api.post("/v1/transactions", &private, &body).await }
    };

    let declined = pay(tokenize("4000000000000101").await).await;
    assert_eq!(
        declined.status,
        StatusCode::PAYMENT_REQUIRED,
        "{}",
        declined.text
    );
    let read = api.get(&format!("/v1/client-sessions/{id}"), private).await;
    assert_eq!(
        read.body["status"], "open",
        "a decline leaves the session open"
    );

    let mut tokens = Vec::new();
    for _ in 0..6 {
        tokens.push(tokenize("4111111111111111").await);
    }
    let racing: Vec<_> = tokens
        .into_iter()
        .map(|token| tokio::spawn(pay(token)))
        .collect();
    let mut made = Vec::new();
    for payment in racing {
        let answer = payment.await.unwrap();
        if answer.status == StatusCode::CREATED {
            made.push(answer.body["id"].as_str().unwrap().to_owned());
        } else {
            assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.text);
            assert_eq!(
                answer.error_param(),
                Some("payment.token"),
                "{}",
                answer.text
            );
        }
    }
    assert_eq!(made.len(), 1, "one payment per session: {made:?}");
    let read = api.get(&format!("/v1/client-sessions/{id}"), private).await;
    assert_eq!(read.body["status"], "completed");
    assert_eq!(read.body["transactionId"], made[0].as_str());
    let sales = api
        .get(
            &format!("/v1/transactions?merchantId={shop}&type=sale"),
            private,
        )
        .await;
    let approved = sales.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["state"] != "declined")
        .count();
    assert_eq!(approved, 1, "{}", sales.text);
    let canceled = api
        .post(&format!("/v1/client-sessions/{id}/cancel"), private, "")
        .await;
    assert_eq!(canceled.status, StatusCode::CONFLICT, "{}", canceled.text);
}

/// Under an `Idempotency-Key`, the first answer carries `clientSecret` and a replay the same
/// session without it: the secret is stored nowhere, not even for the replay.
async fn a_replayed_session_carries_no_secret(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let shop = api.shop(key).await;
    let body = format!(r#"{{"merchantId": "{shop}", "amount": 2500}}"#);
    let first = api
        .post_once("/v1/client-sessions", key, "checkout-1", &body)
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    let secret = first.body["clientSecret"].as_str().unwrap().to_owned();
    let again = api
        .post_once("/v1/client-sessions", key, "checkout-1", &body)
        .await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.body["id"], first.body["id"]);
    assert!(again.body.get("clientSecret").is_none(), "{}", again.text);
    let tail = secret.rsplit('_').next().unwrap();
    assert!(
        !contains(&env.dump().await, tail.as_bytes()),
        "the secret is stored nowhere"
    );
}

on_both_backends!(
    a_replayed_session_carries_no_secret,
    a_session_pays_once_however_its_payments_race,
    a_session_is_opened_read_and_canceled_once,
    a_bad_session_request_names_its_field,
    a_session_token_pays_only_its_checkout_once
);
