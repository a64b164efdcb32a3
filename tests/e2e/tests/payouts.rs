//! Payouts from outside (docs/money.md): made through the API from what settlement made
//! available, handed to the sandbox bank by `holdfast ledger pay-out` or the workers, paid or
//! returned by account number, announced to a receiver, canceled while pending, refused by
//! name; the balances read through the API, `holdfast ledger verify` clean, then failing on a
//! payout's journal changed behind its back.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::money::{balance, settle_at_once, settled_sale, verify_clean};
use holdfast_e2e::{Answer, Api, Env, Receiver, Server, on_both_backends};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// A server that runs no payout rail, and a merchant of a new platform with `amount` available.
struct Funded {
    _server: Server,
    api: Api,
    key: String,
    platform_id: String,
    merchant: String,
}

async fn funded(env: &Env, amount: i64) -> Funded {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = platform.private_key;
    let merchant = api.shop(&key).await;
    settle_at_once(&api, &key, &merchant).await;
    settled_sale(env, &api, &key, &merchant, amount).await;
    Funded {
        _server: server,
        api,
        key,
        platform_id: platform.id,
        merchant,
    }
}

/// A payout of everything available is made pending (in transit), once under its key; the
/// sandbox bank pays it; the receiver hears of both; the books verify, and stop verifying once
/// its journal is changed behind their back.
async fn a_payout_is_made_and_paid_by_the_sandbox_bank(env: Env) {
    let receiver = Receiver::start(Answer::status(200)).await;
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = api
        .post(
            "/v1/webhooks",
            key,
            &json!({"endpointUrl": receiver.url,
                    "events": ["payout.created", "payout.paid", "payout.failed", "payout.canceled"]})
            .to_string(),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let merchant = api.shop(key).await;
    settle_at_once(&api, key, &merchant).await;
    settled_sale(&env, &api, key, &merchant, 2500).await;
    assert_eq!(balance(&api, key, &merchant).await, json!([2500, 0, 0]));

    let body = format!(r#"{{"merchantId": "{merchant}"}}"#);
    let made = api.post_once("/v1/payouts", key, "payout-1", &body).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let payout = made.body.clone();
    assert_eq!(payout["amount"], 2500, "everything available");
    assert_eq!(payout["state"], "pending");
    assert_eq!(payout["method"], "manual");
    assert_eq!(payout["currency"], "USD");
    assert_eq!(
        payout["bankLast4"], "6789",
        "the sandbox bank's paying account"
    );
    assert_eq!(payout["failure"], Value::Null);
    assert!(payout["id"].as_str().unwrap().starts_with("po_"));
    let replayed = api.post_once("/v1/payouts", key, "payout-1", &body).await;
    assert_eq!(replayed.status, StatusCode::CREATED);
    assert_eq!(replayed.body["id"], payout["id"], "one payout per key");
    assert_eq!(balance(&api, key, &merchant).await, json!([0, 0, 2500]));
    let again = api.post("/v1/payouts", key, &body).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    assert_eq!(again.body["error"]["param"], "amount");
    verify_clean(&env);

    assert_eq!(
        env.cli_json(&["ledger", "pay-out"]),
        json!({"made": 0, "sent": 0, "paid": 1, "failed": 0})
    );
    assert_eq!(
        env.cli_json(&["ledger", "pay-out"]),
        json!({"made": 0, "sent": 0, "paid": 0, "failed": 0}),
        "paid once"
    );
    let id = payout["id"].as_str().unwrap();
    let read = api.get(&format!("/v1/payouts/{id}"), key).await;
    assert_eq!(read.body["state"], "paid", "{}", read.text);
    assert_eq!(balance(&api, key, &merchant).await, json!([0, 0, 0]));
    let listed = api
        .get(
            &format!("/v1/payouts?merchantId={merchant}&state=paid"),
            key,
        )
        .await;
    assert_eq!(listed.body["data"][0]["id"], id, "{}", listed.text);
    verify_clean(&env);

    let delivered = receiver.wait_for(2, Duration::from_secs(10)).await;
    let events: Vec<(Value, Value)> = delivered
        .iter()
        .map(|d| {
            let e = d.json();
            (e["eventType"].clone(), e["data"]["state"].clone())
        })
        .collect();
    assert_eq!(
        events,
        [
            (json!("payout.created"), json!("pending")),
            (json!("payout.paid"), json!("paid"))
        ]
    );

    env.execute_sql(&format!(
        "UPDATE ledger_journals SET merchant_in_transit = merchant_in_transit + 1,
                processor_receivable = processor_receivable - 1
          WHERE source_id = '{id}' AND kind = 'payout_paid';"
    ))
    .await;
    let out = env.cli(&["--json", "ledger", "verify"]);
    assert!(!out.success);
    assert!(
        out.stdout.contains(&format!(
            "{id} (payout_paid): its amounts are not what its payout posts"
        )),
        "{}",
        out.stdout
    );
}

/// A boarded merchant's payouts go to its form's account: one the sandbox bank returns (R03)
/// fails with its code and the money is available again, handed over by the workers on their
/// schedule with no operator's command.
async fn a_payout_to_a_returning_account_fails_with_its_code(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "100"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = api.approved_merchant_paid_to(key, "000111111116").await;
    settle_at_once(&api, key, &merchant).await;
    settled_sale(&env, &api, key, &merchant, 1000).await;
    let made = api
        .post(
            "/v1/payouts",
            key,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 600}}"#),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    assert_eq!(made.body["bankLast4"], "1116", "the form's account");
    let path = format!("/v1/payouts/{}", made.body["id"].as_str().unwrap());
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    let failed = loop {
        let read = api.get(&path, key).await;
        if read.body["state"] == "failed" {
            break read.body;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never returned: {}",
            read.text
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        failed["failure"],
        json!({"code": "R03", "message": "No account / unable to locate account"})
    );
    assert_eq!(balance(&api, key, &merchant).await, json!([1000, 0, 0]));
    verify_clean(&env);
}

/// A pending payout is canceled once (its money available again); one canceled or paid is
/// refused by name.
async fn a_pending_payout_is_canceled_once(env: Env) {
    let Funded {
        _server: _running,
        api,
        key,
        merchant,
        ..
    } = funded(&env, 1000).await;
    let key = &key;
    let made = api
        .post(
            "/v1/payouts",
            key,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 400}}"#),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let id = made.body["id"].as_str().unwrap();
    assert_eq!(balance(&api, key, &merchant).await, json!([600, 0, 400]));
    let cancel = format!("/v1/payouts/{id}/cancel");
    let canceled = api.post(&cancel, key, "").await;
    assert_eq!(canceled.status, StatusCode::OK, "{}", canceled.text);
    assert_eq!(canceled.body["state"], "canceled");
    assert_eq!(balance(&api, key, &merchant).await, json!([1000, 0, 0]));
    let twice = api.post(&cancel, key, "").await;
    assert_eq!(twice.status, StatusCode::CONFLICT, "{}", twice.text);
    assert!(
        twice.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is canceled")
    );

    let paid = api
        .post(
            "/v1/payouts",
            key,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 100}}"#),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(env.cli_json(&["ledger", "pay-out"])["paid"], 1);
    let late = api
        .post(
            &format!("/v1/payouts/{}/cancel", paid.body["id"].as_str().unwrap()),
            key,
            "",
        )
        .await;
    assert_eq!(late.status, StatusCode::CONFLICT, "{}", late.text);
    assert_eq!(balance(&api, key, &merchant).await, json!([900, 0, 0]));
    verify_clean(&env);
}

