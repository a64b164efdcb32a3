//! The ledger under every payment, from outside (docs/money.md): balances read through the API
//! after real payments, the journals read from the database, and `holdfast ledger verify`
//! clean, then failing on books changed behind its back.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::money::put_on_plan;
use holdfast_e2e::{Answer, Receiver};
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

    // One journal per money-moving transaction (the sale, the capture with its auth's fee, the
    // refund), each summing to zero; none for the auths, the void or the decline.
    let rows = env
        .query_text(
            "SELECT source_id, kind, CAST(merchant_pending AS TEXT),
                    CAST(merchant_available AS TEXT), CAST(platform_fees AS TEXT),
                    CAST(processor_receivable AS TEXT), CAST(merchant_in_transit AS TEXT)
               FROM ledger_journals ORDER BY source_id",
        )
        .await;
    let capture_fees = fee(&capture) + fee(&auth);
    let mut expected: Vec<Vec<Option<String>>> = [
        (&sale, "charge", [fee(&sale) - 1000, 0, -fee(&sale), 1000]),
        (
            &capture,
            "charge",
            [capture_fees - 1500, 0, -capture_fees, 1500],
        ),
        (
            &refund,
            "refund",
            [0, 400 + fee(&refund), -fee(&refund), -400],
        ),
    ]
    .iter()
    .map(|(t, kind, amounts)| {
        let mut row = vec![
            Some(t["id"].as_str().unwrap().to_owned()),
            Some((*kind).to_owned()),
        ];
        row.extend(amounts.iter().map(|a| Some(a.to_string())));
        row.push(Some("0".to_owned()));
        row
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
/// a journal's amounts moved between its accounts, its merchant changed, a transaction's
/// journal gone, and one made unbalanced behind the table's check; each named, and the
/// command exits 1.
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
    let fourth = pay(&api, key, &body).await;
    assert!(env.cli(&["ledger", "verify"]).success);
    let id = |t: &Value| t["id"].as_str().unwrap().to_owned();
    // The table refuses an unbalanced journal: only with its check set aside can one be made.
    let unbalance = format!(
        "UPDATE ledger_journals SET platform_fees = platform_fees + 1 WHERE source_id = '{}';",
        id(&fourth)
    );
    if env.database_url().starts_with("sqlite") {
        env.execute_sql(&format!(
            "PRAGMA ignore_check_constraints = ON; {unbalance}"
        ))
        .await;
    } else {
        env.execute_sql(&format!(
            "ALTER TABLE ledger_journals DROP CONSTRAINT ledger_journals_sum_to_zero; {unbalance}"
        ))
        .await;
    }
    env.execute_sql(&format!(
        "UPDATE ledger_journals SET platform_fees = platform_fees + 1,
                merchant_pending = merchant_pending - 1 WHERE source_id = '{}';
         UPDATE ledger_journals SET merchant_id = 'mid_0000000000000000000000000' WHERE source_id = '{}';
         DELETE FROM ledger_journals WHERE source_id = '{}';",
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
    assert!(
        named(&first, "not what its transaction posts"),
        "{problems:?}"
    );
    assert!(
        named(&second, "disagrees with its transaction"),
        "{problems:?}"
    );
    assert!(named(&third, "has no journal"), "{problems:?}");
    assert!(named(&fourth, "sums to 1"), "{problems:?}");
    assert!(out.stderr.contains("does not add up"), "{}", out.stderr);
}

/// The sandbox connection every platform starts with.
async fn sandbox_connection(api: &Api, key: &str) -> String {
    let listed = api.get("/v1/processor-connections", key).await;
    listed.body["data"][0]["id"].as_str().unwrap().to_owned()
}

/// A plan settling after `days`, and a merchant on it; the merchant's id.
async fn merchant_settling_after(api: &Api, key: &str, days: u8) -> String {
    let connection = sandbox_connection(api, key).await;
    let plan = api
        .post(
            "/v1/plans",
            key,
            &json!({"name": format!("{days} days"), "fee": {"basisPoints": 290, "fixed": 30},
                    "defaultConnectionId": connection, "settlementDelayDays": days})
            .to_string(),
        )
        .await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    assert_eq!(plan.body["settlementDelayDays"], days);
    let merchant = api.shop(key).await;
    put_on_plan(api, key, &merchant, &plan.body["id"]).await;
    merchant
}

fn sale(merchant: &str, amount: i64) -> String {
    format!(
        r#"{{"merchantId": "{merchant}", "type": "sale", "amount": {amount}, "payment": {CARD}}}"#
    )
}

/// A plan's settlement delay is 0 to 30 days, 2 when not given (the default plan's), refused
/// by name otherwise, never echoed.
async fn a_plans_settlement_delay_is_refused_by_name(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let connection = sandbox_connection(&api, key).await;
    for days in ["31", "-1", "\"2\"", "2.5", "99999999999999999999"] {
        let refused = api
            .post(
                "/v1/plans",
                key,
                &format!(
                    r#"{{"name": "Odd", "fee": {{"basisPoints": 0, "fixed": 0}}, "defaultConnectionId": "{connection}", "settlementDelayDays": {days}}}"#
                ),
            )
            .await;
        assert_eq!(
            (refused.status, refused.error_param()),
            (StatusCode::BAD_REQUEST, Some("settlementDelayDays")),
            "{days}: {}",
            refused.text
        );
        let said = refused.body["error"]["message"].as_str().unwrap();
        assert!(
            !said.contains(days.trim_matches('"')),
            "never echoed: {said}"
        );
    }
    let plans = api.get("/v1/plans", key).await;
    assert_eq!(
        plans.body["data"][0]["settlementDelayDays"], 2,
        "the default plan's"
    );
}

/// A run (`holdfast ledger settle`) makes available what its plan's delay allows and nothing
/// twice: the balances move, the settlement's two entries are in the database, the merchant's
/// platform hears `balance.available` once, and the books verify; a settlement changed behind
/// the ledger's back is named.
async fn settlement_makes_charges_available_once(env: Env) {
    let receiver = Receiver::start(Answer::status(200)).await;
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = api
        .post(
            "/v1/webhooks",
            key,
            &json!({"endpointUrl": receiver.url, "events": ["balance.available"]}).to_string(),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let quick = merchant_settling_after(&api, key, 0).await;
    let shop = api.shop(key).await;
    let now = pay(&api, key, &sale(&quick, 1000)).await;
    let later = pay(&api, key, &sale(&shop, 2000)).await;
    let net = |t: &Value| t["authorization"]["approvedAmount"].as_i64().unwrap() - fee(t);

    assert_eq!(
        env.cli_json(&["ledger", "settle"]),
        json!({"transactions": 1, "merchants": 1})
    );
    assert_eq!(
        env.cli_json(&["ledger", "settle"]),
        json!({"transactions": 0, "merchants": 0}),
        "nothing settles twice"
    );
    let balance = |merchant: &str| {
        let path = format!("/v1/balances?merchantId={merchant}");
        let api = &api;
        async move { api.get(&path, key).await.body["balances"][0].clone() }
    };
    assert_eq!(
        balance(&quick).await,
        json!({"currency": "USD", "available": net(&now), "pending": 0, "inTransit": 0})
    );
    assert_eq!(
        balance(&shop).await,
        json!({"currency": "USD", "available": 0, "pending": net(&later), "inTransit": 0}),
        "two days to go"
    );
    let id = |t: &Value| t["id"].as_str().unwrap().to_owned();
    let rows = env
        .query_text(&format!(
            "SELECT CAST(merchant_pending AS TEXT), CAST(merchant_available AS TEXT),
                    CAST(platform_fees + processor_receivable + merchant_in_transit AS TEXT)
               FROM ledger_journals WHERE source_id = '{}' AND kind = 'settlement'",
            id(&now)
        ))
        .await;
    assert_eq!(
        rows,
        [[net(&now), -net(&now), 0].map(|a| Some(a.to_string()))]
    );
    let delivered = receiver.wait_for(1, Duration::from_secs(10)).await;
    let event = delivered[0].json();
    assert_eq!(event["eventType"], "balance.available");
    assert_eq!(event["data"]["merchantId"], quick.as_str());
    assert_eq!(
        event["data"]["settled"],
        json!([{"currency": "USD", "amount": net(&now), "transactions": 1}])
    );
    assert!(
        event["data"]["settlementRunId"]
            .as_str()
            .unwrap()
            .starts_with("srun_")
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.received().len(),
        1,
        "one event per merchant and run"
    );
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));

    env.execute_sql(&format!(
        "UPDATE ledger_journals SET merchant_pending = merchant_pending + 1,
                merchant_available = merchant_available - 1
          WHERE source_id = '{0}' AND kind = 'settlement';",
        id(&now)
    ))
    .await;
    let out = env.cli(&["--json", "ledger", "verify"]);
    assert!(!out.success);
    assert!(
        out.stdout.contains(&format!("{} (settlement)", id(&now))),
        "{}",
        out.stdout
    );
}

/// The workers settle on their schedule (`HOLDFAST_SETTLE_EVERY_MS`): a sale on a plan without
/// a delay becomes available with no operator's command.
async fn the_workers_settle_on_their_schedule(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_SETTLE_EVERY_MS", "200"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let quick = merchant_settling_after(&api, key, 0).await;
    let paid = pay(&api, key, &sale(&quick, 1000)).await;
    let net = 1000 - fee(&paid);
    let path = format!("/v1/balances?merchantId={quick}");
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let read = api.get(&path, key).await.body["balances"][0].clone();
        if read["available"] == net {
            assert_eq!(read["pending"], 0);
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "never settled: {read}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));
}

/// `count` more settled sales like `template`, with their charges, written straight into the
/// database (the same SQL on both backends): a run with work enough to be stopped inside.
async fn sales_like(env: &Env, template: &str, count: u32) {
    let numbers = format!(
        "WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < {count})"
    );
    env.execute_sql(&format!(
        "{numbers}
         INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, state, amount,
             currency, fee, created_on, bin, brand, last4, funding, plan_id, plan_name,
             connection_id, connection_name, approved_amount, avs, cvv, partial, processor_code,
             processor_message, processor_transaction_id, status, parent_id, refunded_amount)
         SELECT 'txn_crash' || n, platform_id, mode, merchant_id, kind, state, amount, currency,
             fee, created_on, bin, brand, last4, funding, plan_id, plan_name, connection_id,
             connection_name, approved_amount, avs, cvv, partial, processor_code,
             processor_message, 'sbx_crash' || n, status, parent_id, refunded_amount
           FROM g, transactions t WHERE t.id = '{template}';
         {numbers}
         INSERT INTO ledger_journals (source_id, kind, platform_id, mode, merchant_id, currency,
             posted_on, merchant_pending, merchant_available, merchant_in_transit, platform_fees,
             processor_receivable)
         SELECT 'txn_crash' || n, kind, platform_id, mode, merchant_id, currency, posted_on,
             merchant_pending, merchant_available, merchant_in_transit, platform_fees,
             processor_receivable
           FROM g, ledger_journals j WHERE j.source_id = '{template}' AND j.kind = 'charge';"
    ))
    .await;
}

/// A settlement run killed (`SIGKILL`) in the middle of its work leaves nothing: no charge
/// settled, no run recorded. The next run settles every charge once, and the books verify.
/// On PostgreSQL the kill waits until the run's statement is seen working; on SQLite it comes
/// a moment after the start, and the run must be all or nothing either way.
async fn a_settlement_run_killed_midway_leaves_nothing_half_done(env: Env) {
    const CHARGES: u32 = 40_000;
    let platform = env.create_platform("Acme");
    // Its workers settle nothing: only the runs this test starts do.
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_SETTLE_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let quick = merchant_settling_after(&api, key, 0).await;
    let template = pay(&api, key, &sale(&quick, 1000)).await;
    drop(server);
    sales_like(&env, template["id"].as_str().unwrap(), CHARGES - 1).await;
    let count = |sql: &'static str| {
        let env = &env;
        async move {
            env.query_text(sql).await[0][0]
                .clone()
                .unwrap()
                .parse::<u32>()
                .unwrap()
        }
    };
    let settled = "SELECT CAST(count(*) AS TEXT) FROM ledger_journals WHERE kind = 'settlement'";
    let runs = "SELECT CAST(count(*) AS TEXT) FROM settlement_runs";

    let mut run = env.spawn_cli(&["ledger", "settle"]);
    if env.database_url().starts_with("postgres") {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while count(
            "SELECT CAST(count(*) AS TEXT) FROM pg_stat_activity
              WHERE state = 'active' AND pid <> pg_backend_pid()
                AND query LIKE '%INSERT INTO ledger_journals%settlement%'",
        )
        .await
            == 0
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the run never started"
            );
            assert!(
                run.try_wait().unwrap().is_none(),
                "the run ended before it was seen"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    } else {
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    run.kill().unwrap();
    run.wait().unwrap();
    // A dead client's transaction is rolled back when the server sees it gone: wait for that.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (after_kill, runs_after_kill) = (count(settled).await, count(runs).await);
    assert!(
        (after_kill, runs_after_kill) == (0, 0) || (after_kill, runs_after_kill) == (CHARGES, 1),
        "all or nothing: {after_kill} settled by {runs_after_kill} run(s)"
    );
    if env.database_url().starts_with("postgres") {
        assert_eq!(
            (after_kill, runs_after_kill),
            (0, 0),
            "killed in the middle"
        );
    }

    let again = env.cli_json(&["ledger", "settle"]);
    assert_eq!(
        again["transactions"].as_u64().unwrap() + u64::from(after_kill),
        u64::from(CHARGES)
    );
    assert_eq!(count(settled).await, CHARGES, "each charge settled once");
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));
    let read = api_balance(&env, &platform.private_key, &quick).await;
    assert_eq!(read["pending"], 0);
    assert_eq!(
        read["available"],
        i64::from(CHARGES) * (1000 - fee(&template))
    );
}

/// `merchant`'s first balance, read through a server of its own.
async fn api_balance(env: &Env, key: &str, merchant: &str) -> Value {
    let server = env.serve();
    let api = Api::new(&server);
    api.get(&format!("/v1/balances?merchantId={merchant}"), key)
        .await
        .body["balances"][0]
        .clone()
}

on_both_backends!(
    a_settlement_run_killed_midway_leaves_nothing_half_done,
    a_plans_settlement_delay_is_refused_by_name,
    settlement_makes_charges_available_once,
    the_workers_settle_on_their_schedule,
    balances_follow_the_posting_table,
    balances_are_scoped_and_refused_by_name,
    verify_finds_books_changed_behind_its_back,
);
