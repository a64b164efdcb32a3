//! Live payments through Adyen, observed from outside: the real binary, a stand-in Adyen that
//! answers in Checkout API v71's shapes and counts what reached it, notifications signed as Adyen
//! signs them, and the events at a real webhook receiver.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]
#![expect(
    clippy::too_many_lines,
    reason = "end-to-end scenarios read top to bottom"
)]

use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use holdfast_e2e::fake_adyen::{
    self, FakeAdyen, HMAC_KEY, NOTIFICATION_PASSWORD, NOTIFICATION_USER, notification_body,
    notification_item,
};
use holdfast_e2e::raw::RawRequest;
use holdfast_e2e::{
    Answer, Api, Env, Receiver, Server, boarded_merchant, on_both_backends, verify_signature,
};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn serving(env: &Env) -> Server {
    env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("HOLDFAST_WEBHOOK_TIMEOUT_MS", "400"),
        ("HOLDFAST_WEBHOOK_BACKOFF_BASE_MS", "10"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
        ("HOLDFAST_ADYEN_ALLOW_LOOPBACK", "true"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "1000"),
        ("HOLDFAST_RECONCILE_AFTER_MS", "60000"),
    ])
}

/// An Adyen connection to `fake` and a plan routing to it (with `fallback` after it), in
/// `key`'s mode: the connection's id and the plan's. In live mode the plan is the default (live
/// starts with none); test mode has the sandbox's, so a merchant is given this one.
async fn adyen_plan(
    api: &Api,
    key: &str,
    fake: &FakeAdyen,
    fallback: Option<&str>,
) -> (String, String) {
    let made = api
        .post(
            "/v1/processor-connections",
            key,
            &fake.connection_body("Adyen"),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let connection = made.body["id"].as_str().unwrap().to_owned();
    let fallbacks: Vec<&str> = fallback.into_iter().collect();
    let plan = json!({
        "name": "Adyen",
        "fee": {"basisPoints": 290, "fixed": 30},
        "defaultConnectionId": connection,
        "fallbacks": fallbacks,
        "default": !key.contains("_test_"),
    });
    let planned = api.post("/v1/plans", key, &plan.to_string()).await;
    assert_eq!(planned.status, StatusCode::CREATED, "{}", planned.text);
    (connection, planned.body["id"].as_str().unwrap().to_owned())
}

/// A test-mode merchant, approved, on plan `plan`.
async fn merchant_on(api: &Api, key: &str, plan: &str) -> String {
    let shop = api.approved_merchant(key).await;
    let moved = api
        .patch(
            &format!("/v1/merchants/{shop}"),
            key,
            &json!({"planId": plan}).to_string(),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.text);
    shop
}

fn card(merchant: &str, kind: &str, amount: i64, number: &str) -> String {
    json!({
        "merchantId": merchant, "type": kind, "amount": amount,
        "payment": {"number": number, "cvv": "737", "expiration": "0330", "name": "Jane Doe"},
    })
    .to_string()
}

fn follow_up(kind: &str, original: &str, amount: Option<i64>) -> String {
    let mut body = json!({"type": kind, "transactionId": original});
    if let Some(amount) = amount {
        body["amount"] = json!(amount);
    }
    body.to_string()
}

/// POSTs a notification body to connection `connection`'s endpoint, with Basic credentials
/// `user:password` when given.
async fn notify(
    server: &Server,
    connection: &str,
    credentials: Option<(&str, &str)>,
    body: String,
) -> (StatusCode, String, reqwest::header::HeaderMap) {
    let mut request = reqwest::Client::new()
        .post(server.url(&format!("/notifications/adyen/{connection}")))
        .header("content-type", "application/json")
        .body(body);
    if let Some((user, password)) = credentials {
        request = request.basic_auth(user, Some(password));
    }
    let reply = request.send().await.unwrap();
    let (status, headers) = (reply.status(), reply.headers().clone());
    (status, reply.text().await.unwrap(), headers)
}

const ADYEN: Option<(&str, &str)> = Some((NOTIFICATION_USER, NOTIFICATION_PASSWORD));

async fn state_of(api: &Api, key: &str, id: &str) -> (String, String, i64) {
    let got = api.get(&format!("/v1/transactions/{id}"), key).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.text);
    (
        got.body["state"].as_str().unwrap().to_owned(),
        got.body["authorization"]["status"]
            .as_str()
            .unwrap()
            .to_owned(),
        got.body["refundedAmount"].as_i64().unwrap(),
    )
}