/// A payout is refused by field for more than is available, a bad amount or currency, an
/// unknown merchant or one of the other mode, an unknown field, and a live merchant without a
/// bank account; nothing is echoed and nothing is written.
async fn payouts_are_refused_by_name(env: Env) {
    let Funded {
        api,
        key,
        platform_id,
        merchant,
        _server: _running,
    } = funded(&env, 900).await;
    let key = &key;
    let (_, live_key) = env.create_key(&platform_id, "private", "live");
    let live_merchant = api.shop(&live_key).await;
    let hostile = "<script>x</script>";
    for (who, body, status, param) in [
        (
            key.as_str(),
            json!({"merchantId": merchant, "amount": 901}),
            409,
            "amount",
        ),
        (
            key.as_str(),
            json!({"merchantId": merchant, "amount": 0}),
            400,
            "amount",
        ),
        (
            key.as_str(),
            json!({"merchantId": merchant, "amount": -5}),
            400,
            "amount",
        ),
        (
            key.as_str(),
            json!({"merchantId": merchant, "amount": "5"}),
            400,
            "amount",
        ),
        (
            key.as_str(),
            json!({"merchantId": merchant, "currency": hostile}),
            400,
            "currency",
        ),
        (
            key.as_str(),
            json!({"merchantId": hostile}),
            400,
            "merchantId",
        ),
        (
            key.as_str(),
            json!({"merchantId": live_merchant}),
            400,
            "merchantId",
        ),
        (
            key.as_str(),
            json!({"merchantId": merchant, "extra": hostile}),
            400,
            "extra",
        ),
        (
            live_key.as_str(),
            json!({"merchantId": live_merchant}),
            409,
            "merchantId",
        ),
    ] {
        let refused = api.post("/v1/payouts", who, &body.to_string()).await;
        assert_eq!(refused.status.as_u16(), status, "{body}: {}", refused.text);
        assert_eq!(refused.body["error"]["param"], param, "{body}");
        assert!(
            !refused.text.contains("script"),
            "never echoed: {}",
            refused.text
        );
    }
    assert_eq!(balance(&api, key, &merchant).await, json!([900, 0, 0]));
    let listed = api.get("/v1/payouts", key).await;
    assert_eq!(listed.body["data"], json!([]), "nothing written");
    let bad_state = api.get("/v1/payouts?state=lost", key).await;
    assert_eq!(bad_state.status, StatusCode::BAD_REQUEST);
    assert_eq!(bad_state.body["error"]["param"], "state");
    verify_clean(&env);
}

