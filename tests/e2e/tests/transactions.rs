//! Payments from outside: every sandbox card, the follow-up rules, validation, concurrency,
//! and card data that is never stored or logged.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]
#![expect(
    clippy::too_many_lines,
    reason = "end-to-end scenarios read top to bottom"
)]

use holdfast_e2e::{Api, Env, Server, contains, on_both_backends};
use reqwest::StatusCode;
use serde_json::Value;

/// A running server, a platform's test private key and a merchant on the default plan.
struct Shop {
    server: Server,
    api: Api,
    key: String,
    merchant: String,
}

async fn shop(env: &Env) -> Shop {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "300"),
    ]);
    let api = Api::new(&server);
    let m = api
        .post(
            "/v1/merchants",
            &platform.private_key,
            r#"{"name": "Shop"}"#,
        )
        .await;
    Shop {
        merchant: m.body["id"].as_str().unwrap().to_owned(),
        key: platform.private_key,
        server,
        api,
    }
}

/// A name on the card distinctive enough to search a log or a dump for.
const CARDHOLDER: &str = "Zelda Quixotewright";

fn card_body(merchant: &str, kind: &str, amount: i64, number: &str) -> String {
    format!(
        r#"{{"merchantId": "{merchant}", "type": "{kind}", "amount": {amount},
            "payment": {{"number": "{number}", "cvv": "987", "expiration": "1230", "name": "{CARDHOLDER}"}}}}"#
    )
}

