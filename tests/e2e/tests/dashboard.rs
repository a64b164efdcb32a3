//! The dashboard from outside: every route refuses without a session or its form token, every
//! page carries its strict headers, the cookie its flags; then the whole of it in Debian's
//! Chromium (`tests/browser/dashboard.mjs`): sign-in, API Keys, the mode switch, a viewer, a
//! forged form, a one-time link, the throttle.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::dashboard::{
    ADMIN_PASSWORD, Pages, VIEWER_PASSWORD, assert_page_headers, audit_rows, client,
    owner_and_viewer, set_password, sign_in,
};
use holdfast_e2e::{Answer, Api, Env, Receiver, Server, browser, on_both_backends};
use reqwest::StatusCode;
use reqwest::header::{LOCATION, ORIGIN};

/// Deliveries to a local receiver, fast: a full attempt well under a second.
const FAST_WEBHOOKS: &[(&str, &str)] = &[
    ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
    ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
    ("HOLDFAST_WEBHOOK_TIMEOUT_MS", "400"),
    ("HOLDFAST_WEBHOOK_BACKOFF_BASE_MS", "10"),
    ("HOLDFAST_WORKER_POLL_MS", "20"),
];

/// An auth of 1000 for a new merchant "Shop"; the transaction's id.
async fn one_auth(api: &Api, key: &str) -> String {
    let shop = api.shop(key).await;
    let paid = api.auth(key, &shop).await;
    paid["id"].as_str().unwrap().to_owned()
}

/// What the routes act on: a key, a subscription, a transaction and its delivery.
struct Targets {
    key: String,
    hook: String,
    txn: String,
    delivery: String,
    merchant: String,
    form: String,
}

impl Targets {
    /// A subscription to merchant and transaction events (to an address never reached), an
    /// auth, and the auth's notification.
    async fn made(server: &Server, platform: &holdfast_e2e::PlatformFixture) -> Self {
        let api = Api::new(server);
        let key = &platform.private_key;
        let body = r#"{"endpointUrl": "https://example.com/hooks", "events": ["merchant.created", "transaction.created"]}"#;
        let made = api.post("/v1/webhooks", key, body).await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
        let hook = made.body["id"].as_str().unwrap().to_owned();
        let txn = one_auth(&api, key).await;
        let history = api
            .get(&format!("/v1/webhooks/{hook}/deliveries"), key)
            .await;
        let delivery = history.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["eventType"] == "transaction.created")
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned();
        let merchants = api.get("/v1/merchants", key).await;
        let merchant = merchants.body["data"][0]["id"].as_str().unwrap().to_owned();
        let body = format!(r#"{{"merchantId": "{merchant}"}}"#);
        let form = api.post("/v1/boarding-forms", key, &body).await;
        let form = form.body["id"].as_str().unwrap().to_owned();
        Self {
            key: platform.private_key_id.clone(),
            hook,
            txn,
            delivery,
            merchant,
            form,
        }
    }