/// A merchant is paid out only when asked until its platform sets a schedule; a daily one is
/// paid all that is available at the next run of the rails, once that day; a schedule is
/// refused by field, never echoed.
async fn a_schedule_pays_out_at_the_next_run_once_a_day(env: Env) {
    let Funded {
        _server: _running,
        api,
        key,
        merchant,
        ..
    } = funded(&env, 1500).await;
    let key = &key;
    let path = format!("/v1/merchants/{merchant}/payout-schedule");
    let read = api.get(&path, key).await;
    assert_eq!(
        read.body,
        json!({"merchantId": merchant, "interval": "manual", "weekday": null, "minimumAmount": 0})
    );
    assert_eq!(
        env.cli_json(&["ledger", "pay-out"]),
        json!({"made": 0, "sent": 0, "paid": 0, "failed": 0}),
        "manual: only when asked"
    );
    let hostile = "<script>x</script>";
    for (body, param) in [
        (json!({"interval": "weekly"}), "weekday"),
        (json!({"interval": "daily", "weekday": "friday"}), "weekday"),
        (json!({"interval": "weekly", "weekday": hostile}), "weekday"),
        (json!({"interval": hostile}), "interval"),
        (
            json!({"interval": "daily", "minimumAmount": -1}),
            "minimumAmount",
        ),
        (json!({"interval": "daily", "extra": hostile}), "extra"),
    ] {
        let refused = api.put(&path, key, &body.to_string()).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            refused.text
        );
        assert_eq!(refused.body["error"]["param"], param, "{body}");
        assert!(
            !refused.text.contains("script"),
            "never echoed: {}",
            refused.text
        );
    }
    let set = api
        .put(
            &path,
            key,
            &json!({"interval": "daily", "minimumAmount": 1000}).to_string(),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.text);
    assert_eq!(api.get(&path, key).await.body, set.body);
    assert_eq!(
        env.cli_json(&["ledger", "pay-out"]),
        json!({"made": 1, "sent": 0, "paid": 1, "failed": 0})
    );
    assert_eq!(balance(&api, key, &merchant).await, json!([0, 0, 0]));
    let listed = api.get("/v1/payouts", key).await;
    let made = &listed.body["data"][0];
    assert_eq!(
        (&made["method"], &made["state"], &made["amount"]),
        (&json!("scheduled"), &json!("paid"), &json!(1500))
    );
    assert_eq!(
        env.cli_json(&["ledger", "pay-out"])["made"],
        0,
        "once a day"
    );
    verify_clean(&env);
}