fn follow_up(kind: &str, original: &str, amount: Option<i64>) -> String {
    match amount {
        Some(a) => format!(r#"{{"type": "{kind}", "transactionId": "{original}", "amount": {a}}}"#),
        None => format!(r#"{{"type": "{kind}", "transactionId": "{original}"}}"#),
    }
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// Spec 2.2's fields, then ours (docs/decisions.md): the exact key set, in order.
fn assert_transaction_shape(t: &Value) {
    assert_eq!(
        keys(t),
        [
            "id",
            "type",
            "merchantId",
            "platformId",
            "amount",
            "currency",
            "fee",
            "createdOn",
            "payment",
            "plan",
            "processor",
            "authorization",
            "mode",
            "state",
            "transactionId",
            "refundedAmount",
            "reference",
            "metadata",
        ]
    );
    assert_eq!(keys(&t["payment"]), ["bin", "brand", "last4", "type"]);
    assert_eq!(keys(&t["plan"]), ["id", "name"]);
    assert_eq!(keys(&t["processor"]), ["id", "name"]);
    assert_eq!(
        keys(&t["authorization"]),
        [
            "approvedAmount",
            "avs",
            "cvv",
            "partial",
            "processorCode",
            "declineCode",
            "processorMessage",
            "processorTransactionId",
            "status",
        ]
    );
    assert!(t["id"].as_str().unwrap().starts_with("txn_"));
    assert!(t["plan"]["id"].as_str().unwrap().starts_with("plan_"));
    assert!(
        t["processor"]["id"]
            .as_str()
            .unwrap()
            .starts_with("midCon_")
    );
}

/// number, HTTP status, `authorization.status`, avs, cvv, approved amount (of 1001), decline
/// code, brand, funding: the sandbox card table of docs/testing.md.
type CardRow = (
    &'static str,
    u16,
    &'static str,
    &'static str,
    &'static str,
    i64,
    Option<&'static str>,
    &'static str,
    &'static str,
);

#[rustfmt::skip]
const SANDBOX_TABLE: &[CardRow] = &[
    ("4111111111111111", 201, "A", "Y", "M", 1001, None, "visa", "credit"),
    ("5555555555554444", 201, "A", "Y", "M", 1001, None, "mastercard", "credit"),
    ("378282246310005", 201, "A", "Y", "M", 1001, None, "amex", "credit"),
    ("4000050000000007", 201, "A", "Y", "M", 1001, None, "visa", "debit"),
    ("4000060000000006", 201, "A", "Y", "M", 1001, None, "visa", "prepaid"),
    ("4000000000000101", 402, "D", "Y", "M", 0, Some("do_not_honor"), "visa", "credit"),
    ("4000000000000119", 402, "D", "Y", "M", 0, Some("insufficient_funds"), "visa", "credit"),
    ("4000000000000127", 402, "D", "Y", "M", 0, Some("lost_card"), "visa", "credit"),
    ("4000000000000135", 402, "D", "Y", "M", 0, Some("stolen_card"), "visa", "credit"),
    ("4000000000000143", 402, "D", "Y", "M", 0, Some("expired_card"), "visa", "credit"),
    ("4000000000000150", 502, "E", "U", "P", 0, None, "visa", "credit"),
    ("4000000000000168", 504, "T", "U", "P", 0, None, "visa", "credit"),
    ("4000000000000176", 201, "A", "Y", "M", 500, None, "visa", "credit"),
    ("4000000000000184", 201, "A", "A", "M", 1001, None, "visa", "credit"),
    ("4000000000000192", 201, "A", "Z", "M", 1001, None, "visa", "credit"),
    ("4000000000000200", 201, "A", "N", "M", 1001, None, "visa", "credit"),
    ("4000000000000218", 201, "A", "U", "M", 1001, None, "visa", "credit"),
    ("4000000000000226", 201, "A", "R", "M", 1001, None, "visa", "credit"),
    ("4000000000000234", 201, "A", "Y", "N", 1001, None, "visa", "credit"),
    ("4000000000000242", 201, "A", "Y", "U", 1001, None, "visa", "credit"),
];

async fn every_sandbox_card_as_documented(env: Env) {
    let s = shop(&env).await;
    for &(number, http, status, avs, cvv, approved, decline, brand, funding) in SANDBOX_TABLE {
        let reply = s
            .api
            .post(
                "/v1/transactions",
                &s.key,
                &card_body(&s.merchant, "auth", 1001, number),
            )
            .await;
        assert_eq!(reply.status.as_u16(), http, "{number}: {}", reply.text);
        let t = if http == 201 {
            &reply.body
        } else {
            &reply.body["transaction"]
        };
        assert_transaction_shape(t);
        let a = &t["authorization"];
        assert_eq!(
            (
                a["status"].as_str(),
                a["avs"].as_str(),
                a["cvv"].as_str(),
                a["approvedAmount"].as_i64()
            ),
            (Some(status), Some(avs), Some(cvv), Some(approved)),
            "{number}"
        );
        assert_eq!(a["partial"], approved > 0 && approved < 1001, "{number}");
        assert_eq!(
            reply.body["error"]["declineCode"].as_str(),
            decline,
            "{number}"
        );
        assert_eq!(a["declineCode"].as_str(), decline, "on the transaction too");
        assert_eq!(
            (
                t["payment"]["brand"].as_str(),
                t["payment"]["type"].as_str()
            ),
            (Some(brand), Some(funding))
        );
        assert_eq!(t["payment"]["bin"], &number[..6]);
        assert_eq!(t["payment"]["last4"], &number[number.len() - 4..]);
        assert_eq!(
            t["fee"],
            if http == 201 { 30 } else { 0 },
            "auth fee is the plan's fixed part"
        );
        // Every attempt is a transaction the merchant can look up.
        let fetched = s
            .api
            .get(
                &format!("/v1/transactions/{}", t["id"].as_str().unwrap()),
                &s.key,
            )
            .await;
        assert_eq!(&fetched.body, t, "{number}");
    }
    let timed_out = s.api.get("/v1/transactions?limit=100", &s.key).await;
    let timeout = timed_out.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["authorization"]["status"] == "T")
        .unwrap();
    assert_eq!(timeout["state"], "failed");
    assert!(
        timeout["authorization"]["processorMessage"]
            .as_str()
            .unwrap()
            .contains("reversed")
    );
}

async fn capture_void_and_refund_rules(env: Env) {
    let s = shop(&env).await;
    let post = |body: String| {
        let (api, key) = (s.api.clone(), s.key.clone());
        async move { api.post("/v1/transactions", &key, &body).await }
    };
    let auth = post(card_body(&s.merchant, "auth", 1000, "4111111111111111")).await;
    let auth_id = auth.body["id"].as_str().unwrap().to_owned();
    assert_eq!(auth.body["state"], "authorized");

    let capture = post(follow_up("capture", &auth_id, Some(600))).await;
    assert_eq!(capture.status, StatusCode::CREATED, "{}", capture.text);
    assert_transaction_shape(&capture.body);
    assert_eq!(
        (
            capture.body["type"].as_str(),
            capture.body["amount"].as_i64()
        ),
        (Some("capture"), Some(600))
    );
    assert_eq!(capture.body["transactionId"], auth_id.as_str());
    assert_eq!(capture.body["fee"], 17, "2.9% of 600, rounded half up");
    assert_eq!(capture.body["payment"], auth.body["payment"]);
    let capture_id = capture.body["id"].as_str().unwrap().to_owned();
    let reread = s
        .api
        .get(&format!("/v1/transactions/{auth_id}"), &s.key)
        .await;
    assert_eq!(reread.body["state"], "captured");

    for (body, status) in [
        (follow_up("capture", &auth_id, None), 409),
        (follow_up("void", &auth_id, None), 409),
        (follow_up("refund", &auth_id, None), 409),
        (follow_up("refund", &capture_id, Some(601)), 400),
    ] {
        let reply = post(body.clone()).await;
        assert_eq!(reply.status.as_u16(), status, "{body}: {}", reply.text);
    }
    let first = post(follow_up("refund", &capture_id, Some(200))).await;
    assert_eq!(
        (first.status, first.body["fee"].as_i64()),
        (StatusCode::CREATED, Some(0))
    );
    let too_much = post(follow_up("refund", &capture_id, Some(401))).await;
    assert_eq!(
        (too_much.status, too_much.error_param()),
        (StatusCode::BAD_REQUEST, Some("amount"))
    );
    let rest = post(follow_up("refund", &capture_id, None)).await;
    assert_eq!(
        (rest.status, rest.body["amount"].as_i64()),
        (StatusCode::CREATED, Some(400))
    );
    let captured = s
        .api
        .get(&format!("/v1/transactions/{capture_id}"), &s.key)
        .await;
    assert_eq!(captured.body["refundedAmount"], 600);
    assert_eq!(
        post(follow_up("refund", &capture_id, Some(1))).await.status,
        StatusCode::CONFLICT
    );

    let second = post(card_body(&s.merchant, "auth", 1000, "4111111111111111")).await;
    let second_id = second.body["id"].as_str().unwrap().to_owned();
    let with_amount = post(follow_up("void", &second_id, Some(10))).await;
    assert_eq!(
        (with_amount.status, with_amount.error_param()),
        (StatusCode::BAD_REQUEST, Some("amount"))
    );
    let void = post(follow_up("void", &second_id, None)).await;
    assert_eq!(
        (void.status, void.body["type"].as_str()),
        (StatusCode::CREATED, Some("void"))
    );
    assert_eq!(
        post(follow_up("capture", &second_id, None)).await.status,
        StatusCode::CONFLICT
    );

    let sale = post(card_body(&s.merchant, "sale", 1000, "5555555555554444")).await;
    assert_eq!(
        (
            sale.status,
            sale.body["state"].as_str(),
            sale.body["fee"].as_i64()
        ),
        (StatusCode::CREATED, Some("settled"), Some(59))
    );
    let sale_id = sale.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        post(follow_up("capture", &sale_id, None)).await.status,
        StatusCode::CONFLICT
    );
    assert_eq!(
        post(follow_up("refund", &sale_id, None)).await.status,
        StatusCode::CREATED
    );

    let declined = post(card_body(&s.merchant, "auth", 1000, "4000000000000119")).await;
    let declined_id = declined.body["transaction"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        post(follow_up("capture", &declined_id, None)).await.status,
        StatusCode::CONFLICT
    );

    let capture_list = s
        .api
        .get(
            &format!("/v1/transactions?type=capture&merchantId={}", s.merchant),
            &s.key,
        )
        .await;
    assert_eq!(capture_list.body["data"].as_array().unwrap().len(), 1);
    // By state: the declined auth, and only it.
    let declined = s.api.get("/v1/transactions?state=declined", &s.key).await;
    let declined: Vec<&str> = declined.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(declined, [declined_id.as_str()]);
}

async fn bad_input_names_the_field_and_writes_nothing(env: Env) {
    let s = shop(&env).await;
    let m = &s.merchant;
    let body = |json: &str| json.replace("{m}", m);
    let card = r#""payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230"}"#;
    let cases: Vec<(String, &str)> = vec![
        (
            body(&format!(
                r#"{{"merchantId": "{{m}}", "amount": 100, {card}}}"#
            )),
            "type",
        ),
        (
            body(&format!(
                r#"{{"type": "credit", "merchantId": "{{m}}", "amount": 100, {card}}}"#
            )),
            "type",
        ),
        (
            body(&format!(r#"{{"type": "auth", "amount": 100, {card}}}"#)),
            "merchantId",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "mid_nope", "amount": 100, {card}}}"#
            )),
            "merchantId",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "{{m}}", {card}}}"#
            )),
            "amount",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "{{m}}", "amount": 0, {card}}}"#
            )),
            "amount",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "{{m}}", "amount": -5, {card}}}"#
            )),
            "amount",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "{{m}}", "amount": 100000000, {card}}}"#
            )),
            "amount",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "{{m}}", "amount": 10.5, {card}}}"#
            )),
            "amount",
        ),
        (
            body(r#"{"type": "auth", "merchantId": "{m}", "amount": 100}"#),
            "payment",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": "4111111111111112", "cvv": "123", "expiration": "1230"}}"#,
            ),
            "payment.number",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": "4111111111111111", "cvv": "12", "expiration": "1230"}}"#,
            ),
            "payment.cvv",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1320"}}"#,
            ),
            "payment.expiration",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "0120"}}"#,
            ),
            "payment.expiration",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": "4111111111111111", "cvv": "123"}}"#,
            ),
            "payment.expiration",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": 4111111111111111, "cvv": "123", "expiration": "1230"}}"#,
            ),
            "payment.number",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230", "name": " "}}"#,
            ),
            "payment.name",
        ),
        (
            body(
                r#"{"type": "auth", "merchantId": "{m}", "amount": 100, "payment": {"token": "tkn_01JDX", "name": "Ann"}}"#,
            ),
            "payment",
        ),
        (
            body(&format!(
                r#"{{"type": "auth", "merchantId": "{{m}}", "amount": 100, "transactionId": "txn_1", {card}}}"#
            )),
            "transactionId",
        ),
        (body(r#"{"type": "capture"}"#), "transactionId"),
        (
            body(r#"{"type": "capture", "transactionId": "txn_nope"}"#),
            "transactionId",
        ),
        (
            body(r#"{"type": "refund", "transactionId": "txn_nope", "merchantId": "{m}"}"#),
            "merchantId",
        ),
    ];
    for (json, param) in &cases {
        let reply = s.api.post("/v1/transactions", &s.key, json).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{json}: {}",
            reply.text
        );
        assert_eq!(reply.error_param(), Some(*param), "{json}: {}", reply.text);
        // Whichever number a row sends, valid or not, the answer never repeats it.
        let sent = serde_json::from_str::<serde_json::Value>(json).ok();
        let number = sent.as_ref().and_then(|s| s["payment"]["number"].as_str());
        for number in number.into_iter().chain(["4111111111111111"]) {
            assert!(
                !reply.text.contains(number),
                "a card number sent is never echoed: {}",
                reply.text
            );
        }
    }
    let list = s.api.get("/v1/transactions", &s.key).await;
    assert_eq!(
        list.body["data"],
        serde_json::json!([]),
        "nothing half-written"
    );
    for (query, param) in [
        ("type=credit", "type"),
        ("state=approved", "state"),
        ("createdFrom=yesterday", "createdFrom"),
        ("merchantId=shop", "merchantId"),
        ("limit=0", "limit"),
    ] {
        let reply = s
            .api
            .get(&format!("/v1/transactions?{query}"), &s.key)
            .await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{query}"
        );
    }
}