    /// Every route of a signed-in user: (method, path).
    fn routes(&self) -> Vec<(&'static str, String)> {
        let Self {
            key,
            hook,
            txn,
            delivery,
            merchant,
            form,
        } = self;
        let merchants = "/dashboard/merchants";
        let hooks = "/dashboard/settings/webhooks";
        let txns = "/dashboard/transactions";
        vec![
            ("GET", "/dashboard/keys".into()),
            ("GET", format!("/dashboard/keys/{key}/rename")),
            ("GET", format!("/dashboard/keys/{key}/delete")),
            ("GET", hooks.into()),
            ("GET", format!("{hooks}/{hook}")),
            ("GET", format!("{hooks}/{hook}/delete")),
            ("GET", txns.into()),
            ("GET", format!("{txns}/{txn}")),
            ("GET", format!("{txns}/{txn}/deliveries")),
            ("GET", format!("{txns}/{txn}/deliveries/{delivery}")),
            ("GET", merchants.into()),
            ("GET", format!("{merchants}/{merchant}")),
            ("GET", format!("{merchants}/{merchant}/delete")),
            ("GET", "/dashboard/money".into()),
            ("GET", format!("/dashboard/money?merchant={merchant}")),
            (
                "GET",
                format!("/dashboard/money/balance-transactions.csv?merchant={merchant}"),
            ),
            ("GET", "/dashboard/loans".into()),
            ("GET", "/dashboard/audit".into()),
            ("GET", "/dashboard/boarding".into()),
            ("GET", "/dashboard/processors".into()),
            ("POST", format!("/dashboard/boarding/{form}/decide")),
            ("POST", "/dashboard/keys".into()),
            ("POST", format!("/dashboard/keys/{key}/rename")),
            ("POST", format!("/dashboard/keys/{key}/activate")),
            ("POST", format!("/dashboard/keys/{key}/deactivate")),
            ("POST", format!("/dashboard/keys/{key}/delete")),
            ("POST", hooks.into()),
            ("POST", format!("{hooks}/{hook}")),
            ("POST", format!("{hooks}/{hook}/enable")),
            ("POST", format!("{hooks}/{hook}/disable")),
            ("POST", format!("{hooks}/{hook}/secret")),
            ("POST", format!("{hooks}/{hook}/delete")),
            ("POST", format!("{txns}/{txn}/deliveries/{delivery}/resend")),
            ("POST", merchants.into()),
            ("POST", format!("{merchants}/{merchant}")),
            ("POST", format!("{merchants}/{merchant}/delete")),
            ("POST", "/dashboard/mode".into()),
            ("GET", "/dashboard/platforms".into()),
            ("POST", "/dashboard/platforms".into()),
        ]
    }
}