/// The sandbox bank's run killed (`SIGKILL`) in the middle of its work: each payout is in one
/// state with that state's journals (at most one caught between handed over and paid), the
/// books verify as they are, and the next run pays every payout once.
async fn a_payout_run_killed_midway_pays_each_payout_once(env: Env) {
    const PAYOUTS: u32 = 1500;
    let Funded {
        _server: running,
        api,
        key,
        merchant,
        ..
    } = funded(&env, 1_000_000).await;
    let template = api
        .post(
            "/v1/payouts",
            &key,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 100}}"#),
        )
        .await;
    assert_eq!(template.status, StatusCode::CREATED, "{}", template.text);
    let template = template.body["id"].as_str().unwrap().to_owned();
    drop(running);
    // More payouts like it, written straight into the database (the same SQL on both
    // backends): a run with work enough to be stopped inside.
    let numbers = format!(
        "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {})",
        PAYOUTS - 1
    );
    env.execute_sql(&format!(
        "{numbers}
         INSERT INTO payouts (id, platform_id, mode, merchant_id, currency, amount, state, method,
             bank_form_id, bank_last4, failure_code, created_on, updated_on)
         SELECT 'po_crash' || n, platform_id, mode, merchant_id, currency, amount, state, method,
             bank_form_id, bank_last4, failure_code, created_on, updated_on
           FROM g, payouts p WHERE p.id = '{template}';
         {numbers}
         INSERT INTO ledger_journals (source_id, kind, platform_id, mode, merchant_id, currency,
             posted_on, merchant_pending, merchant_available, merchant_in_transit, platform_fees,
             processor_receivable)
         SELECT 'po_crash' || n, kind, platform_id, mode, merchant_id, currency, posted_on,
             merchant_pending, merchant_available, merchant_in_transit, platform_fees,
             processor_receivable
           FROM g, ledger_journals j WHERE j.source_id = '{template}' AND j.kind = 'payout';"
    ))
    .await;
    verify_clean(&env);
    let count = |sql: String| {
        let env = &env;
        async move {
            env.query_text(&sql).await[0][0]
                .clone()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        }
    };
    let in_state =
        |state: &str| format!("SELECT CAST(count(*) AS TEXT) FROM payouts WHERE state = '{state}'");
    let mut run = env.spawn_cli(&["ledger", "pay-out"]);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while count(in_state("paid")).await < 10 {
        assert!(std::time::Instant::now() < deadline, "the run never paid");
        assert!(
            run.try_wait().unwrap().is_none(),
            "the run ended before it was stopped"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    run.kill().unwrap();
    run.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (paid, in_transit) = (
        count(in_state("paid")).await,
        count(in_state("in_transit")).await,
    );
    assert!(paid < PAYOUTS, "killed in the middle: {paid} paid");
    assert!(
        in_transit <= 1,
        "at most one between its moves: {in_transit}"
    );
    verify_clean(&env);

    let again = env.cli_json(&["ledger", "pay-out"]);
    assert_eq!(
        again["paid"].as_u64().unwrap() + u64::from(paid),
        u64::from(PAYOUTS),
        "{again}"
    );
    assert_eq!(count(in_state("paid")).await, PAYOUTS);
    assert_eq!(
        count(
            "SELECT CAST(count(*) AS TEXT) FROM ledger_journals WHERE kind = 'payout_paid'"
                .to_owned()
        )
        .await,
        PAYOUTS,
        "each paid once"
    );
    verify_clean(&env);
}

/// A merchant's balance transactions, read through the API, are each journal of its money,
/// newest first, and sum to its balances; they filter by payout and page; a filter or cursor
/// that is not one is refused by name, never echoed.
async fn balance_transactions_sum_to_the_balances(env: Env) {
    let Funded {
        _server: _serving,
        api,
        key,
        merchant,
        ..
    } = funded(&env, 2500).await;
    let made = api
        .post(
            "/v1/payouts",
            &key,
            &json!({"merchantId": merchant, "amount": 1000}).to_string(),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    env.cli_json(&["ledger", "pay-out"]);
    let payout = made.body["id"].as_str().unwrap();
    let list = |query: String| {
        let (api, key) = (&api, &key);
        async move {
            let got = api
                .get(&format!("/v1/balance-transactions?{query}"), key)
                .await;
            assert_eq!(got.status, StatusCode::OK, "{}", got.text);
            got.body
        }
    };
    let all = list(format!("merchantId={merchant}&limit=100")).await;
    let rows = all["data"].as_array().unwrap();
    let types: Vec<&str> = rows.iter().map(|t| t["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["payout_paid", "payout", "settlement", "charge"]);
    let sum = |field: &str| -> i64 {
        rows.iter()
            .map(|t| t["balances"][field].as_i64().unwrap())
            .sum()
    };
    let held = balance(&api, &key, &merchant).await;
    assert_eq!(
        json!([sum("available"), sum("pending"), sum("inTransit")]),
        held
    );
    assert_eq!(held, json!([1500, 0, 0]));
    assert_eq!(rows[3]["amount"], 2500);
    assert_eq!(rows[0]["payoutId"], payout);
    assert_eq!(rows[0]["net"], -1000, "paid out: gone from what it holds");
    let of_payout = list(format!("payoutId={payout}")).await;
    assert_eq!(of_payout["data"].as_array().unwrap().len(), 2);
    let first = list(format!("merchantId={merchant}&limit=1")).await;
    assert_eq!(first["hasMore"], true);
    let next = list(format!(
        "merchantId={merchant}&limit=1&startingAfter={}",
        first["data"][0]["id"].as_str().unwrap()
    ))
    .await;
    assert_eq!(next["data"][0], rows[1]);

    // A cursor of the right shape that names no journal, and two sources at once: nothing.
    for query in [
        "startingAfter=btx_0000000000".to_owned(),
        format!("payoutId={payout}&transactionId=txn_1"),
    ] {
        let none = list(query.clone()).await;
        assert_eq!(none["data"], json!([]), "{query}");
    }
    let hostile = "<script>x</script>";
    for (query, param) in [
        (format!("type={hostile}"), "type"),
        (format!("startingAfter={hostile}"), "startingAfter"),
        (format!("transactionId={hostile}"), "transactionId"),
        (format!("merchantId={hostile}"), "merchantId"),
    ] {
        let got = api
            .get(&format!("/v1/balance-transactions?{query}"), &key)
            .await;
        assert_eq!(got.status, StatusCode::BAD_REQUEST, "{query}: {}", got.text);
        assert_eq!(got.body["error"]["param"], param, "{query}");
        assert!(!got.text.contains("script"), "never echoed: {}", got.text);
    }
}

on_both_backends!(
    balance_transactions_sum_to_the_balances,
    a_payout_is_made_and_paid_by_the_sandbox_bank,
    a_payout_to_a_returning_account_fails_with_its_code,
    a_pending_payout_is_canceled_once,
    payouts_are_refused_by_name,
    a_schedule_pays_out_at_the_next_run_once_a_day,
    a_payout_run_killed_midway_pays_each_payout_once,
);