async fn concurrent_follow_ups_exactly_one_wins(env: Env) {
    let s = shop(&env).await;
    for round in 0..5 {
        let auth = s
            .api
            .post(
                "/v1/transactions",
                &s.key,
                &card_body(&s.merchant, "auth", 1000, "4111111111111111"),
            )
            .await;
        let id = auth.body["id"].as_str().unwrap();
        let second = if round % 2 == 0 { "capture" } else { "void" };
        let (first_body, second_body) =
            (follow_up("capture", id, None), follow_up(second, id, None));
        let (a, b) = tokio::join!(
            s.api.post("/v1/transactions", &s.key, &first_body),
            s.api.post("/v1/transactions", &s.key, &second_body),
        );
        let mut statuses = [a.status.as_u16(), b.status.as_u16()];
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [201, 409],
            "round {round}: {} / {}",
            a.text,
            b.text
        );
    }
}

async fn card_data_is_never_stored_or_logged(env: Env) {
    let mut s = shop(&env).await;
    let approved = s
        .api
        .post(
            "/v1/transactions",
            &s.key,
            &card_body(&s.merchant, "sale", 1234, "4111111111111111"),
        )
        .await;
    assert_eq!(approved.status, StatusCode::CREATED);
    let declined = s
        .api
        .post(
            "/v1/transactions",
            &s.key,
            &card_body(&s.merchant, "auth", 1234, "4000000000000119"),
        )
        .await;
    assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
    assert!(s.server.terminate().success());
    let log = s.server.output();
    let dump = env.dump().await;
    assert!(
        contains(&dump, b"411111") && contains(&dump, b"transaction.created"),
        "the dump holds the masked card and the events"
    );
    // Full card numbers are distinctive enough to search for; the CVV and the expiration have
    // no column to be stored in (see the migrations), and four digits would match by chance.
    for secret in ["4111111111111111", "4000000000000119", CARDHOLDER] {
        assert!(!log.contains(secret), "{secret} in the server log");
        assert!(
            !contains(&dump, secret.as_bytes()),
            "{secret} in the database"
        );
    }
    // The CVV (987) and the expiration (1230) are short enough to turn up inside an id or a
    // timestamp by chance: no field may hold them, and neither the number nor the expiration
    // is a field of the answer (`authorization.cvv` is the one-letter result, not the CVV).
    for response in [&approved, &declined] {
        for sent in ["4111111111111111", CARDHOLDER] {
            assert!(!response.text.contains(sent), "{}", response.text);
        }
        let mut strings = Vec::new();
        walk(&response.body, &mut strings);
        for (key, value) in strings {
            assert!(
                !matches!(key, "number" | "expiration"),
                "{key} echoed in {}",
                response.text
            );
            let echoed = match value {
                Value::String(text) if matches!(key, "message" | "processorMessage") => {
                    text.contains("987") || text.contains("1230")
                }
                Value::String(text) => text == "987" || text == "1230",
                Value::Number(n) => n.as_i64().is_some_and(|n| n == 987 || n == 1230),
                _ => false,
            };
            assert!(!echoed, "{key} holds a card field in {}", response.text);
        }
    }
}