/// Spec 1 with a real processor: a live platform, its live Adyen connection and plan, a live
/// merchant approved through onboarding; an auth, its capture and a partial refund settled by
/// Adyen's notifications, each event delivered and signed.
async fn a_live_payment_end_to_end(env: Env) {
    let fake = FakeAdyen::start().await;
    let receiver = Receiver::start(Answer::status(200)).await;
    let platform = env.create_platform("Acme");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let server = serving(&env);
    let api = Api::new(&server);
    let hook = api
        .post(
            "/v1/webhooks",
            &live,
            &json!({"endpointUrl": receiver.url, "events": ["transaction.created", "transaction.updated"]})
                .to_string(),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let (connection, _) = adyen_plan(&api, &live, &fake, None).await;
    let shop = boarded_merchant(&env, &api, &live, &platform.id).await;

    let auth = api
        .post(
            "/v1/transactions",
            &live,
            &card(&shop, "auth", 1000, "4111111111111111"),
        )
        .await;
    assert_eq!(auth.status, StatusCode::CREATED, "{}", auth.text);
    let a = &auth.body["authorization"];
    assert_eq!(
        (a["status"].as_str(), a["avs"].as_str(), a["cvv"].as_str()),
        (Some("A"), Some("Y"), Some("M"))
    );
    assert_eq!(auth.body["mode"], "live");
    assert_eq!(auth.body["processor"]["id"], connection.as_str());
    let auth_id = auth.body["id"].as_str().unwrap().to_owned();
    let psp = a["processorTransactionId"].as_str().unwrap().to_owned();
    let sent = fake.seen();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].idempotency_key, auth_id,
        "our transaction id is the key"
    );
    assert_eq!(sent[0].body["additionalData"]["manualCapture"], "true");
    assert_eq!(sent[0].body["reference"], auth_id.as_str());
    assert_eq!(sent[0].traceparent, "", "no trace of our own is started");

    // A client's trace goes on to Adyen under our span: the trace id and flags it sent, the
    // span our answer names as the parent.
    let client_trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let capture = api
        .send_with(
            reqwest::Method::POST,
            "/v1/transactions",
            Some(&live),
            Some(&follow_up("capture", &auth_id, None)),
            &[("traceparent", client_trace)],
        )
        .await;
    assert_eq!(capture.status, StatusCode::CREATED, "{}", capture.text);
    let answered = capture.headers["traceparent"].to_str().unwrap();
    let our_span = answered.split('-').nth(2).unwrap();
    assert_eq!(
        fake.seen()[1].traceparent,
        format!("00-4bf92f3577b34da6a3ce929d0e0e4736-{our_span}-01")
    );
    assert_ne!(our_span, "00f067aa0ba902b7");
    assert_eq!(
        (
            capture.body["state"].as_str(),
            capture.body["authorization"]["status"].as_str()
        ),
        (Some("processing"), Some("S")),
        "Adyen took it and decides later"
    );
    let capture_id = capture.body["id"].as_str().unwrap().to_owned();
    assert_eq!(state_of(&api, &live, &auth_id).await.0, "closing");
    assert_eq!(fake.paths()[1], format!("/payments/{psp}/captures"));
    let refund_early = api
        .post(
            "/v1/transactions",
            &live,
            &follow_up("refund", &capture_id, Some(300)),
        )
        .await;
    assert_eq!(
        refund_early.status,
        StatusCode::CONFLICT,
        "{}",
        refund_early.text
    );

    let captured = notification_item(
        "CAPTURE",
        true,
        "8815000000000999",
        Some(&psp),
        &capture_id,
        1000,
        Some(HMAC_KEY),
    );
    let (status, text, _) = notify(
        &server,
        &connection,
        ADYEN,
        notification_body(true, std::slice::from_ref(&captured)),
    )
    .await;
    assert_eq!((status, text.as_str()), (StatusCode::OK, "[accepted]"));
    assert_eq!(state_of(&api, &live, &capture_id).await.0, "settled");
    assert_eq!(state_of(&api, &live, &auth_id).await.0, "captured");
    // Adyen repeats an item until it is accepted: once is enough.
    let (status, _, _) = notify(
        &server,
        &connection,
        ADYEN,
        notification_body(true, &[captured]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);

    let refund = api
        .post(
            "/v1/transactions",
            &live,
            &follow_up("refund", &capture_id, Some(300)),
        )
        .await;
    assert_eq!(refund.status, StatusCode::CREATED, "{}", refund.text);
    assert_eq!(refund.body["state"], "processing");
    let refund_id = refund.body["id"].as_str().unwrap().to_owned();
    assert_eq!(
        fake.paths()[2],
        format!("/payments/{psp}/refunds"),
        "a refund names the payment"
    );
    assert_eq!(state_of(&api, &live, &capture_id).await.2, 300, "reserved");
    let refunded = notification_item(
        "REFUND",
        true,
        "8815000000000998",
        Some(&psp),
        &refund_id,
        300,
        Some(HMAC_KEY),
    );
    let (status, _, _) = notify(
        &server,
        &connection,
        ADYEN,
        notification_body(true, &[refunded]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(state_of(&api, &live, &refund_id).await.0, "settled");

    // Three creations and two updates, each at the receiver, signed.
    let delivered = receiver.wait_for(5, Duration::from_secs(10)).await;
    let mut seen: Vec<(String, String, String)> = delivered
        .iter()
        .map(|r| {
            verify_signature(hook.body["secret"].as_str().unwrap(), r).unwrap();
            let body = r.json();
            (
                body["eventType"].as_str().unwrap().to_owned(),
                body["data"]["id"].as_str().unwrap().to_owned(),
                body["data"]["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    seen.sort();
    let mut expected = vec![
        (
            "transaction.created".to_owned(),
            auth_id.clone(),
            "authorized".to_owned(),
        ),
        (
            "transaction.created".to_owned(),
            capture_id.clone(),
            "processing".to_owned(),
        ),
        (
            "transaction.created".to_owned(),
            refund_id.clone(),
            "processing".to_owned(),
        ),
        (
            "transaction.updated".to_owned(),
            capture_id.clone(),
            "settled".to_owned(),
        ),
        (
            "transaction.updated".to_owned(),
            refund_id.clone(),
            "settled".to_owned(),
        ),
    ];
    expected.sort();
    assert_eq!(seen, expected);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 5, "the repeat sent nothing");

    // The capture and the refund Adyen decided later posted their journals when they settled
    // (the repeated item posted nothing twice): the capture's charge, with its auth's fee,
    // and the refund; the auth moved nothing, and the books add up.
    let kinds = env
        .query_text(&format!(
            "SELECT source_id, kind FROM ledger_journals WHERE source_id IN ('{auth_id}', '{capture_id}', '{refund_id}') ORDER BY kind"
        ))
        .await;
    let some = |s: &str| Some(s.to_owned());
    assert_eq!(
        kinds,
        [
            vec![some(&capture_id), some("charge")],
            vec![some(&refund_id), some("refund")],
        ]
    );
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));
}

/// A refused capture reopens its auth; a refund that fails after Adyen confirmed it gives its
/// amount back; out of order, the later decision of two stands only where the rules say.
async fn failures_reported_later_undo_what_they_reserved(env: Env) {
    let fake = FakeAdyen::start().await;
    let platform = env.create_platform("Acme");
    let (_, key) = env.create_key(&platform.id, "private", "test");
    let server = serving(&env);
    let api = Api::new(&server);
    let (connection, plan) = adyen_plan(&api, &key, &fake, None).await;
    let shop = merchant_on(&api, &key, &plan).await;
    let pay = async |kind: &str| {
        let paid = api
            .post(
                "/v1/transactions",
                &key,
                &card(&shop, kind, 1000, "4111111111111111"),
            )
            .await;
        assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
        (
            paid.body["id"].as_str().unwrap().to_owned(),
            paid.body["authorization"]["processorTransactionId"]
                .as_str()
                .unwrap()
                .to_owned(),
        )
    };
    let send = async |items: Vec<Value>| {
        let (status, text, _) = notify(
            &server,
            &connection,
            ADYEN,
            notification_body(false, &items),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{text}");
    };

    // A capture Adyen refuses: the auth may be captured again.
    let (auth, psp) = pay("auth").await;
    let capture = api
        .post("/v1/transactions", &key, &follow_up("capture", &auth, None))
        .await;
    let capture = capture.body["id"].as_str().unwrap().to_owned();
    send(vec![notification_item(
        "CAPTURE",
        false,
        "1",
        Some(&psp),
        &capture,
        1000,
        Some(HMAC_KEY),
    )])
    .await;
    assert_eq!(state_of(&api, &key, &capture).await.0, "failed");
    assert_eq!(state_of(&api, &key, &auth).await.0, "authorized");

    // Captured again, confirmed, then failed by the scheme: the auth is open again, and what
    // the capture's charge posted (with the auth's fee) is reversed with it.
    let again = api
        .post("/v1/transactions", &key, &follow_up("capture", &auth, None))
        .await;
    let again = again.body["id"].as_str().unwrap().to_owned();
    for (code, reference) in [("CAPTURE", "71"), ("CAPTURE_FAILED", "72")] {
        send(vec![notification_item(
            code,
            true,
            reference,
            Some(&psp),
            &again,
            1000,
            Some(HMAC_KEY),
        )])
        .await;
        if code == "CAPTURE" {
            // Settled at once (the plan's delay made none), so the reversal takes the net
            // back out of available.
            env.execute_sql("UPDATE plans SET settlement_delay_days = 0")
                .await;
            assert_eq!(env.cli_json(&["ledger", "settle"])["transactions"], 1);
        }
    }
    assert_eq!(state_of(&api, &key, &again).await.0, "failed");
    assert_eq!(state_of(&api, &key, &auth).await.0, "authorized");
    let journals = |source: String| {
        let env = &env;
        async move {
            env.query_text(&format!(
                "SELECT kind FROM ledger_journals WHERE source_id = '{source}' ORDER BY kind"
            ))
            .await
            .into_iter()
            .map(|row| row[0].clone().unwrap())
            .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        journals(again.clone()).await,
        ["charge", "reversal", "settlement"]
    );
    let reversal = env
        .query_text(&format!(
            "SELECT CAST(r.merchant_pending AS TEXT), CAST(r.merchant_available + c.merchant_pending AS TEXT)
               FROM ledger_journals r JOIN ledger_journals c
                 ON c.source_id = r.source_id AND c.kind = 'charge'
              WHERE r.source_id = '{again}' AND r.kind = 'reversal'"
        ))
        .await;
    assert_eq!(
        reversal,
        [[Some("0".to_owned()), Some("0".to_owned())]],
        "the settled net is taken back from available, none from pending"
    );
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));

    // A sale's refund: REFUND_FAILED first, then the REFUND it contradicts: failed stands.
    let (sale, psp) = pay("sale").await;
    let refund = api
        .post(
            "/v1/transactions",
            &key,
            &follow_up("refund", &sale, Some(400)),
        )
        .await;
    let refund = refund.body["id"].as_str().unwrap().to_owned();
    assert_eq!(state_of(&api, &key, &sale).await.2, 400);
    send(vec![notification_item(
        "REFUND_FAILED",
        true,
        "2",
        Some(&psp),
        &refund,
        400,
        Some(HMAC_KEY),
    )])
    .await;
    assert_eq!(state_of(&api, &key, &refund).await.0, "failed");
    assert_eq!(
        state_of(&api, &key, &sale).await.2,
        0,
        "the amount is refundable again"
    );
    send(vec![notification_item(
        "REFUND",
        true,
        "3",
        Some(&psp),
        &refund,
        400,
        Some(HMAC_KEY),
    )])
    .await;
    assert_eq!(state_of(&api, &key, &refund).await.0, "failed");

    // A refund confirmed, then failed by the scheme: failed, and given back.
    let refund = api
        .post(
            "/v1/transactions",
            &key,
            &follow_up("refund", &sale, Some(500)),
        )
        .await;
    let refund = refund.body["id"].as_str().unwrap().to_owned();
    send(vec![notification_item(
        "REFUND",
        true,
        "4",
        Some(&psp),
        &refund,
        500,
        Some(HMAC_KEY),
    )])
    .await;
    assert_eq!(state_of(&api, &key, &refund).await.0, "settled");
    send(vec![notification_item(
        "REFUND_FAILED",
        true,
        "5",
        Some(&psp),
        &refund,
        500,
        Some(HMAC_KEY),
    )])
    .await;
    assert_eq!(state_of(&api, &key, &refund).await.0, "failed");
    assert_eq!(state_of(&api, &key, &sale).await.2, 0);
    assert_eq!(journals(refund.clone()).await, ["refund", "reversal"]);
    let books = env.cli_json(&["ledger", "verify"]);
    assert_eq!(books["problems"], json!([]), "{books}");

    // Items for nothing of ours, and codes Holdfast does not apply: kept, accepted.
    send(vec![
        notification_item(
            "CAPTURE",
            true,
            "6",
            None,
            "txn_unknown0000",
            1,
            Some(HMAC_KEY),
        ),
        notification_item(
            "AUTHORISATION",
            true,
            &psp,
            None,
            &sale,
            1000,
            Some(HMAC_KEY),
        ),
        notification_item(
            "CHARGEBACK",
            true,
            "7",
            Some(&psp),
            &sale,
            1000,
            Some(HMAC_KEY),
        ),
    ])
    .await;
    let kept = env
        .query_text("SELECT outcome FROM processor_notices ORDER BY id")
        .await
        .into_iter()
        .map(|row| row[0].clone().unwrap())
        .collect::<Vec<_>>();
    assert_eq!(
        kept,
        [
            "applied",
            "applied",
            "applied",
            "applied",
            "already_decided",
            "applied",
            "applied",
            "unknown_reference",
            "not_applied",
            "not_applied"
        ],
        "the capture confirmed then failed applies twice; REFUND after REFUND_FAILED is kept, already decided"
    );
}

/// A notification request that must be refused: why, to which connection, with which
/// credentials, and its body.
type Refusal<'a> = (&'a str, String, Option<(&'a str, &'a str)>, String);

/// What is not the connection's is refused with 401 and changes nothing; a body that is not a
/// notification is 400; an item naming a payment still being recorded asks for a retry.
async fn notifications_refuse_what_is_not_the_connections(env: Env) {
    let fake = FakeAdyen::start().await;
    let platform = env.create_platform("Acme");
    let other = env.create_platform("Other");
    let (_, key) = env.create_key(&platform.id, "private", "test");
    let (_, other_key) = env.create_key(&other.id, "private", "test");
    let server = serving(&env);
    let api = Api::new(&server);
    let (connection, plan) = adyen_plan(&api, &key, &fake, None).await;
    let other_connection = api
        .post("/v1/processor-connections", &other_key, &json!({"name": "Other", "kind": "adyen", "adyen": {
            "merchantAccount": fake_adyen::MERCHANT_ACCOUNT, "checkoutUrl": fake.url, "apiKey": fake_adyen::API_KEY,
            "hmacKey": "00".repeat(32), "notificationUsername": NOTIFICATION_USER, "notificationPassword": "another-password"}}).to_string())
        .await;
    let other_connection = other_connection.body["id"].as_str().unwrap().to_owned();
    let shop = merchant_on(&api, &key, &plan).await;
    let auth = api
        .post(
            "/v1/transactions",
            &key,
            &card(&shop, "auth", 1000, "4111111111111111"),
        )
        .await;
    let auth_id = auth.body["id"].as_str().unwrap().to_owned();
    let psp = auth.body["authorization"]["processorTransactionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let capture = api
        .post(
            "/v1/transactions",
            &key,
            &follow_up("capture", &auth_id, None),
        )
        .await;
    let capture_id = capture.body["id"].as_str().unwrap().to_owned();
    let signed = notification_item(
        "CAPTURE",
        true,
        "9",
        Some(&psp),
        &capture_id,
        1000,
        Some(HMAC_KEY),
    );
    let mut forged = signed.clone();
    forged["amount"]["value"] = json!(1);
    let unsigned = notification_item("CAPTURE", true, "9", Some(&psp), &capture_id, 1000, None);
    let wrong_key = notification_item(
        "CAPTURE",
        true,
        "9",
        Some(&psp),
        &capture_id,
        1000,
        Some(&"00".repeat(32)),
    );

    let refusals: Vec<Refusal> = vec![
        (
            "no credentials",
            connection.clone(),
            None,
            notification_body(false, std::slice::from_ref(&signed)),
        ),
        (
            "a wrong password",
            connection.clone(),
            Some((NOTIFICATION_USER, "wrong-password")),
            notification_body(false, std::slice::from_ref(&signed)),
        ),
        (
            "a wrong user",
            connection.clone(),
            Some(("someone", NOTIFICATION_PASSWORD)),
            notification_body(false, std::slice::from_ref(&signed)),
        ),
        (
            "a forged item",
            connection.clone(),
            ADYEN,
            notification_body(false, &[signed.clone(), forged]),
        ),
        (
            "an unsigned item",
            connection.clone(),
            ADYEN,
            notification_body(false, &[unsigned]),
        ),
        (
            "another key's signature",
            connection.clone(),
            ADYEN,
            notification_body(false, &[wrong_key]),
        ),
        (
            "the live environment's batch",
            connection.clone(),
            ADYEN,
            notification_body(true, std::slice::from_ref(&signed)),
        ),
        (
            "another platform's connection",
            other_connection.clone(),
            ADYEN,
            notification_body(false, std::slice::from_ref(&signed)),
        ),
        (
            "an unknown connection",
            "midCon_nothing".to_owned(),
            ADYEN,
            notification_body(false, std::slice::from_ref(&signed)),
        ),
        (
            "a malformed connection id",
            "x'--".to_owned(),
            ADYEN,
            notification_body(false, std::slice::from_ref(&signed)),
        ),
    ];
    // The bodies sent are Adyen's shape: the check that says so can say otherwise.
    assert!(fake_adyen::conforms("CAPTURE", r#"{"live": false}"#).is_err());
    assert!(fake_adyen::conforms("CAPTURE", r#"{"live": "false", "extra": 1}"#).is_err());
    for (what, target, credentials, body) in refusals {
        let (status, text, headers) = notify(&server, &target, credentials, body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {text}");
        assert!(headers.get("www-authenticate").is_some(), "{what}");
        assert!(!text.contains(NOTIFICATION_PASSWORD) && !text.contains("wrong-password"));
    }
    for body in [
        "",
        "{}",
        "[accepted]",
        r#"{"live": "false", "notificationItems": [{"x": 1}]}"#,
        "\u{0}",
    ] {
        let (status, text, _) = notify(&server, &connection, ADYEN, body.to_owned()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}: {text}");
    }
    assert!(
        env.query_text("SELECT id FROM processor_notices")
            .await
            .is_empty(),
        "nothing kept"
    );
    assert_eq!(
        state_of(&api, &key, &capture_id).await.0,
        "processing",
        "nothing changed"
    );

    // Still being recorded here: Adyen is asked to send it again.
    env.execute_sql(&format!(
        "UPDATE transactions SET state = 'pending' WHERE id = '{capture_id}'"
    ))
    .await;
    let (status, _, headers) = notify(
        &server,
        &connection,
        ADYEN,
        notification_body(false, std::slice::from_ref(&signed)),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(headers.get("retry-after").is_some());
    env.execute_sql(&format!(
        "UPDATE transactions SET state = 'processing' WHERE id = '{capture_id}'"
    ))
    .await;
    let (status, _, _) = notify(
        &server,
        &connection,
        ADYEN,
        notification_body(false, &[signed]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(state_of(&api, &key, &capture_id).await.0, "settled");
}

/// Adyen's answers through the API: refusals by reason, a partial approval, 3-D Secure refused
/// and cancelled, errors falling back to the next connection, and an answer that never comes
/// cancelled by our own reference.
async fn adyens_answers_through_the_api(env: Env) {
    let fake = FakeAdyen::start().await;
    fake.set_slow(Duration::from_secs(3));
    let platform = env.create_platform("Acme");
    let (_, key) = env.create_key(&platform.id, "private", "test");
    let server = serving(&env);
    let api = Api::new(&server);
    let sandbox = api.get("/v1/processor-connections", &key).await.body["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_, plan) = adyen_plan(&api, &key, &fake, Some(&sandbox)).await;
    let shop = merchant_on(&api, &key, &plan).await;
    let pay = async |number: &str, amount: i64| {
        api.post(
            "/v1/transactions",
            &key,
            &card(&shop, "auth", amount, number),
        )
        .await
    };

    for (code, decline) in [
        ("12", "insufficient_funds"),
        ("6", "expired_card"),
        ("24", "incorrect_cvc"),
        ("20", "fraudulent"),
        ("2", "generic_decline"),
        ("99", "generic_decline"),
    ] {
        let refused = pay("4000000000000002", 20_000 + code.parse::<i64>().unwrap()).await;
        assert_eq!(
            refused.status,
            StatusCode::PAYMENT_REQUIRED,
            "{code}: {}",
            refused.text
        );
        assert_eq!(refused.body["error"]["declineCode"], decline, "{code}");
        let a = &refused.body["transaction"]["authorization"];
        assert_eq!(
            (a["processorCode"].as_str(), a["declineCode"].as_str()),
            (Some(code), Some(decline))
        );
    }

    let partial = pay("4000000000000176", 1000).await;
    assert_eq!(partial.status, StatusCode::CREATED);
    let a = &partial.body["authorization"];
    assert_eq!(
        (a["approvedAmount"].as_i64(), a["partial"].as_bool()),
        (Some(500), Some(true))
    );

    let before = fake.seen().len();
    let three_ds = pay("4000000000003220", 1000).await;
    assert_eq!(
        three_ds.status,
        StatusCode::PAYMENT_REQUIRED,
        "{}",
        three_ds.text
    );
    assert_eq!(
        three_ds.body["error"]["declineCode"],
        "authentication_required"
    );
    let id = three_ds.body["transaction"]["id"].as_str().unwrap();
    let sent = fake.seen();
    assert_eq!(sent.len(), before + 2);
    assert_eq!(
        sent[before + 1].path,
        "/cancels",
        "nothing left waiting on the shopper"
    );
    assert_eq!(sent[before + 1].body["paymentReference"], id);

    // Adyen failing: the plan's next connection (the sandbox) takes the payment.
    for number in ["5555555555554444", "378282246310005"] {
        let fell_back = pay(number, 1000).await;
        assert_eq!(
            fell_back.status,
            StatusCode::CREATED,
            "{number}: {}",
            fell_back.text
        );
        assert_eq!(
            fell_back.body["processor"]["id"],
            sandbox.as_str(),
            "{number}"
        );
    }

    // No answer: past the timeout, and a connection closed after the request was sent. Either
    // way the payment may stand at Adyen: it is cancelled by our own reference.
    for number in ["4000000000000168", "4000000000000440"] {
        let before = fake.seen().len();
        let timed_out = pay(number, 1000).await;
        assert_eq!(
            timed_out.status,
            StatusCode::GATEWAY_TIMEOUT,
            "{number}: {}",
            timed_out.text
        );
        let id = timed_out.body["transaction"]["id"].as_str().unwrap();
        let sent = fake.wait_for(before + 2, Duration::from_secs(5)).await;
        let cancel = &sent[before + 1];
        assert_eq!(
            (
                cancel.path.as_str(),
                cancel.body["paymentReference"].as_str()
            ),
            ("/cancels", Some(id)),
            "{number}"
        );
        assert_eq!(cancel.idempotency_key, format!("{id}-cancel"));
    }
}

/// The connection's secrets in no answer, no log line and no row in clear.
async fn an_adyen_connections_secrets_stay_sealed(env: Env) {
    let fake = FakeAdyen::start().await;
    let platform = env.create_platform("Acme");
    let (_, key) = env.create_key(&platform.id, "private", "test");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let mut server = serving(&env);
    let api = Api::new(&server);
    let made = api
        .post(
            "/v1/processor-connections",
            &key,
            &fake.connection_body("Adyen"),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let id = made.body["id"].as_str().unwrap().to_owned();
    let plan =
        json!({"name": "Adyen", "fee": {"basisPoints": 0, "fixed": 0}, "defaultConnectionId": id});
    let plan = api.post("/v1/plans", &key, &plan.to_string()).await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    let plan = plan.body["id"].as_str().unwrap().to_owned();
    let adyen = &made.body["adyen"];
    assert_eq!(
        adyen["apiKeyLast4"],
        &fake_adyen::API_KEY[fake_adyen::API_KEY.len() - 4..]
    );
    assert_eq!(adyen["hmacKeyLast4"], &HMAC_KEY[HMAC_KEY.len() - 4..]);
    assert_eq!(
        adyen["notificationPath"],
        format!("/notifications/adyen/{id}")
    );
    let read = api
        .get(&format!("/v1/processor-connections/{id}"), &key)
        .await;
    let listed = api.get("/v1/processor-connections", &key).await;
    assert_eq!(
        api.get(&format!("/v1/processor-connections/{id}"), &live)
            .await
            .status,
        StatusCode::NOT_FOUND,
        "test only"
    );

    // Refusals never repeat a value sent.
    let bad = json!({"name": "Bad", "kind": "adyen", "adyen": {"merchantAccount": "Holdfast ECOM", "apiKey": fake_adyen::API_KEY, "hmacKey": HMAC_KEY, "notificationUsername": "u", "notificationPassword": NOTIFICATION_PASSWORD}});
    let refused = api
        .post("/v1/processor-connections", &key, &bad.to_string())
        .await;
    assert_eq!(
        (refused.status, refused.error_param()),
        (StatusCode::BAD_REQUEST, Some("adyen.merchantAccount"))
    );
    let live_test_url = api
        .post(
            "/v1/processor-connections",
            &live,
            &fake
                .connection_body("x")
                .replace(&fake.url, "https://checkout-test.adyen.com/v71"),
        )
        .await;
    assert_eq!(
        (live_test_url.status, live_test_url.error_param()),
        (StatusCode::BAD_REQUEST, Some("adyen.checkoutUrl"))
    );
    let missing = api
        .post(
            "/v1/processor-connections",
            &key,
            r#"{"name": "A", "kind": "adyen"}"#,
        )
        .await;
    assert_eq!(
        (missing.status, missing.error_param()),
        (StatusCode::BAD_REQUEST, Some("adyen"))
    );

    let shop = merchant_on(&api, &key, &plan).await;
    let paid = api
        .post(
            "/v1/transactions",
            &key,
            &card(&shop, "auth", 1000, "4111111111111111"),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(
        fake.seen()[0].api_key,
        fake_adyen::API_KEY,
        "opened for the call"
    );

    server.terminate();
    let dump = env.dump().await;
    let log = server.log();
    for secret in [fake_adyen::API_KEY, HMAC_KEY, NOTIFICATION_PASSWORD] {
        for (what, text) in [
            ("create", &made.text),
            ("get", &read.text),
            ("list", &listed.text),
            ("refusal", &refused.text),
            ("log", &log),
        ] {
            assert!(!text.contains(secret), "{what} shows a secret");
        }
        assert!(
            !holdfast_e2e::contains(&dump, secret.as_bytes()),
            "the database holds a secret in clear"
        );
    }
}

/// Failed notification attempts spend the address's failed-authentication budget, as wrong API
/// keys do: past it, the address is refused (429) even with the right credentials.
async fn failed_notifications_lock_out_an_address(env: Env) {
    let fake = FakeAdyen::start().await;
    let platform = env.create_platform("Acme");
    let (_, key) = env.create_key(&platform.id, "private", "test");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3"),
        ("HOLDFAST_ADYEN_ALLOW_LOOPBACK", "true"),
    ]);
    let api = Api::new(&server);
    let (connection, _) = adyen_plan(&api, &key, &fake, None).await;
    let item = notification_item("CAPTURE", true, "1", None, "txn_x", 1, Some(HMAC_KEY));
    let body = || notification_body(false, std::slice::from_ref(&item));
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let wrong = Some((NOTIFICATION_USER, "wrong-password"));
        statuses.push(notify(&server, &connection, wrong, body()).await.0);
    }
    let (right, _, headers) = notify(&server, &connection, ADYEN, body()).await;
    statuses.push(right);
    assert_eq!(
        statuses,
        [
            StatusCode::UNAUTHORIZED,
            StatusCode::UNAUTHORIZED,
            StatusCode::UNAUTHORIZED,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::TOO_MANY_REQUESTS,
        ]
    );
    assert!(headers.get("retry-after").is_some());
    assert!(
        env.query_text("SELECT id FROM processor_notices")
            .await
            .is_empty()
    );
}

/// The notification endpoint takes bytes from anyone: every hostile input is answered, never
/// with a 5xx, always in the envelope, and a card number sent in it is in no answer, no log line
/// and no byte of the database.
async fn hostile_inputs_at_the_notification_endpoint(env: Env) {
    const CANARY: &str = "5555555555554444";
    let fake = FakeAdyen::start().await;
    let platform = env.create_platform("Acme");
    let (_, key) = env.create_key(&platform.id, "private", "test");
    let mut server = serving(&env);
    let api = Api::new(&server);
    let (connection, _) = adyen_plan(&api, &key, &fake, None).await;
    let path = format!("/notifications/adyen/{connection}");
    let base = server.url("");
    let base = base.trim_end_matches('/');
    let authorization = format!(
        "Basic {}",
        STANDARD.encode(format!("{NOTIFICATION_USER}:{NOTIFICATION_PASSWORD}"))
    );
    let canary_item = {
        let mut item = notification_item("CAPTURE", true, CANARY, Some(CANARY), CANARY, 1, None);
        item["reason"] = json!(CANARY);
        item["additionalData"] = json!({"hmacSignature": CANARY, "cardNumber": CANARY});
        item
    };
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let bodies: Vec<(&str, Vec<u8>)> = vec![
        ("a canary everywhere", fake_adyen::unchecked_body(false, &[canary_item]).into_bytes()),
        ("10 MB", vec![b'{'; 10 * 1024 * 1024]),
        ("10,000 deep", deep.into_bytes()),
        ("NUL", br#"{"live": "false\u0000", "notificationItems": []}"#.to_vec()),
        ("not UTF-8", b"{\"live\": \"\xff\xfe\", \"notificationItems\": []}".to_vec()),
        ("a number too big", br#"{"live": "false", "notificationItems": [{"NotificationRequestItem": {"amount": {"value": 5555555555555544445555555555554444}}}]}"#.to_vec()),
        ("an empty batch", br#"{"live": "false", "notificationItems": []}"#.to_vec()),
        ("a canary as a key", format!(r#"{{"{CANARY}": 1}}"#).into_bytes()),
    ];
    let mut cases = Vec::new();
    for (label, body) in bodies {
        for credentials in [None, Some(authorization.as_str())] {
            let mut request = RawRequest::new("POST", &path).json(body.clone());
            if let Some(value) = credentials {
                request = request.header("authorization", value);
            }
            cases.push((
                format!("{label}, credentials {}", credentials.is_some()),
                request,
            ));
        }
    }
    for method in ["GET", "PUT", "PATCH", "DELETE", "OPTIONS"] {
        cases.push((method.to_owned(), RawRequest::new(method, &path)));
    }
    for target in [
        format!("{path}/"),
        format!("/notifications/adyen/{CANARY}"),
        "/notifications/adyen/".to_owned(),
        format!("/notifications//adyen/{connection}"),
        format!("/notifications/adyen/{connection}%00"),
        format!("/notifications/adyen/{connection}?x={CANARY}"),
    ] {
        cases.push((target.clone(), RawRequest::new("POST", &target).json("{}")));
    }
    cases.push((
        "bytes that are not UTF-8 in the Authorization header".to_owned(),
        RawRequest::new("POST", &path)
            .json("{}")
            .header("authorization", b"Basic \xff\xfe".to_vec()),
    ));
    for (label, request) in cases {
        let Some(reply) = request.send(base).await else {
            panic!("{label}: no answer");
        };
        assert!(reply.status < 500, "{label}: {}", reply.status);
        assert!(
            reply.status >= 400 || label == "an empty batch, credentials true",
            "{label}: {}",
            reply.status
        );
        if reply.status >= 400 && reply.status != 413 {
            assert!(
                reply.json()["error"]["requestId"].is_string(),
                "{label}: {}",
                reply.text()
            );
        }
        assert!(!reply.text().contains(CANARY), "{label} echoes the canary");
    }
    server.terminate();
    assert!(!server.log().contains(CANARY), "the canary in the log");
    assert!(
        !holdfast_e2e::contains(&env.dump().await, CANARY.as_bytes()),
        "the canary at rest"
    );
}

on_both_backends!(
    failed_notifications_lock_out_an_address,
    hostile_inputs_at_the_notification_endpoint,
    a_live_payment_end_to_end,
    failures_reported_later_undo_what_they_reserved,
    notifications_refuse_what_is_not_the_connections,
    adyens_answers_through_the_api,
    an_adyen_connections_secrets_stay_sealed,
);
