//! The ledger under every payment, from outside (docs/money.md): balances read through the API
//! after real payments, the journals read from the database, and `holdfast ledger verify`
//! clean, then failing on books changed behind its back.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::StatusCode;
use serde_json::{Value, json};

const CARD: &str = r#"{"number": "4111111111111111", "cvv": "123", "expiration": "1230"}"#;

async fn pay(api: &Api, key: &str, body: &str) -> Value {
    let paid = api.post("/v1/transactions", key, body).await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    paid.body
}

fn fee(t: &Value) -> i64 {
    t["fee"].as_i64().unwrap()
}

/// A sale, an auth and its partial capture, a partial refund of the sale, a declined sale and a
/// void: the balances are what the module's table says, summed from the entries, and each
/// money-moving transaction has one journal whose entries sum to zero.
async fn balances_follow_the_posting_table(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = api.shop(key).await;
    let body = |kind: &str, amount: i64| {
        format!(
            r#"{{"merchantId": "{merchant}", "type": "{kind}", "amount": {amount}, "payment": {CARD}}}"#
        )
    };
    let follow = |kind: &str, id: &Value, amount: i64| {
        format!(r#"{{"type": "{kind}", "transactionId": {id}, "amount": {amount}}}"#)
    };
    let sale = pay(&api, key, &body("sale", 1000)).await;
    let auth = pay(&api, key, &body("auth", 2000)).await;
    let capture = pay(&api, key, &follow("capture", &auth["id"], 1500)).await;
    let refund = pay(&api, key, &follow("refund", &sale["id"], 400)).await;
    let voided = pay(&api, key, &body("auth", 700)).await;
    pay(
        &api,
        key,
        &follow("void", &voided["id"], 700).replace(r#", "amount": 700"#, ""),
    )
    .await;
    let declined = api
        .post(
            "/v1/transactions",
            key,
            &body("sale", 1000).replace("4111111111111111", "4000000000000101"),
        )
        .await;
    assert_eq!(
        declined.status,
        StatusCode::PAYMENT_REQUIRED,
        "{}",
        declined.text
    );

    // Pending: the sale's net and the capture's, less its fee and its auth's; the voided auth
    // charged nothing. Available: the refund taken from it (below zero: the sale has not
    // settled).
    assert!(
        fee(&auth) > 0 && fee(&voided) > 0,
        "the plan charges auths a fee"
    );
    let pending = (1000 - fee(&sale)) + (1500 - fee(&capture) - fee(&auth));
    let available = -(400 + fee(&refund));
    let read = api
        .get(&format!("/v1/balances?merchantId={merchant}"), key)
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    assert_eq!(
        read.body,
        json!({
            "merchantId": merchant,
            "mode": "test",
            "balances": [{"currency": "USD", "available": available, "pending": pending, "inTransit": 0}]
        })
    );

    // One journal per money-moving transaction (the sale, the capture, the refund), each
    // summing to zero; none for the auths, the void or the decline.
    let rows = env
        .query_text(
            "SELECT source_id, kind, CAST(sum(amount) AS TEXT), CAST(count(*) AS TEXT)
               FROM ledger_entries GROUP BY source_id, kind ORDER BY source_id",
        )
        .await;
    let mut expected: Vec<Vec<Option<String>>> = [
        (&sale, "charge", "3"),
        (&capture, "charge", "3"),
        (&refund, "refund", "2"),
    ]
    .iter()
    .map(|(t, kind, entries)| {
        vec![
            Some(t["id"].as_str().unwrap().to_owned()),
            Some((*kind).to_owned()),
            Some("0".to_owned()),
            Some((*entries).to_owned()),
        ]
    })
    .collect();
    expected.sort();
    assert_eq!(rows, expected);

    let verified = env.cli_json(&["ledger", "verify"]);
    assert_eq!(verified["problems"], json!([]));
    assert_eq!(verified["journals"], 3);
    assert_eq!(verified["entries"], 8);
}

/// A merchant without money reads zeros in its own currency; another mode's merchant, an
/// unknown or malformed id is not found; `merchantId` is required and named.
async fn balances_are_scoped_and_refused_by_name(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let made = api
        .post(
            "/v1/merchants",
            key,
            r#"{"name": "Shop", "currency": "EUR"}"#,
        )
        .await;
    let merchant = made.body["id"].as_str().unwrap();
    let read = api
        .get(&format!("/v1/balances?merchantId={merchant}"), key)
        .await;
    assert_eq!(
        read.body["balances"],
        json!([{"currency": "EUR", "available": 0, "pending": 0, "inTransit": 0}])
    );
    for (who, query) in [
        (live.as_str(), format!("merchantId={merchant}")),
        (
            key.as_str(),
            "merchantId=mid_0000000000000000000000000".to_owned(),
        ),
        (key.as_str(), "merchantId=4111111111111111".to_owned()),
    ] {
        let reply = api.get(&format!("/v1/balances?{query}"), who).await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{query}");
        assert!(!reply.text.contains("4111111111111111"), "never echoed");
    }
    for (query, param) in [("", "merchantId"), ("?merchantId=x&merchant=y", "merchant")] {
        let reply = api.get(&format!("/v1/balances{query}"), key).await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{query}"
        );
    }
}

/// Books changed behind the ledger's back are found: an entry's amount changed, an entry gone,
/// a transaction's journal gone; each named, and the command exits 1.
async fn verify_finds_books_changed_behind_its_back(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = api.shop(key).await;
    let body = format!(
        r#"{{"merchantId": "{merchant}", "type": "sale", "amount": 1000, "payment": {CARD}}}"#
    );
    let first = pay(&api, key, &body).await;
    let second = pay(&api, key, &body).await;
    let third = pay(&api, key, &body).await;
    assert!(env.cli(&["ledger", "verify"]).success);
    let id = |t: &Value| t["id"].as_str().unwrap().to_owned();
    env.execute_sql(&format!(
        "UPDATE ledger_entries SET amount = amount + 1 WHERE source_id = '{}' AND purpose = 'platform_fees';
         DELETE FROM ledger_entries WHERE source_id = '{}' AND purpose = 'platform_fees';
         DELETE FROM ledger_entries WHERE source_id = '{}';",
        id(&first),
        id(&second),
        id(&third),
    ))
    .await;
    let out = env.cli(&["--json", "ledger", "verify"]);
    assert!(!out.success, "differences fail the command");
    let found: Value = serde_json::from_str(&out.stdout).unwrap();
    let problems: Vec<&str> = found["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let named = |t: &Value, what: &str| {
        problems
            .iter()
            .any(|p| p.starts_with(&id(t)) && p.contains(what))
    };
    assert!(named(&first, "sums to 1"), "{problems:?}");
    assert!(
        named(
            &second,
            &format!("moves 2 account(s) and sums to {}", fee(&second))
        ),
        "{problems:?}"
    );
    assert!(named(&third, "has no journal"), "{problems:?}");
    assert!(out.stderr.contains("does not add up"), "{}", out.stderr);
}

on_both_backends!(
    balances_follow_the_posting_table,
    balances_are_scoped_and_refused_by_name,
    verify_finds_books_changed_behind_its_back,
);