/// Every key of `value`, at any depth, with the value it holds.
fn walk<'a>(value: &'a Value, out: &mut Vec<(&'a str, &'a Value)>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                out.push((key, inner));
                walk(inner, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
        _ => {}
    }
}

async fn bin_lookup_answers_from_the_table_and_the_iin_ranges(env: Env) {
    let s = shop(&env).await;
    let listed = s.api.get("/v1/bins/400005", &s.key).await;
    assert_eq!(listed.status, StatusCode::OK);
    assert_eq!(
        listed.body,
        serde_json::json!({"bin": "400005", "brand": "visa", "funding": "debit",
            "issuer": "Holdfast Test Bank", "country": "US", "listed": true})
    );
    let unlisted = s.api.get("/v1/bins/510510", &s.key).await;
    assert_eq!(
        (
            unlisted.body["brand"].as_str(),
            unlisted.body["funding"].as_str(),
            unlisted.body["listed"].as_bool()
        ),
        (Some("mastercard"), Some("unknown"), Some(false))
    );
    for bad in ["41111", "4111111", "41111a"] {
        let reply = s.api.get(&format!("/v1/bins/{bad}"), &s.key).await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some("bin")),
            "{bad}"
        );
    }
}

async fn tokens_single_use_and_vault(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, live_private) = env.create_key(&platform.id, "private", "live");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let merchant = m.body["id"].as_str().unwrap();
    let card = r#"{"payment": {"number": "5555555555554444", "cvv": "123", "expiration": "1230"}}"#;
    let pay = |token: &str| {
        format!(
            r#"{{"merchantId": "{merchant}", "type": "sale", "amount": 500, "payment": {{"token": "{token}"}}}}"#
        )
    };

    // A public key creates a single-use token; the private key pays with it, once.
    let single = api.post("/v1/tokens", &platform.public_key, card).await;
    assert_eq!(single.status, StatusCode::CREATED, "{}", single.text);
    assert_eq!(
        (single.body["type"].as_str(), single.body["used"].as_bool()),
        (Some("single_use"), Some(false))
    );
    assert_eq!(
        single.body["card"],
        serde_json::json!({"bin": "555555", "brand": "mastercard", "last4": "4444", "type": "credit"})
    );
    assert!(single.body["expiresOn"].as_str().is_some());
    assert!(!single.text.contains("5555555555554444"));
    assert!(
        single.body.get("metadata").is_none(),
        "a public key never sees metadata"
    );
    let token = single.body["id"].as_str().unwrap().to_owned();
    let paid = api.post("/v1/transactions", key, &pay(&token)).await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(
        paid.body["authorization"]["cvv"], "P",
        "no CVV is kept with a token"
    );
    assert_eq!(paid.body["payment"]["last4"], "4444");
    let again = api.post("/v1/transactions", key, &pay(&token)).await;
    assert_eq!(
        (again.status, again.error_param()),
        (StatusCode::BAD_REQUEST, Some("payment.token"))
    );
    let read = api.get(&format!("/v1/tokens/{token}"), key).await;
    assert_eq!(read.body["used"], true);
    assert_eq!(
        api.get(&format!("/v1/tokens/{token}"), &platform.public_key)
            .await
            .status,
        StatusCode::FORBIDDEN
    );

    // Vault tokens: private keys only, used any number of times.
    let vault_body = r#"{"type": "vault", "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}"#;
    assert_eq!(
        api.post("/v1/tokens", &platform.public_key, vault_body)
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    let vault = api.post("/v1/tokens", key, vault_body).await;
    assert_eq!(
        (vault.status, vault.body["expiresOn"].is_null()),
        (StatusCode::CREATED, true)
    );
    assert_eq!(vault.body["metadata"], serde_json::json!({}));
    // Metadata is kept on vault tokens only: a single-use token's payment carries its own, and a
    // public key (which makes no vault token) sets none.
    let labelled = r#"{"type": "vault", "payment": {"number": "4111111111111111", "expiration": "1230"}, "metadata": {"customer": "cus_42"}}"#;
    let kept = api.post("/v1/tokens", key, labelled).await;
    assert_eq!(kept.status, StatusCode::CREATED, "{}", kept.text);
    assert_eq!(
        kept.body["metadata"],
        serde_json::json!({"customer": "cus_42"})
    );
    let read = api
        .get(
            &format!("/v1/tokens/{}", kept.body["id"].as_str().unwrap()),
            key,
        )
        .await;
    assert_eq!(
        read.body["metadata"],
        serde_json::json!({"customer": "cus_42"})
    );
    let single_labelled = r#"{"payment": {"number": "4111111111111111", "expiration": "1230"}, "metadata": {"customer": "cus_42"}}"#;
    for (who, body, status) in [
        (key.as_str(), single_labelled, StatusCode::BAD_REQUEST),
        (
            platform.public_key.as_str(),
            single_labelled,
            StatusCode::BAD_REQUEST,
        ),
        (
            platform.public_key.as_str(),
            labelled,
            StatusCode::FORBIDDEN,
        ),
    ] {
        let reply = api.post("/v1/tokens", who, body).await;
        assert_eq!(reply.status, status, "{body}: {}", reply.text);
        if status == StatusCode::BAD_REQUEST {
            assert_eq!(reply.error_param(), Some("metadata"));
        }
    }
    let vault_id = vault.body["id"].as_str().unwrap().to_owned();
    let mut paid_by_vault = Vec::new();
    for _ in 0..2 {
        let paid = api.post("/v1/transactions", key, &pay(&vault_id)).await;
        assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
        paid_by_vault.push(paid.body["id"].as_str().unwrap().to_owned());
    }
    // Another mode does not know the token: a live vault token cannot pay in test mode (where
    // the merchant and its plan are good, so the payment gets as far as the token).
    let live_vault = api.post("/v1/tokens", &live_private, vault_body).await;
    assert_eq!(
        live_vault.status,
        StatusCode::CREATED,
        "{}",
        live_vault.text
    );
    let reply = api
        .post(
            "/v1/transactions",
            key,
            &pay(live_vault.body["id"].as_str().unwrap()),
        )
        .await;
    assert_eq!(
        (reply.status, reply.error_param()),
        (StatusCode::BAD_REQUEST, Some("payment.token")),
        "{}",
        reply.text
    );
    let both = format!(
        r#"{{"merchantId": "{merchant}", "type": "sale", "amount": 500, "payment": {{"token": "{vault_id}", "number": "4111111111111111"}}}}"#
    );
    let reply = api.post("/v1/transactions", key, &both).await;
    assert_eq!(
        (reply.status, reply.error_param()),
        (StatusCode::BAD_REQUEST, Some("payment"))
    );
    // Deleted (a customer's saved card removed on request), a vault token is gone with its card:
    // not found, and a payment with it is refused like one with a token never made. Another
    // mode cannot delete it.
    let path = format!("/v1/tokens/{vault_id}");
    assert_eq!(
        api.delete(&path, &live_private).await.status,
        StatusCode::NOT_FOUND
    );
    let deleted = api.delete(&path, key).await;
    assert_eq!(
        (
            deleted.status,
            deleted.body["id"].as_str(),
            deleted.body["deleted"].as_bool()
        ),
        (StatusCode::OK, Some(vault_id.as_str()), Some(true)),
        "{}",
        deleted.text
    );
    // The payments it made keep their masked card.
    for id in &paid_by_vault {
        let paid = api.get(&format!("/v1/transactions/{id}"), key).await;
        assert_eq!(
            (paid.status, paid.body["payment"]["last4"].as_str()),
            (StatusCode::OK, Some("1111")),
            "{}",
            paid.text
        );
    }
    assert_eq!(api.get(&path, key).await.status, StatusCode::NOT_FOUND);
    assert_eq!(api.delete(&path, key).await.status, StatusCode::NOT_FOUND);
    let reply = api.post("/v1/transactions", key, &pay(&vault_id)).await;
    assert_eq!(
        (reply.status, reply.error_param()),
        (StatusCode::BAD_REQUEST, Some("payment.token")),
        "{}",
        reply.text
    );
    let reply = api
        .post("/v1/tokens", key, r#"{"type": "forever", "payment": {}}"#)
        .await;
    assert_eq!(
        (reply.status, reply.error_param()),
        (StatusCode::BAD_REQUEST, Some("type"))
    );
    let reply = api
        .post(
            "/v1/tokens",
            &platform.public_key,
            r#"{"payment": {"number": "4111111111111112", "cvv": "123", "expiration": "1230"}}"#,
        )
        .await;
    assert_eq!(
        (reply.status, reply.error_param()),
        (StatusCode::BAD_REQUEST, Some("payment.number"))
    );
    // The CVV is never kept, so a token needs none; one that is sent must still be well formed.
    // A token is made from card fields only.
    for (body, status, param) in [
        (
            r#"{"type": "vault", "payment": {"number": "4111111111111111", "expiration": "1230"}}"#,
            StatusCode::CREATED,
            None,
        ),
        (
            r#"{"payment": {"number": "4111111111111111", "cvv": "12", "expiration": "1230"}}"#,
            StatusCode::BAD_REQUEST,
            Some("payment.cvv"),
        ),
        (
            r#"{"payment": {"number": "4111111111111111", "expiration": "0120"}}"#,
            StatusCode::BAD_REQUEST,
            Some("payment.expiration"),
        ),
        (
            r#"{"payment": {"token": "tkn_01M82YY26BY9B4F89B1R2SKMPB", "number": "4111111111111111", "expiration": "1230"}}"#,
            StatusCode::BAD_REQUEST,
            Some("payment.token"),
        ),
        (
            r#"{"type": "vault"}"#,
            StatusCode::BAD_REQUEST,
            Some("payment"),
        ),
    ] {
        let reply = api.post("/v1/tokens", key, body).await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (status, param),
            "{body}"
        );
    }

    // The card number is sealed: it is nowhere in the database.
    let dump = env.dump().await;
    assert!(contains(&dump, b"555555") && !contains(&dump, b"5555555555554444"));
    assert!(!contains(&dump, b"4111111111111111"));
}