/// Signed out, every page sends the browser to sign in and every change is refused the same
/// way; every page, signed in or not, has its headers; a sign-in from another site is refused.
async fn signed_out_every_route_sends_the_browser_to_sign_in(env: Env) {
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let server = env.serve();
    let routes = Targets::made(&server, &platform).await.routes();
    let pages = Pages {
        server: &server,
        http: client(),
    };
    for (method, path) in &routes {
        let response = pages.send(method, path, None, &[]).await;
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{method} {path}");
        assert_eq!(
            response.headers()[LOCATION],
            "/dashboard",
            "{method} {path}"
        );
    }
    for (path, status) in [
        ("/dashboard", StatusCode::OK),
        // A well-formed token that is no link's: said at once, as for any unusable link.
        (
            "/dashboard/welcome?token=ABCDEFGHIJKLMNOPQRSTUVWXYZ",
            StatusCode::NOT_FOUND,
        ),
        (
            "/dashboard/welcome?token=4111111111111111",
            StatusCode::NOT_FOUND,
        ),
    ] {
        let page = pages.send("GET", path, None, &[]).await;
        assert_eq!(page.status(), status, "{path}");
        assert_page_headers(page.headers(), path);
        assert!(
            !page.text().await.unwrap().contains("4111111111111111"),
            "never repeated"
        );
    }
    // A link's form posted back with a token that is not one of ours: refused in words,
    // and the token is not put back into the page, whichever refusal it meets.
    for (password, confirm) in [
        ("a long enough password", "another long password"),
        ("short", "short"),
        ("a long enough password", "a long enough password"),
    ] {
        let fields = [
            ("token", "4111111111111111"),
            ("password", password),
            ("confirm", confirm),
        ];
        let posted = pages
            .send("POST", "/dashboard/welcome", None, &fields)
            .await;
        assert_eq!(posted.status(), StatusCode::BAD_REQUEST);
        assert!(
            !posted.text().await.unwrap().contains("4111111111111111"),
            "never repeated: {password}"
        );
    }
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    for (method, path) in routes.iter().filter(|(m, _)| *m == "GET") {
        let page = pages.send(method, path, Some(&admin), &[]).await;
        assert_eq!(page.status(), StatusCode::OK, "{path}");
        assert_page_headers(page.headers(), path);
    }
    let elsewhere = pages
        .http
        .post(server.url("/dashboard/sign-in"))
        .header(ORIGIN, "http://evil.example")
        .form(&[("email", "owner@example.com"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(
        elsewhere.status(),
        StatusCode::FORBIDDEN,
        "no login forgery"
    );
}

/// Every page's path, asked with a method it does not take, is a 405 whose `Allow` names the
/// ones it takes (RFC 9110), signed in or not: the dashboard's, the hosted pages', the demo's.
async fn a_page_asked_with_another_method_names_the_ones_it_takes(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let mut routes = Targets::made(&server, &platform).await.routes();
    for (method, path) in [
        ("GET", "/dashboard"),
        ("POST", "/dashboard/sign-in"),
        ("POST", "/dashboard/sign-out"),
        ("GET", "/dashboard/welcome"),
        ("POST", "/dashboard/welcome"),
        ("GET", "/dashboard/reset"),
        ("POST", "/dashboard/reset"),
        ("GET", "/dashboard/assets/dashboard.css"),
        ("GET", "/dashboard/assets/dashboard.js"),
        ("GET", "/onboarding/AnyLinkAtAll"),
        ("POST", "/onboarding/AnyLinkAtAll"),
        ("GET", "/loans/AnyLinkAtAll"),
        ("POST", "/loans/AnyLinkAtAll"),
        ("GET", "/demo"),
        ("POST", "/demo/pay"),
        ("GET", "/demo/demo.js"),
        ("GET", "/demo/demo.css"),
        ("GET", "/favicon.ico"),
    ] {
        routes.push((method, path.to_owned()));
    }
    let mut takes: std::collections::BTreeMap<String, std::collections::BTreeSet<&str>> =
        std::collections::BTreeMap::new();
    for (method, path) in routes {
        takes.entry(path).or_default().insert(method);
    }
    let pages = Pages {
        server: &server,
        http: client(),
    };
    for (path, methods) in &takes {
        for other in ["GET", "POST", "PUT", "DELETE", "PATCH"] {
            if methods.contains(other) {
                continue;
            }
            let response = pages.send(other, path, None, &[]).await;
            assert_eq!(
                response.status(),
                StatusCode::METHOD_NOT_ALLOWED,
                "{other} {path}"
            );
            let allow: std::collections::BTreeSet<&str> = response.headers()["allow"]
                .to_str()
                .unwrap()
                .split(", ")
                .collect();
            assert_eq!(&allow, methods, "{other} {path}");
        }
    }
}

/// Every change: without the session's token, with a wrong one, or from another site, a 403
/// that changes nothing; a viewer's, with a good token, a 403 too.
async fn every_change_needs_the_token_our_origin_and_an_admin(env: Env) {
    let platform = owner_and_viewer(&env);
    let server = env.serve();
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let viewer = sign_in(&server, "viewer@example.com", VIEWER_PASSWORD).await;
    let (admin_token, viewer_token) = (pages.token(&admin).await, pages.token(&viewer).await);
    let change = |token| {
        [
            ("csrf", token),
            ("name", "Renamed"),
            ("type", "public"),
            ("mode", "live"),
            ("back", "/dashboard/keys"),
        ]
    };
    let wrong = "x".repeat(43);
    let targets = Targets::made(&server, &platform).await;
    let hook = &targets.hook;
    for (method, path) in targets.routes().iter().filter(|(m, _)| *m == "POST") {
        let forged = pages
            .send(method, path, Some(&admin), &change("")[1..])
            .await;
        assert_eq!(forged.status(), StatusCode::FORBIDDEN, "no token: {path}");
        assert_page_headers(forged.headers(), path);
        let guessed = pages
            .send(method, path, Some(&admin), &[("csrf", &wrong)])
            .await;
        assert_eq!(
            guessed.status(),
            StatusCode::FORBIDDEN,
            "a wrong token: {path}"
        );
        let elsewhere = pages
            .http
            .post(server.url(path))
            .header("cookie", &admin)
            .header(ORIGIN, "http://evil.example")
            .form(&change(&admin_token))
            .send()
            .await
            .unwrap();
        assert_eq!(
            elsewhere.status(),
            StatusCode::FORBIDDEN,
            "another site: {path}"
        );
        // Any signed-in user may switch the mode or the platform.
        if !["/dashboard/mode", "/dashboard/platforms"].contains(&path.as_str()) {
            let refused = pages
                .send(method, path, Some(&viewer), &change(&viewer_token))
                .await;
            assert_eq!(refused.status(), StatusCode::FORBIDDEN, "a viewer: {path}");
        }
    }
    let after = env.cli_json(&["keys", "list", "--platform", &platform.id]);
    let keys: Vec<(&str, bool)> = after["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["name"].as_str().unwrap(), k["active"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [("Default Private Key", true), ("Default Public Key", true)],
        "nothing refused happened"
    );
    let api = Api::new(&server);
    let still = api
        .get(&format!("/v1/webhooks/{hook}"), &platform.private_key)
        .await;
    assert_eq!(
        (
            still.body["active"].as_bool(),
            still.body["endpointUrl"].as_str()
        ),
        (Some(true), Some("https://example.com/hooks")),
        "{}",
        still.text
    );
    let all = api.get("/v1/webhooks", &platform.private_key).await;
    assert_eq!(all.body["data"].as_array().unwrap().len(), 1, "none made");
    let shops = api.get("/v1/merchants", &platform.private_key).await;
    let names: Vec<&str> = shops.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Shop"], "no merchant made, renamed or deleted");
    assert_only_the_setup_is_audited(&env).await;
}

/// The platform's keys and the API's subscription are in the audit log; no refused change is.
async fn assert_only_the_setup_is_audited(env: &Env) {
    let people = [
        "user.created",
        "user.invited",
        "user.password_set",
        "user.signed_in",
    ];
    let actions: Vec<String> = audit_rows(env, &[])
        .await
        .into_iter()
        .map(|[_, _, action, ..]| action)
        .filter(|a| !people.contains(&a.as_str()))
        .collect();
    assert_eq!(
        actions,
        ["key.generated", "key.generated", "webhook.created"]
    );
}

/// Spec 4.6's API Keys page and the sign-in around it, in a real browser.
async fn the_dashboard_in_a_browser(env: Env) {
    let platform = owner_and_viewer(&env);
    let invited = env.cli_json(&[
        "users",
        "create",
        "--platform",
        &platform.id,
        "--email",
        "new@example.com",
    ]);
    let invited = invited["id"].as_str().unwrap();
    let server = env.serve();
    // An Adyen connection for the Processors page (never called: nothing is paid through it).
    let adyen = Api::new(&server)
        .post(
            "/v1/processor-connections",
            &platform.private_key,
            r#"{"name": "Adyen EU", "kind": "adyen", "adyen": {"merchantAccount": "HoldfastECOM",
                "apiKey": "AQEyhmfxK4PNbhZGw0m/n3Q5qf3VYp5eHZJTfEA0SnT87bnhmUuNnMR1xGVMzlp",
                "hmacKey": "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056",
                "notificationUsername": "adyen", "notificationPassword": "notification-password"}}"#,
        )
        .await;
    assert_eq!(adyen.status, StatusCode::CREATED, "{}", adyen.text);
    let link = env.cli_json(&[
        "--public-url",
        server.url("").trim_end_matches('/'),
        "users",
        "invite",
        "--platform",
        &platform.id,
        invited,
    ]);
    browser(
        &env,
        &server,
        "dashboard.mjs",
        &[
            ("HOLDFAST_ADMIN_EMAIL", "owner@example.com"),
            ("HOLDFAST_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("HOLDFAST_VIEWER_EMAIL", "viewer@example.com"),
            ("HOLDFAST_VIEWER_PASSWORD", VIEWER_PASSWORD),
            ("HOLDFAST_INVITE_LINK", link["link"].as_str().unwrap()),
            ("HOLDFAST_INVITED_EMAIL", "new@example.com"),
        ],
    );
    let log = server.log();
    for secret in [ADMIN_PASSWORD, VIEWER_PASSWORD, "a brand new password"] {
        assert!(!log.contains(secret), "a password in the log");
    }
}

/// The operator CLI: a password too short is refused naming it, and nothing is set.
async fn the_cli_sets_passwords_within_the_rules(env: Env) {
    let platform = env.create_platform("Acme");
    let args = [
        "users",
        "set-password",
        "--platform",
        &platform.id,
        &platform.owner_id,
        "--password-stdin",
    ];
    let short = env.cli_with_input(&args, "short\n");
    assert!(!short.success);
    assert!(
        short
            .stderr
            .contains("password: must be 10 to 128 characters long"),
        "{}",
        short.stderr
    );
    assert!(!short.stderr.contains("short\n"), "never echoed");
    let nobody = [
        "users",
        "set-password",
        "--platform",
        &platform.id,
        "usr_nobody",
        "--password-stdin",
    ];
    let missing = env.cli_with_input(&nobody, "long enough password\n");
    assert!(
        !missing.success && missing.stderr.contains("user not found"),
        "{}",
        missing.stderr
    );
}

/// Settings → Webhooks: a subscription that failed three notifications, set inactive and
/// active in the dashboard, has a counter of 0, as the API then says too (spec 3.2); a
/// subscription made with the form has the signed-in user as its creator.
async fn a_failing_subscription_toggled_in_settings_counts_zero(env: Env) {
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let receiver = Receiver::start(Answer::status(500)).await;
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"]}}"#,
        receiver.url
    );
    let hook = api.post("/v1/webhooks", key, &body).await;
    let id = hook.body["id"].as_str().unwrap().to_owned();
    let shop = api.shop(key).await;
    for _ in 0..3 {
        api.auth(key, &shop).await;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while api.get(&format!("/v1/webhooks/{id}"), key).await.body["consecutiveFailures"] != 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "three failures in time"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let result = tempfile::NamedTempFile::new().unwrap();
    browser(
        &env,
        &server,
        "dashboard-webhooks.mjs",
        &[
            ("HOLDFAST_ADMIN_EMAIL", "owner@example.com"),
            ("HOLDFAST_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("HOLDFAST_WEBHOOK_ID", &id),
            ("HOLDFAST_RECEIVER_URL", &receiver.url),
            ("HOLDFAST_RESULT", result.path().to_str().unwrap()),
        ],
    );
    let now = api.get(&format!("/v1/webhooks/{id}"), key).await;
    assert_eq!(
        (
            now.body["active"].as_bool(),
            now.body["consecutiveFailures"].as_u64()
        ),
        (Some(true), Some(0)),
        "the API agrees: {}",
        now.text
    );
    let shown: serde_json::Value =
        serde_json::from_slice(&std::fs::read(result.path()).unwrap()).unwrap();
    assert_eq!(
        shown["secret"], now.body["secret"],
        "the secret revealed is the one that signs"
    );
    let made = std::fs::read(format!("{}.created", result.path().display())).unwrap();
    let made: serde_json::Value = serde_json::from_slice(&made).unwrap();
    let made = api
        .get(
            &format!("/v1/webhooks/{}", made["id"].as_str().unwrap()),
            key,
        )
        .await;
    assert_eq!(
        made.body["creatorId"],
        platform.owner_id.as_str(),
        "{}",
        made.text
    );
    assert_eq!(made.body["description"], "Orders");
}

/// Money in the dashboard: a merchant with a sale settled and part of it paid out shows its
/// balances, its payout and its four balance transactions in Chromium; the CSV export holds
/// the same postings, in the same order, as `GET /v1/balance-transactions`.
async fn a_merchants_money_is_shown_and_exported(env: Env) {
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_SETTLE_EVERY_MS", "0"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let shop = api.shop(key).await;
    let connections = api.get("/v1/processor-connections", key).await;
    let plan = serde_json::json!({"name": "At once", "fee": {"basisPoints": 0, "fixed": 59},
        "defaultConnectionId": connections.body["data"][0]["id"], "settlementDelayDays": 0});
    let plan = api.post("/v1/plans", key, &plan.to_string()).await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    let moved = serde_json::json!({"planId": plan.body["id"]}).to_string();
    let moved = api
        .patch(&format!("/v1/merchants/{shop}"), key, &moved)
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.text);
    let sale = format!(
        r#"{{"merchantId": "{shop}", "type": "sale", "amount": 2500, "payment": {{"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}}}"#
    );
    assert_eq!(
        api.post("/v1/transactions", key, &sale).await.status,
        StatusCode::CREATED
    );
    assert_eq!(env.cli_json(&["ledger", "settle"])["transactions"], 1);
    let payout = format!(r#"{{"merchantId": "{shop}", "amount": 1000}}"#);
    assert_eq!(
        api.post("/v1/payouts", key, &payout).await.status,
        StatusCode::CREATED
    );
    assert_eq!(env.cli_json(&["ledger", "pay-out"])["paid"], 1);
    let result = tempfile::NamedTempFile::new().unwrap();
    browser(
        &env,
        &server,
        "dashboard-money.mjs",
        &[
            ("HOLDFAST_ADMIN_EMAIL", "owner@example.com"),
            ("HOLDFAST_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("HOLDFAST_MERCHANT_ID", &shop),
            ("HOLDFAST_RESULT", result.path().to_str().unwrap()),
        ],
    );
    let csv = std::fs::read_to_string(result.path()).unwrap();
    let listed = api
        .get(&format!("/v1/balance-transactions?merchantId={shop}"), key)
        .await;
    let ids: Vec<&str> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let exported: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|line| line.split(',').next().unwrap())
        .collect();
    assert_eq!(exported, ids, "the CSV holds the API's postings, in order");
}

/// Spec 6.4 from the Transaction Log: the resent notification reaches the receiver with the
/// original `eventType` and `data` and a new `id`, the one the page said; once the subscription
/// is inactive, the resend is refused in words and nothing more arrives.
async fn a_delivery_resent_from_the_transaction_log_arrives_with_a_new_id(env: Env) {
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"]}}"#,
        receiver.url
    );
    assert_eq!(
        api.post("/v1/webhooks", key, &body).await.status,
        StatusCode::CREATED
    );
    let txn = one_auth(&api, key).await;
    receiver.wait_for(1, Duration::from_secs(20)).await;
    let result = tempfile::NamedTempFile::new().unwrap();
    browser(
        &env,
        &server,
        "dashboard-resend.mjs",
        &[
            ("HOLDFAST_ADMIN_EMAIL", "owner@example.com"),
            ("HOLDFAST_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("HOLDFAST_TRANSACTION_ID", &txn),
            ("HOLDFAST_RESULT", result.path().to_str().unwrap()),
        ],
    );
    let got = receiver.wait_for(2, Duration::from_secs(20)).await;
    let shown: serde_json::Value =
        serde_json::from_slice(&std::fs::read(result.path()).unwrap()).unwrap();
    let (first, again) = (got[0].json(), got[1].json());
    assert_eq!(again["id"], shown["resent"], "the id the page said");
    assert_ne!(again["id"], first["id"]);
    assert_eq!(again["eventType"], "transaction.created");
    assert_eq!(again["data"], first["data"], "the original data");
    assert_eq!(first["data"]["id"], txn.as_str());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        receiver.received().len(),
        2,
        "the refused resend sent nothing"
    );
}

/// Spec 6.4: an archived delivery (older than 15 days) cannot be resent. Its page says so and
/// offers no Resend Webhook; a resend posted anyway is refused in words and sends nothing.
async fn an_archived_delivery_is_not_resent(env: Env) {
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"]}}"#,
        receiver.url
    );
    let hook = api.post("/v1/webhooks", key, &body).await;
    let hook = hook.body["id"].as_str().unwrap();
    let txn = one_auth(&api, key).await;
    receiver.wait_for(1, Duration::from_secs(20)).await;
    let history = api
        .get(&format!("/v1/webhooks/{hook}/deliveries"), key)
        .await;
    let delivery = history.body["data"][0]["id"].as_str().unwrap();
    let later = (time::OffsetDateTime::now_utc() + time::Duration::days(16))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let archived = env.cli_json(&["deliveries", "archive", "--as-of", &later]);
    assert_eq!(archived["archived"], 1);

    let pages = Pages {
        server: &server,
        http: client(),
    };
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let path = format!("/dashboard/transactions/{txn}/deliveries/{delivery}");
    let page = pages.send("GET", &path, Some(&admin), &[]).await;
    let html = page.text().await.unwrap();
    assert!(html.contains("can no longer be resent"), "{html}");
    assert!(
        !html.contains("Resend Webhook"),
        "no button for an archived delivery"
    );
    let token = pages.token(&admin).await;
    let resend = format!("{path}/resend");
    let refused = pages
        .send("POST", &resend, Some(&admin), &[("csrf", &token)])
        .await;
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let html = refused.text().await.unwrap();
    assert!(html.contains("archived (older than 15 days)"), "{html}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(receiver.received().len(), 1, "nothing resent");
}

/// Spec 6.4 resends transaction notifications only: a merchant event's delivery is not on a
/// transaction's Webhook Deliveries tab, its page under a transaction is not found, and a resend
/// posted for it anyway is refused and queues nothing.
async fn a_merchant_event_is_never_offered_for_resend(env: Env) {
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let server = env.serve();
    let targets = Targets::made(&server, &platform).await;
    let api = Api::new(&server);
    let key = &platform.private_key;
    let history = format!("/v1/webhooks/{}/deliveries", targets.hook);
    let before = api.get(&history, key).await.body["data"].clone();
    let before = before.as_array().unwrap();
    let merchant_delivery = before
        .iter()
        .find(|d| d["eventType"] == "merchant.created")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let tab = format!("/dashboard/transactions/{}/deliveries", targets.txn);
    let listed = pages.send("GET", &tab, Some(&admin), &[]).await;
    let html = listed.text().await.unwrap();
    assert!(html.contains(&targets.delivery) && !html.contains(&merchant_delivery));
    let page = format!("{tab}/{merchant_delivery}");
    let shown = pages.send("GET", &page, Some(&admin), &[]).await;
    assert_eq!(shown.status(), StatusCode::NOT_FOUND);
    let token = pages.token(&admin).await;
    let resent = pages
        .send(
            "POST",
            &format!("{page}/resend"),
            Some(&admin),
            &[("csrf", &token)],
        )
        .await;
    assert_eq!(resent.status(), StatusCode::NOT_FOUND);
    let after = api.get(&history, key).await.body["data"].clone();
    assert_eq!(
        after.as_array().unwrap().len(),
        before.len(),
        "nothing queued"
    );
}

/// A custom header's value may be a credential for the receiver's gateway: the details every
/// member sees name the header, and only an admin's edit form carries its value
/// (docs/decisions.md, "Who sees a custom header's value").
async fn a_custom_headers_value_is_shown_to_admins_only(env: Env) {
    let platform = owner_and_viewer(&env);
    let server = env.serve();
    let api = Api::new(&server);
    let body = r#"{"endpointUrl": "https://example.com/hooks", "events": ["transaction.created"], "customHeader": {"name": "X-Gateway-Token", "value": "open-sesame-4242"}}"#;
    let made = api.post("/v1/webhooks", &platform.private_key, body).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let page = format!(
        "/dashboard/settings/webhooks/{}",
        made.body["id"].as_str().unwrap()
    );
    let pages = Pages {
        server: &server,
        http: client(),
    };
    for (email, password, sees) in [
        ("viewer@example.com", VIEWER_PASSWORD, false),
        ("owner@example.com", ADMIN_PASSWORD, true),
    ] {
        let cookie = sign_in(&server, email, password).await;
        let shown = pages.send("GET", &page, Some(&cookie), &[]).await;
        assert_eq!(shown.status(), StatusCode::OK, "{email}");
        let html = shown.text().await.unwrap();
        assert!(
            html.contains("X-Gateway-Token"),
            "{email}: the header is named"
        );
        assert_eq!(
            html.contains("open-sesame-4242"),
            sees,
            "{email}: its value"
        );
    }
}

on_both_backends!(
    a_page_asked_with_another_method_names_the_ones_it_takes,
    an_archived_delivery_is_not_resent,
    a_custom_headers_value_is_shown_to_admins_only,
    a_merchant_event_is_never_offered_for_resend,
    signed_out_every_route_sends_the_browser_to_sign_in,
    every_change_needs_the_token_our_origin_and_an_admin,
    the_dashboard_in_a_browser,
    the_cli_sets_passwords_within_the_rules,
    a_failing_subscription_toggled_in_settings_counts_zero,
    a_delivery_resent_from_the_transaction_log_arrives_with_a_new_id,
    a_merchants_money_is_shown_and_exported,
);