/// A process killed mid-call leaves a pending auth; the workers of the next process reverse it
/// and record it as failed (status `T`) with its event, once it is older than
/// `HOLDFAST_RECONCILE_AFTER_MS`.
async fn a_transaction_left_pending_is_reversed_and_recorded(env: Env) {
    let platform = env.create_platform("Acme");
    let key = platform.private_key.clone();
    let slow = [
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "30000"),
        ("HOLDFAST_RECONCILE_AFTER_MS", "60000"),
    ];
    let mut server = env.serve_with(&slow);
    let api = Api::new(&server);
    let m = api.post("/v1/merchants", &key, r#"{"name": "Shop"}"#).await;
    let merchant = m.body["id"].as_str().unwrap().to_owned();
    let body = format!(
        r#"{{"merchantId": "{merchant}", "type": "auth", "amount": 1000, "payment": {{"number": "4000000000000168", "cvv": "123", "expiration": "1230"}}}}"#
    );
    // The processor call hangs; the process is killed under it.
    let url = server.url("/v1/transactions");
    let hanging = tokio::spawn(async move {
        let _ = reqwest::Client::new()
            .post(url)
            .header("x-api-key", key)
            .body(body)
            .send()
            .await;
    });
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    server.stop_with("KILL");
    hanging.abort();
    let key = &platform.private_key;
    let list = |api: &Api| {
        let api = api.clone();
        let key = key.clone();
        async move { api.get("/v1/transactions", &key).await.body["data"][0].clone() }
    };
    let fast = [
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "200"),
        ("HOLDFAST_RECONCILE_AFTER_MS", "1000"),
        ("HOLDFAST_DB_COMPLETION_WAIT_MS", "500"),
    ];
    let server = env.serve_with(&fast);
    let api = Api::new(&server);
    let left = list(&api).await;
    assert_eq!(left["state"], "pending", "the crash left a trace: {left}");
    assert_eq!(
        left["authorization"]["status"], "P",
        "a pending payment does not read as failed: {left}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let done = loop {
        let now = list(&api).await;
        if now["state"] != "pending" {
            break now;
        }
        assert!(std::time::Instant::now() < deadline, "still pending: {now}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(
        (
            done["state"].as_str(),
            done["authorization"]["status"].as_str()
        ),
        (Some("failed"), Some("T"))
    );
    let dump = env.dump().await;
    assert!(contains(&dump, b"left pending when the process stopped"));
}

/// SQLite: another process holds the write lock past the busy timeout (5 s) exactly when a
/// payment the processor has answered is completed. The completion waits its turn and is
/// recorded; it used to answer 500 and leave the payment pending for the reconciler.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_completion_waits_out_another_process_lock() {
    let env = Env::new(holdfast_e2e::Backend::Sqlite)
        .await
        .expect("sqlite");
    let platform = env.create_platform("Acme");
    let key = platform.private_key.clone();
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "1500"),
    ]);
    let api = Api::new(&server);
    let m = api.post("/v1/merchants", &key, r#"{"name": "Shop"}"#).await;
    let merchant = m.body["id"].as_str().unwrap().to_owned();
    // The timeout card: the pending row is written at once, the completion after 1.5 s.
    let body = card_body(&merchant, "auth", 1000, "4000000000000168");
    let paying = {
        let (api, key) = (api.clone(), key.clone());
        tokio::spawn(async move { api.post("/v1/transactions", &key, &body).await })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let path = env
        .database_url()
        .trim_start_matches("sqlite://")
        .to_owned();
    let mut holder = std::process::Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys, time\n\
             c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
             c.execute('BEGIN IMMEDIATE')\n\
             print('locked', flush=True)\n\
             time.sleep(7)\n\
             c.execute('COMMIT')",
            &path,
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");
    let paid = paying.await.unwrap();
    assert!(holder.wait().unwrap().success());
    assert_eq!(paid.status, StatusCode::GATEWAY_TIMEOUT, "{}", paid.text);
    let id = paid.body["transaction"]["id"].as_str().unwrap();
    let txn = api.get(&format!("/v1/transactions/{id}"), &key).await;
    assert_eq!(txn.body["state"], "failed", "{}", txn.text);
}

/// Issue 8: the sandbox approves by test card and moves no money, so live mode never reaches
/// it: no live sandbox connection can be made, and one that exists (made before this rule, here
/// written by SQL) can neither be named by a live plan nor carry a live payment.
async fn live_mode_never_routes_to_the_sandbox(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let server = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "false")]);
    let api = Api::new(&server);
    let made = api
        .post(
            "/v1/processor-connections",
            &live,
            r#"{"name": "Live", "kind": "sandbox"}"#,
        )
        .await;
    assert_eq!(
        (made.status, made.error_param()),
        (StatusCode::BAD_REQUEST, Some("kind")),
        "{}",
        made.text
    );

    let (connection, plan) = (
        "midCon_01M85QKETCDS2SN01TJM3XNWR8",
        "plan_01M85QKETCDS2SN01TJM3XNWR9",
    );
    let pfm = &platform.id;
    env.execute_sql(&format!(
        "INSERT INTO processor_connections (id, platform_id, mode, name, kind, created_on)
           SELECT '{connection}', platform_id, 'live', 'Old live sandbox', kind, created_on
             FROM processor_connections WHERE platform_id = '{pfm}' AND mode = 'test';
         INSERT INTO plans (id, platform_id, mode, name, fee_basis_points, fee_fixed,
                            default_connection_id, is_default, created_on)
           SELECT '{plan}', platform_id, 'live', 'Old live plan', fee_basis_points, fee_fixed,
                  '{connection}', is_default, created_on
             FROM plans WHERE platform_id = '{pfm}' AND mode = 'test' AND is_default;"
    ))
    .await;
    let listed = api.get("/v1/plans", &live).await;
    assert_eq!(
        listed.body["data"][0]["id"], plan,
        "the old plan is there: {}",
        listed.text
    );

    let plan_body = format!(
        r#"{{"name": "Gold", "fee": {{"basisPoints": 200, "fixed": 0}}, "defaultConnectionId": "{connection}"}}"#
    );
    let named = api.post("/v1/plans", &live, &plan_body).await;
    assert_eq!(
        (named.status, named.error_param()),
        (StatusCode::BAD_REQUEST, Some("defaultConnectionId")),
        "{}",
        named.text
    );

    let shop = api
        .post("/v1/merchants", &live, r#"{"name": "Live shop"}"#)
        .await;
    let body = card_body(
        shop.body["id"].as_str().unwrap(),
        "sale",
        1000,
        "4111111111111111",
    );
    let paid = api.post("/v1/transactions", &live, &body).await;
    assert_eq!(
        (paid.status, paid.error_param()),
        (StatusCode::BAD_REQUEST, Some("merchantId")),
        "{}",
        paid.text
    );
    let ledger = api.get("/v1/transactions", &live).await;
    assert_eq!(
        ledger.body["data"],
        serde_json::json!([]),
        "nothing was written"
    );
}

/// A plan names only connections of its own platform and mode, each refusal naming the field
/// and writing nothing; at most 4 fallbacks; one default plan per mode.
async fn plans_name_only_usable_connections(env: Env) {
    let platform = env.create_platform("Acme");
    let other = env.create_platform("Other");
    let server = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "false")]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let (own, _) = holdfast_e2e::routes::test_plan(&api, key).await;
    let (theirs, _) = holdfast_e2e::routes::test_plan(&api, &other.private_key).await;
    let plan = |extra: &str| {
        format!(
            r#"{{"name": "Gold", "fee": {{"basisPoints": 200, "fixed": 0}}, "defaultConnectionId": "{own}"{extra}}}"#
        )
    };
    let count = async || {
        api.get("/v1/plans?limit=100", key).await.body["data"]
            .as_array()
            .unwrap()
            .len()
    };
    let before = count().await;
    let five = format!(r#", "fallbacks": ["{own}", "{own}", "{own}", "{own}", "{own}"]"#);
    let cases: [(String, StatusCode, &str); 6] = [
        (five, StatusCode::BAD_REQUEST, "fallbacks"),
        (
            format!(r#", "brandRoutes": {{"visa": "{theirs}"}}"#),
            StatusCode::BAD_REQUEST,
            "brandRoutes.visa",
        ),
        (
            format!(r#", "fallbacks": ["{own}", "{theirs}"]"#),
            StatusCode::BAD_REQUEST,
            "fallbacks.1",
        ),
        (
            r#", "fallbacks": ["midCon_nope"]"#.to_owned(),
            StatusCode::BAD_REQUEST,
            "fallbacks.0",
        ),
        (
            format!(r#", "brandRoutes": {{"nope": "{own}"}}"#),
            StatusCode::BAD_REQUEST,
            "brandRoutes",
        ),
        (
            r#", "default": true"#.to_owned(),
            StatusCode::CONFLICT,
            "default",
        ),
    ];
    for (extra, status, param) in cases {
        let reply = api.post("/v1/plans", key, &plan(&extra)).await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (status, Some(param)),
            "{extra}: {}",
            reply.text
        );
    }
    assert_eq!(count().await, before, "nothing was written");
    let four = format!(
        r#", "brandRoutes": {{"amex": "{own}"}}, "fallbacks": ["{own}", "{own}", "{own}", "{own}"]"#
    );
    let made = api.post("/v1/plans", key, &plan(&four)).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    assert_eq!(made.body["brandRoutes"]["amex"], own.as_str());
    assert_eq!(made.body["fallbacks"].as_array().unwrap().len(), 4);
}

/// A merchant is put only on a plan of its own platform and mode: another platform's plan and a
/// malformed id are refused alike, naming `planId`; its own plan and `null` are taken.
async fn a_merchant_takes_only_a_plan_of_its_platform(env: Env) {
    let platform = env.create_platform("Acme");
    let other = env.create_platform("Other");
    let server = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "false")]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let (_, own) = holdfast_e2e::routes::test_plan(&api, key).await;
    let (_, theirs) = holdfast_e2e::routes::test_plan(&api, &other.private_key).await;
    let made = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let path = format!("/v1/merchants/{}", made.body["id"].as_str().unwrap());
    for refused in [format!(r#""{theirs}""#), r#""plan_x!""#.to_owned()] {
        let reply = api
            .patch(&path, key, &format!(r#"{{"planId": {refused}}}"#))
            .await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some("planId")),
            "{refused}: {}",
            reply.text
        );
    }
    assert!(
        api.get(&path, key).await.body["planId"].is_null(),
        "nothing changed"
    );
    for (plan, want) in [
        (format!(r#""{own}""#), Value::from(own.as_str())),
        ("null".to_owned(), Value::Null),
    ] {
        let reply = api
            .patch(&path, key, &format!(r#"{{"planId": {plan}}}"#))
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        assert_eq!(reply.body["planId"], want);
    }
}

/// A merchant's reference and metadata are kept on the transaction and returned wherever it
/// is: its answer, its read, the list by reference; a follow-up given none takes its
/// original's. Neither may hold a card number, and a refused request writes nothing.
async fn a_merchants_reference_and_metadata_go_with_the_transaction(env: Env) {
    let s = shop(&env).await;
    let post = |body: String| {
        let api = &s.api;
        let key = s.key.clone();
        async move { api.post("/v1/transactions", &key, &body).await }
    };
    let sale = card_body(&s.merchant, "sale", 2500, "4111111111111111").replacen(
        '{',
        r#"{"reference": " order-1042 ", "metadata": {"cart": "c_77", "channel": "web"}, "#,
        1,
    );
    let paid = post(sale).await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(paid.body["reference"], "order-1042", "trimmed");
    assert_eq!(
        paid.body["metadata"],
        serde_json::json!({"cart": "c_77", "channel": "web"})
    );
    let id = paid.body["id"].as_str().unwrap();
    let read = s.api.get(&format!("/v1/transactions/{id}"), &s.key).await;
    assert_eq!(read.body["reference"], "order-1042");
    assert_eq!(read.body["metadata"]["cart"], "c_77");

    // A refund given nothing takes its sale's; one given its own keeps it.
    let refund = post(follow_up("refund", id, Some(500))).await;
    assert_eq!(refund.status, StatusCode::CREATED, "{}", refund.text);
    assert_eq!(refund.body["reference"], "order-1042");
    assert_eq!(refund.body["metadata"]["channel"], "web");
    let own = format!(
        r#"{{"type": "refund", "transactionId": "{id}", "amount": 500, "reference": "rma-9", "metadata": {{"reason": "damaged"}}}}"#
    );
    let own = post(own).await;
    assert_eq!(own.body["reference"], "rma-9");
    assert_eq!(
        own.body["metadata"],
        serde_json::json!({"reason": "damaged"})
    );

    let listed = s
        .api
        .get("/v1/transactions?reference=order-1042", &s.key)
        .await;
    let ids: Vec<&str> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [refund.body["id"].as_str().unwrap(), id],
        "newest first"
    );

    // The page just newer than the sale: its first refund, and more after it.
    let newer = s
        .api
        .get(
            &format!("/v1/transactions?limit=1&endingBefore={id}"),
            &s.key,
        )
        .await;
    assert_eq!(
        newer.body["data"][0]["id"], refund.body["id"],
        "{}",
        newer.text
    );
    assert_eq!(newer.body["hasMore"], true);

    // Without them: no reference, empty metadata.
    let plain = post(card_body(&s.merchant, "auth", 100, "4111111111111111")).await;
    assert_eq!(plain.body["reference"], Value::Null);
    assert_eq!(plain.body["metadata"], serde_json::json!({}));

    let many: serde_json::Map<String, Value> = (0..51)
        .map(|i| (format!("k{i}"), Value::from("v")))
        .collect();
    let refused = [
        (
            r#""reference": "4111 1111 1111 1111""#.to_owned(),
            "reference",
        ),
        (r#""reference": """#.to_owned(), "reference"),
        (
            r#""metadata": {"pan": "5555555555554444"}"#.to_owned(),
            "metadata",
        ),
        (r#""metadata": {"bad key": "v"}"#.to_owned(), "metadata"),
        (r#""metadata": {"k": 5}"#.to_owned(), "metadata.k"),
        (
            format!(r#""metadata": {}"#, Value::Object(many)),
            "metadata",
        ),
    ];
    for (field, param) in refused {
        let body = card_body(&s.merchant, "sale", 700, "4111111111111111").replacen(
            '{',
            &format!("{{{field}, "),
            1,
        );
        let reply = post(body).await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{field}: {}",
            reply.text
        );
        assert!(!reply.text.contains("1111 1111") && !reply.text.contains("5555"));
    }
    let sales = s.api.get("/v1/transactions?type=sale", &s.key).await;
    assert_eq!(
        sales.body["data"].as_array().unwrap().len(),
        1,
        "nothing half-written"
    );
}

on_both_backends!(
    a_merchants_reference_and_metadata_go_with_the_transaction,
    a_merchant_takes_only_a_plan_of_its_platform,
    plans_name_only_usable_connections,
    live_mode_never_routes_to_the_sandbox,
    a_transaction_left_pending_is_reversed_and_recorded,
    tokens_single_use_and_vault,
    bin_lookup_answers_from_the_table_and_the_iin_ranges,
    every_sandbox_card_as_documented,
    capture_void_and_refund_rules,
    bad_input_names_the_field_and_writes_nothing,
    concurrent_follow_ups_exactly_one_wins,
    card_data_is_never_stored_or_logged,
);
