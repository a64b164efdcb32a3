//! Webhook subscriptions and delivery, observed from outside: requests counted at a real
//! receiver, emails read from a real SMTP server (aiosmtpd), signatures checked by the
//! `standardwebhooks` package from `PyPI`.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::{
    Answer, Api, Backend, Env, Receiver, Server, SmtpServer, free_port, on_both_backends,
};
use reqwest::StatusCode;
use serde_json::Value;

/// Name, default answer, scripted first answers, requests made, outcome.
type Case<'a> = (&'a str, Option<Answer>, &'a [Answer], u32, &'a str);

const WAIT: Duration = Duration::from_secs(20);

/// Short timings so a full attempt (four requests) takes well under a second.
fn fast_env(smtp: &str) -> Vec<(&'static str, String)> {
    vec![
        ("HOLDFAST_BOOTSTRAP_DEMO", "false".into()),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8".into()),
        ("HOLDFAST_WEBHOOK_TIMEOUT_MS", "400".into()),
        ("HOLDFAST_WEBHOOK_BACKOFF_BASE_MS", "20".into()),
        ("HOLDFAST_WORKER_POLL_MS", "20".into()),
        ("HOLDFAST_SERVICE_NAME", "Acme Pay".into()),
        ("HOLDFAST_SMTP_URL", smtp.into()),
    ]
}

fn start(env: &Env, vars: &[(&'static str, String)]) -> Server {
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.serve_with(&pairs)
}

async fn merchant(api: &Api, key: &str) -> String {
    api.shop(key).await
}

/// One auth: one `transaction.created` event.
async fn pay(api: &Api, key: &str, merchant: &str) -> Value {
    api.auth(key, merchant).await
}

async fn subscribe(api: &Api, key: &str, url: &str) -> Value {
    let body = format!(
        r#"{{"endpointUrl": "{url}", "events": ["transaction.created"], "description": "Orders"}}"#
    );
    let reply = api.post("/v1/webhooks", key, &body).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.text);
    reply.body
}

async fn webhook(api: &Api, key: &str, id: &str) -> Value {
    api.get(&format!("/v1/webhooks/{id}"), key).await.body
}

/// Waits until `final_count` deliveries of the subscription are final; returns the history.
/// Fails the test if they are not final in time.
async fn history(api: &Api, key: &str, id: &str, final_count: usize) -> Vec<Value> {
    history_within(api, key, id, final_count, WAIT).await
}

async fn history_within(
    api: &Api,
    key: &str,
    id: &str,
    final_count: usize,
    limit: Duration,
) -> Vec<Value> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        let reply = api
            .get(&format!("/v1/webhooks/{id}/deliveries?limit=100"), key)
            .await;
        let data = reply.body["data"].as_array().cloned().unwrap_or_default();
        let done = data.iter().filter(|d| d["outcome"] != "pending").count();
        if done >= final_count {
            return data;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{done} of {final_count} deliveries final in time: {data:?}"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

#[expect(
    clippy::too_many_lines,
    reason = "one story: create, refuse, replace, list, delete"
)]
async fn subscriptions_are_validated_and_replaced_whole(env: Env) {
    let platform = env.create_platform("Acme");
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    for (body, param) in [
        (r#"{"events": ["transaction.created"]}"#, "endpointUrl"),
        (
            r#"{"endpointUrl": "ftp://x.example", "events": ["transaction.created"]}"#,
            "endpointUrl",
        ),
        (
            r#"{"endpointUrl": "https://x.example/h", "events": []}"#,
            "events",
        ),
        (
            r#"{"endpointUrl": "https://x.example/h", "events": ["transaction.exploded"]}"#,
            "events",
        ),
        (
            r#"{"endpointUrl": "https://x.example/h", "events": ["form.completed"], "customHeader": {"name": "Content-Type", "value": "x"}}"#,
            "customHeader.name",
        ),
        (
            r#"{"endpointUrl": "https://x.example/h", "events": ["form.completed"], "customHeader": {"name": "webhook-signature", "value": "x"}}"#,
            "customHeader.name",
        ),
        (
            r#"{"endpointUrl": "https://x.example/h", "events": ["form.completed"], "colour": "red"}"#,
            "colour",
        ),
        (
            r#"{"endpointUrl": "https://x.example/h", "events": ["form.completed"], "metadata": {"card": "5555555555554444"}}"#,
            "metadata",
        ),
    ] {
        let reply = api.post("/v1/webhooks", key, body).await;
        assert_eq!(
            (reply.status, reply.error_param()),
            (StatusCode::BAD_REQUEST, Some(param)),
            "{body}"
        );
    }
    assert_eq!(
        api.get("/v1/webhooks", key).await.body["data"],
        serde_json::json!([]),
        "nothing half-written"
    );

    let created = api
        .post(
            "/v1/webhooks",
            key,
            r#"{"endpointUrl": "https://x.example/h", "events": ["merchant.created", "transaction.created"], "description": "Orders", "customHeader": {"name": "X-Token", "value": "t1"}, "metadata": {"team": "payments"}}"#,
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    assert_eq!(
        created.body["metadata"],
        serde_json::json!({"team": "payments"})
    );
    let id = created.body["id"].as_str().unwrap();
    let secret = created.body["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(created.body["creatorId"], platform.owner_id.as_str());
    assert_eq!(created.body["active"], true);

    // PATCH replaces: what is not sent returns to its default; id, secret and creator stay,
    // even when another user's key makes the change.
    let user = env.cli_json(&[
        "users",
        "create",
        "--platform",
        &platform.id,
        "--email",
        "ops@example.com",
    ]);
    let other_key = env.cli_json(&[
        "keys",
        "create",
        "--platform",
        &platform.id,
        "--name",
        "Ops key",
        "--type",
        "private",
        "--mode",
        "test",
        "--user",
        user["id"].as_str().unwrap(),
    ]);
    let key = other_key["value"].as_str().unwrap();
    let replaced = api
        .patch(
            &format!("/v1/webhooks/{id}"),
            key,
            r#"{"endpointUrl": "https://y.example/h", "events": ["form.completed"]}"#,
        )
        .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.text);
    assert_eq!(replaced.body["description"], Value::Null);
    assert_eq!(replaced.body["customHeader"], Value::Null);
    assert_eq!(
        replaced.body["metadata"],
        serde_json::json!({}),
        "a replacement without metadata has none"
    );
    assert_eq!(
        (
            replaced.body["id"].as_str(),
            replaced.body["secret"].as_str()
        ),
        (Some(id), Some(secret))
    );
    assert_eq!(replaced.body["creatorId"], platform.owner_id.as_str());
    let missing = api
        .patch(
            &format!("/v1/webhooks/{id}"),
            key,
            r#"{"events": ["form.completed"]}"#,
        )
        .await;
    assert_eq!(missing.error_param(), Some("endpointUrl"));

    let listed = api.get("/v1/webhooks", key).await;
    assert_eq!(listed.body["data"][0]["active"], true);
    let types = api.get("/v1/webhooks/event-types", key).await;
    let names: Vec<&str> = types.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_str().unwrap())
        .collect();
    for needed in [
        "transaction.created",
        "merchant.created",
        "merchant.updated",
        "merchant.deleted",
        "form.completed",
    ] {
        assert!(names.contains(&needed), "{needed}");
    }
    assert_eq!(
        api.delete(&format!("/v1/webhooks/{id}"), key).await.status,
        StatusCode::OK
    );
    assert_eq!(
        api.get(&format!("/v1/webhooks/{id}"), key).await.status,
        StatusCode::NOT_FOUND
    );
}

async fn deliveries_are_signed_and_verifiable(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"], "customHeader": {{"name": "X-Gateway", "value": "open-sesame"}}}}"#,
        receiver.url
    );
    let hook = api.post("/v1/webhooks", key, &body).await.body;
    let before = time::OffsetDateTime::now_utc();
    let txn = pay(&api, key, &m).await;
    let got = receiver.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1);
    let request = &got[0];
    let sent = request.json();
    assert_eq!(sent["eventType"], "transaction.created");
    assert_eq!(
        sent["data"], txn,
        "data is the transaction exactly as the API returned it"
    );
    assert!(sent["id"].as_str().unwrap().starts_with("ntf_"));
    assert_eq!(request.header("webhook-id"), sent["id"].as_str().unwrap());
    assert_eq!(request.header("x-gateway"), "open-sesame");
    assert_eq!(request.header("content-type"), "application/json");
    holdfast_e2e::verify_signature(hook["secret"].as_str().unwrap(), request).unwrap();

    let id = hook["id"].as_str().unwrap();
    let records = history(&api, key, id, 1).await;
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["outcome"], "succeeded");
    assert_eq!(records[0]["requests"], 1);
    assert_eq!(records[0]["requestBody"].as_str().unwrap(), request.body);
    assert_eq!(
        records[0]["response"], "answered 200",
        "a success records the receiver's body"
    );
    let attempted = time::OffsetDateTime::parse(
        records[0]["attemptedOn"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let slack = time::Duration::seconds(1);
    assert!(
        before - slack <= attempted && attempted <= time::OffsetDateTime::now_utc() + slack,
        "attemptedOn is the attempt's time: {attempted}"
    );
    assert_eq!(webhook(&api, key, id).await["consecutiveFailures"], 0);
}

/// Spec 6.2, row by row: how many requests each answer costs, and the final outcome.
async fn retries_follow_the_delivery_table(env: Env) {
    let platform = env.create_platform("Acme");
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let slow = Answer::slow(200, Duration::from_millis(1500));
    let cases: [Case; 5] = [
        ("5xx", Some(Answer::status(503)), &[], 4, "failed"),
        ("4xx", Some(Answer::status(404)), &[], 1, "failed"),
        (
            "3xx is not followed",
            Some(Answer::status(302)),
            &[],
            1,
            "failed",
        ),
        ("timeout", Some(slow), &[], 4, "failed"),
        (
            "two 5xx then 2xx",
            Some(Answer::status(200)),
            &[Answer::status(500), Answer::status(502)],
            3,
            "succeeded",
        ),
    ];
    for (name, default, script, requests, outcome) in cases {
        let receiver = Receiver::start(default.unwrap()).await;
        receiver.script(script);
        let hook = subscribe(&api, key, &receiver.url).await;
        let id = hook["id"].as_str().unwrap();
        pay(&api, key, &m).await;
        let records = history(&api, key, id, 1).await;
        assert_eq!(records[0]["outcome"], outcome, "{name}: {}", records[0]);
        assert_eq!(records[0]["requests"], requests, "{name}");
        assert_eq!(
            receiver.received().len(),
            requests as usize,
            "{name}: counted at the receiver"
        );
        let failures = webhook(&api, key, id).await["consecutiveFailures"].clone();
        assert_eq!(failures, u32::from(outcome == "failed"), "{name}");
        api.delete(&format!("/v1/webhooks/{id}"), key).await;
    }
    // No one there, and no such host: four attempts each, in the history.
    for (name, url) in [
        (
            "connection refused",
            format!("http://127.0.0.1:{}/hooks", free_port()),
        ),
        (
            "unresolvable host",
            "http://no-such-host.invalid/hooks".to_owned(),
        ),
    ] {
        let hook = subscribe(&api, key, &url).await;
        let id = hook["id"].as_str().unwrap();
        pay(&api, key, &m).await;
        let records = history(&api, key, id, 1).await;
        assert_eq!(
            (
                records[0]["outcome"].as_str(),
                records[0]["requests"].as_u64()
            ),
            (Some("failed"), Some(4)),
            "{name}: {}",
            records[0]
        );
        api.delete(&format!("/v1/webhooks/{id}"), key).await;
    }
    // The SSRF guard: without the allow list, loopback is refused, and says so.
    drop(server);
}

async fn twenty_five_failures_disable_and_email_the_creator_once(env: Env) {
    let platform = env.create_platform("Acme");
    let smtp = SmtpServer::start();
    let receiver = Receiver::start(Answer::status(400)).await;
    let server = start(&env, &fast_env(&smtp.url()));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    let id = hook["id"].as_str().unwrap();
    for _ in 0..25 {
        pay(&api, key, &m).await;
    }
    history(&api, key, id, 25).await;
    let now = webhook(&api, key, id).await;
    assert_eq!(
        (now["active"].as_bool(), now["consecutiveFailures"].as_u64()),
        (Some(false), Some(25))
    );
    let mails = smtp.wait_for(1, WAIT).await;
    assert_eq!(mails.len(), 1);
    assert_eq!(
        mails[0].subject,
        "Acme Pay - Webhook Subscription Automatically Disabled"
    );
    assert!(mails[0].to.contains("owner@example.com"), "{}", mails[0].to);
    for needed in [id, receiver.url.as_str(), "Orders"] {
        assert!(
            mails[0].body.contains(needed),
            "{needed} in {}",
            mails[0].body
        );
    }
    // Events while inactive are never queued: no record, not even a skipped one.
    pay(&api, key, &m).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(history(&api, key, id, 25).await.len(), 25);
    // A PATCH without `active` leaves the subscription as it is: still inactive.
    let same = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"]}}"#,
        receiver.url
    );
    let kept = api.patch(&format!("/v1/webhooks/{id}"), key, &same).await;
    assert_eq!(kept.body["active"], false, "{}", kept.text);
    // PATCH active: true keeps the counter at 25; the next failure disables again, with an email.
    let patch = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"], "active": true}}"#,
        receiver.url
    );
    let re = api.patch(&format!("/v1/webhooks/{id}"), key, &patch).await;
    assert_eq!(
        (
            re.body["active"].as_bool(),
            re.body["consecutiveFailures"].as_u64()
        ),
        (Some(true), Some(25))
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        receiver.received().len(),
        25,
        "nothing from while it was inactive"
    );
    assert_eq!(
        history(&api, key, id, 25).await.len(),
        25,
        "and nothing queued"
    );
    pay(&api, key, &m).await;
    history(&api, key, id, 26).await;
    assert_eq!(webhook(&api, key, id).await["active"], false);
    assert_eq!(smtp.wait_for(2, WAIT).await.len(), 2);
    // The operator toggle resets the counter.
    let enabled = env.cli_json(&["webhooks", "enable", "--platform", &platform.id, id]);
    assert_eq!(
        (
            enabled["active"].as_bool(),
            enabled["consecutiveFailures"].as_u64()
        ),
        (Some(true), Some(0))
    );
    // One more failure counts 1; a success then resets the counter to 0.
    pay(&api, key, &m).await;
    history(&api, key, id, 27).await;
    assert_eq!(webhook(&api, key, id).await["consecutiveFailures"], 1);
    receiver.set_default(Answer::status(200));
    pay(&api, key, &m).await;
    let records = history(&api, key, id, 28).await;
    assert_eq!(records[0]["outcome"], "succeeded");
    let now = webhook(&api, key, id).await;
    assert_eq!(
        (now["active"].as_bool(), now["consecutiveFailures"].as_u64()),
        (Some(true), Some(0))
    );
    // Longer than the mail loop's 1 s poll, so a third email would have been sent by now.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(smtp.mails().len(), 2, "exactly one email per disable");
}

async fn no_email_when_the_creator_is_gone(env: Env) {
    let platform = env.create_platform("Acme");
    let user = env.cli_json(&[
        "users",
        "create",
        "--platform",
        &platform.id,
        "--email",
        "ops@example.com",
    ]);
    let user_id = user["id"].as_str().unwrap();
    let key = env.cli_json(&[
        "keys",
        "create",
        "--platform",
        &platform.id,
        "--name",
        "Ops key",
        "--type",
        "private",
        "--mode",
        "test",
        "--user",
        user_id,
    ]);
    let key = key["value"].as_str().unwrap().to_owned();
    let smtp = SmtpServer::start();
    let receiver = Receiver::start(Answer::status(410)).await;
    let server = start(&env, &fast_env(&smtp.url()));
    let api = Api::new(&server);
    let m = merchant(&api, &key).await;
    let hook = subscribe(&api, &key, &receiver.url).await;
    let id = hook["id"].as_str().unwrap();
    assert_eq!(hook["creatorId"], user_id);
    env.cli_json(&["users", "delete", "--platform", &platform.id, user_id]);
    for _ in 0..25 {
        pay(&api, &key, &m).await;
    }
    history(&api, &key, id, 25).await;
    assert_eq!(
        webhook(&api, &key, id).await["active"],
        false,
        "still disabled"
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        smtp.mails().is_empty(),
        "no email: the creator no longer exists"
    );
}

async fn each_subscription_delivers_on_its_own(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let a = subscribe(&api, key, &receiver.url).await;
    let b = subscribe(&api, key, &receiver.url).await;
    pay(&api, key, &m).await;
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(
        got.len(),
        2,
        "two subscriptions on one URL: two notifications"
    );
    assert_ne!(got[0].header("webhook-id"), got[1].header("webhook-id"));
    for hook in [a, b] {
        let records = history(&api, key, hook["id"].as_str().unwrap(), 1).await;
        assert_eq!(records.len(), 1);
    }
}

async fn a_killed_worker_loses_nothing(env: Env) {
    let platform = env.create_platform("Acme");
    // The first request hangs past the kill; after the restart the receiver answers at once.
    let receiver = Receiver::start(Answer::status(200)).await;
    receiver.script(&[Answer::slow(200, Duration::from_secs(30))]);
    let mut vars = fast_env("smtp://127.0.0.1:1");
    vars.retain(|(k, _)| *k != "HOLDFAST_WEBHOOK_TIMEOUT_MS");
    vars.push(("HOLDFAST_WEBHOOK_TIMEOUT_MS", "1000".into()));
    let mut server = start(&env, &vars);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    pay(&api, key, &m).await;
    let first = receiver.wait_for(1, WAIT).await;
    assert_eq!(first.len(), 1);
    server.stop_with("KILL");
    let server = start(&env, &vars);
    let api = Api::new(&server);
    let records = history(&api, key, hook["id"].as_str().unwrap(), 1).await;
    assert_eq!(records[0]["outcome"], "succeeded", "{}", records[0]);
    let all = receiver.received();
    let ids: Vec<&str> = all.iter().map(|r| r.header("webhook-id")).collect();
    assert!(
        ids.len() >= 2 && ids.iter().all(|i| *i == ids[0]),
        "redelivered with the same webhook-id: {ids:?}"
    );
}

async fn an_email_waits_for_a_down_smtp_server(env: Env) {
    let platform = env.create_platform("Acme");
    let port = free_port();
    let receiver = Receiver::start(Answer::status(400)).await;
    let server = start(&env, &fast_env(&SmtpServer::url_for(port)));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    for _ in 0..25 {
        pay(&api, key, &m).await;
    }
    history(&api, key, hook["id"].as_str().unwrap(), 25).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let smtp = SmtpServer::start_on(port);
    let mails = smtp.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(mails.len(), 1, "delivered once the server is up");
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(smtp.mails().len(), 1, "and only once");
}

/// A resend is the same event, recognisable by its id, in a new notification.
fn the_same_event_in_a_new_notification(
    original: &holdfast_e2e::Received,
    resent: &holdfast_e2e::Received,
) {
    let event = |body: Value| {
        (
            body["eventId"].clone(),
            body["eventType"].clone(),
            body["data"].clone(),
            body["createdOn"].clone(),
        )
    };
    assert_eq!(event(original.json()), event(resent.json()));
    assert!(
        original.json()["eventId"]
            .as_str()
            .is_some_and(|e| e.starts_with("evt_")),
        "{}",
        original.json()
    );
    assert_ne!(original.json()["id"], resent.json()["id"]);
    assert_eq!(original.json()["id"], original.header("webhook-id"));
}

async fn retention_and_resend(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    let id = hook["id"].as_str().unwrap();
    pay(&api, key, &m).await;
    let records = history(&api, key, id, 1).await;
    let first = records[0]["id"].as_str().unwrap().to_owned();

    // Resend: queued with a new id, the same eventType and data, its own record, to the
    // subscription's current URL and custom header (it moved since the first delivery).
    let moved = Receiver::start(Answer::status(200)).await;
    let patch = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"], "customHeader": {{"name": "X-Route", "value": "new"}}}}"#,
        moved.url
    );
    assert_eq!(
        api.patch(&format!("/v1/webhooks/{id}"), key, &patch)
            .await
            .status,
        StatusCode::OK
    );
    let queued = env.cli_json(&["deliveries", "resend", "--platform", &platform.id, &first]);
    assert_ne!(queued["id"].as_str().unwrap(), first);
    assert_eq!(queued["resentFrom"], first.as_str());
    let got = moved.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("x-route"), "new");
    let original = &receiver.received()[0];
    assert_eq!(receiver.received().len(), 1, "nothing more to the old URL");
    assert_ne!(original.header("webhook-id"), got[0].header("webhook-id"));
    // The event resent as it happened: its type, its data and its time (docs/webhooks.md:
    // `createdOn` is when the event happened).
    the_same_event_in_a_new_notification(original, &got[0]);
    let records = history(&api, key, id, 2).await;
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["endpointUrl"], moved.url.as_str());
    // For a person, one line per record, its state in the API's words.
    let listed = env.cli(&[
        "deliveries",
        "list",
        "--platform",
        &platform.id,
        "--webhook",
        id,
    ]);
    assert!(listed.success, "{}", listed.stderr);
    assert_eq!(listed.stdout.lines().count(), 2, "{}", listed.stdout);
    assert!(
        listed
            .stdout
            .lines()
            .all(|line| line.contains("  succeeded  ")),
        "{}",
        listed.stdout
    );

    // Refused while inactive, with the remedy in the message.
    env.cli_json(&["webhooks", "disable", "--platform", &platform.id, id]);
    let refused = env.cli(&["deliveries", "resend", "--platform", &platform.id, &first]);
    assert!(!refused.success);
    assert!(refused.stderr.contains("re-enable"), "{}", refused.stderr);
    env.cli_json(&["webhooks", "enable", "--platform", &platform.id, id]);

    // Retention with a fixed clock: 16 days on, the record stays, its bodies go.
    let later = (time::OffsetDateTime::now_utc() + time::Duration::days(16))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    // 14 days on, nothing is old enough; 16 days on, both records are.
    let sooner = (time::OffsetDateTime::now_utc() + time::Duration::days(14))
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let archived = env.cli_json(&["deliveries", "archive", "--as-of", &sooner]);
    assert_eq!(archived["archived"], 0);
    let archived = env.cli_json(&["deliveries", "archive", "--as-of", &later]);
    assert_eq!(archived["archived"], 2);
    let records = history(&api, key, id, 2).await;
    assert_eq!(records.len(), 2);
    assert!(
        records.iter().all(|r| r["archived"] == true
            && r["requestBody"].is_null()
            && r["response"].is_null())
    );
    assert!(
        records.iter().all(|r| r["outcome"] == "succeeded"),
        "the outcome stays"
    );
    let refused = env.cli(&["deliveries", "resend", "--platform", &platform.id, &first]);
    assert!(!refused.success);
    assert!(refused.stderr.contains("archived"), "{}", refused.stderr);
    let unknown = env.cli(&[
        "deliveries",
        "resend",
        "--platform",
        &platform.id,
        "ntf_nothing",
    ]);
    assert!(!unknown.success);
    assert!(unknown.stderr.contains("not found"), "{}", unknown.stderr);
}

async fn the_ssrf_guard_refuses_loopback_by_default(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let mut vars = fast_env("smtp://127.0.0.1:1");
    vars.retain(|(k, _)| *k != "HOLDFAST_WEBHOOK_ALLOW_NETWORKS");
    let server = start(&env, &vars);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    pay(&api, key, &m).await;
    let records = history(&api, key, hook["id"].as_str().unwrap(), 1).await;
    assert_eq!(
        (
            records[0]["outcome"].as_str(),
            records[0]["requests"].as_u64()
        ),
        (Some("failed"), Some(1))
    );
    let error = records[0]["response"].as_str().unwrap();
    assert!(
        error.contains("127.0.0.1") && error.contains("not a public address"),
        "{error}"
    );
    assert!(
        receiver.received().is_empty(),
        "nothing reached the receiver"
    );
}

/// The real 5 s timeout of spec 6.2, against a receiver that answers after 6 s.
async fn the_real_five_second_timeout(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::slow(200, Duration::from_secs(6))).await;
    let mut vars = fast_env("smtp://127.0.0.1:1");
    vars.retain(|(k, _)| *k != "HOLDFAST_WEBHOOK_TIMEOUT_MS");
    let server = start(&env, &vars);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    pay(&api, key, &m).await;
    let records = history_within(
        &api,
        key,
        hook["id"].as_str().unwrap(),
        1,
        Duration::from_secs(40),
    )
    .await;
    assert_eq!(
        (
            records[0]["outcome"].as_str(),
            records[0]["requests"].as_u64()
        ),
        (Some("failed"), Some(4)),
        "{}",
        records[0]
    );
    assert_eq!(records[0]["response"], "timed out");
    let got = receiver.received();
    assert_eq!(got.len(), 4);
    let first_gap = got[1].at - got[0].at;
    assert!(
        first_gap >= Duration::from_secs(5),
        "each request waited its 5 s: {first_gap:?}"
    );
}

async fn merchant_events_are_delivered_but_not_resendable(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["merchant.created", "merchant.updated", "merchant.deleted"]}}"#,
        receiver.url
    );
    let hook = api.post("/v1/webhooks", key, &body).await.body;
    let created = api
        .post("/v1/merchants", key, r#"{"name": "Shop"}"#)
        .await
        .body;
    let id = created["id"].as_str().unwrap().to_owned();
    let updated = api
        .patch(
            &format!("/v1/merchants/{id}"),
            key,
            r#"{"name": "Shop Ltd"}"#,
        )
        .await
        .body;
    api.delete(&format!("/v1/merchants/{id}"), key).await;
    let got = receiver.wait_for(3, WAIT).await;
    let mut seen: Vec<(String, Value)> = got
        .iter()
        .map(|r| {
            (
                r.json()["eventType"].as_str().unwrap().to_owned(),
                r.json()["data"].clone(),
            )
        })
        .collect();
    seen.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        seen,
        [
            ("merchant.created".to_owned(), created),
            (
                "merchant.deleted".to_owned(),
                serde_json::json!({"id": id, "deleted": true})
            ),
            ("merchant.updated".to_owned(), updated),
        ],
        "data is the merchant exactly as the API returned it"
    );
    let records = history(&api, key, hook["id"].as_str().unwrap(), 3).await;
    assert_eq!(records.len(), 3);
    let refused = env.cli(&[
        "deliveries",
        "resend",
        "--platform",
        &platform.id,
        records[0]["id"].as_str().unwrap(),
    ]);
    assert!(!refused.success);
    assert!(
        refused.stderr.contains("only transaction notifications"),
        "{}",
        refused.stderr
    );
}

/// SIGTERM mid-attempt: the attempt finishes before the process exits, so the notification is
/// neither cut short nor sent again after a restart.
async fn a_graceful_stop_finishes_the_attempt_in_flight(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    receiver.script(&[Answer::slow(200, Duration::from_millis(1500))]);
    let mut vars = fast_env("smtp://127.0.0.1:1");
    vars.retain(|(k, _)| *k != "HOLDFAST_WEBHOOK_TIMEOUT_MS");
    vars.push(("HOLDFAST_WEBHOOK_TIMEOUT_MS", "3000".into()));
    let mut server = start(&env, &vars);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    pay(&api, key, &m).await;
    assert_eq!(receiver.wait_for(1, WAIT).await.len(), 1);
    assert!(server.terminate().success(), "{}", server.log());
    let server = start(&env, &vars);
    let api = Api::new(&server);
    let records = history(&api, key, hook["id"].as_str().unwrap(), 1).await;
    assert_eq!(
        (
            records[0]["outcome"].as_str(),
            records[0]["requests"].as_u64()
        ),
        (Some("succeeded"), Some(1)),
        "{}",
        records[0]
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(
        receiver.received().len(),
        1,
        "sent once, not again after the restart"
    );
}

/// A notification queued while the subscription was active, whose subscription is switched off
/// before its turn, is not sent, and its record says why.
async fn a_notification_of_a_since_disabled_subscription_is_skipped(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let mut idle = fast_env("smtp://127.0.0.1:1");
    idle.push(("HOLDFAST_WORKERS", "0".into()));
    let server = start(&env, &idle);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    let id = hook["id"].as_str().unwrap();
    pay(&api, key, &m).await;
    env.cli_json(&["webhooks", "disable", "--platform", &platform.id, id]);
    drop(server);
    // Now a process with workers takes its turn.
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let records = history(&api, key, id, 1).await;
    assert_eq!(
        (
            records[0]["outcome"].as_str(),
            records[0]["requests"].as_u64()
        ),
        (Some("skipped"), Some(0))
    );
    assert!(
        records[0]["response"]
            .as_str()
            .unwrap()
            .contains("inactive"),
        "{}",
        records[0]
    );
    assert!(receiver.received().is_empty());
    assert_eq!(
        webhook(&api, key, id).await["consecutiveFailures"],
        0,
        "a skip is no failure"
    );
}

/// At most `HOLDFAST_WEBHOOK_MAX_SUBSCRIPTIONS` per platform and mode, even created at once:
/// one more is a 400 `limit_reached`; the other mode has its own room.
async fn subscriptions_are_capped_per_platform_and_mode(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WEBHOOK_MAX_SUBSCRIPTIONS", "3"),
    ]);
    let api = Api::new(&server);
    let body = r#"{"endpointUrl": "https://example.com/h", "events": ["transaction.created"]}"#;
    let sent: Vec<_> = (0..6)
        .map(|_| {
            let (api, key) = (api.clone(), platform.private_key.clone());
            tokio::spawn(async move { api.post("/v1/webhooks", &key, body).await })
        })
        .collect();
    let mut created = 0;
    for reply in sent {
        let reply = reply.await.unwrap();
        if reply.status == StatusCode::CREATED {
            created += 1;
        } else {
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{}", reply.text);
            assert_eq!(
                reply.body["error"]["code"], "limit_reached",
                "{}",
                reply.text
            );
        }
    }
    assert_eq!(created, 3);
    let other_mode = api.post("/v1/webhooks", &live, body).await;
    assert_eq!(
        other_mode.status,
        StatusCode::CREATED,
        "{}",
        other_mode.text
    );
}

/// Issue 8: one platform's dead endpoints (the cap of them, each with a burst queued) never
/// delay another platform's notification by more than 2 s. A's endpoint answers 500 after 4.5 s,
/// so each of its attempts holds a delivery slot for about 20 s; 160 of them would fill all 128
/// slots and make B wait a whole round.
async fn a_slow_platform_never_delays_another(env: Env) {
    let a = env.create_platform("Slow");
    let b = env.create_platform("Fast");
    let slow = Receiver::start(Answer::slow(500, Duration::from_millis(4500))).await;
    let fast = Receiver::start(Answer::status(204)).await;
    let mut vars = fast_env("smtp://127.0.0.1:1");
    vars.retain(|(k, _)| *k != "HOLDFAST_WEBHOOK_TIMEOUT_MS");
    // 4.5 s is an answer (a 500), not a timeout.
    vars.push(("HOLDFAST_WEBHOOK_TIMEOUT_MS", "5000".into()));
    // The defaults: 128 slots, 16 subscriptions, 16 in flight per subscription, 64 per platform.
    let server = start(&env, &vars);
    let api = Api::new(&server);
    let (ka, kb) = (&a.private_key, &b.private_key);
    let (ma, mb) = (merchant(&api, ka).await, merchant(&api, kb).await);
    for _ in 0..16 {
        subscribe(&api, ka, &slow.url).await;
    }
    subscribe(&api, kb, &fast.url).await;
    for _ in 0..10 {
        pay(&api, ka, &ma).await;
    }
    // A fills its platform's cap: 64 attempts in flight, each held for 4.5 s and more.
    let early = slow.wait_for(64, Duration::from_secs(4)).await;
    assert!(early.len() >= 64, "A's attempts started: {}", early.len());
    let first_a = early[0].at;

    let sent = std::time::Instant::now();
    pay(&api, kb, &mb).await;
    let got = fast.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 1, "B's notification arrived");
    let delay = got[0].at - sent;
    assert!(
        delay < Duration::from_secs(2),
        "B waited {delay:?} behind A's dead endpoints"
    );
    // Until A's first answers come back (4.5 s), every request A's endpoint saw is an attempt
    // in flight: at most the platform's cap.
    let answers_start = first_a + Duration::from_millis(4400);
    let a_in_flight = slow
        .received()
        .iter()
        .filter(|r| r.at < answers_start)
        .count();
    assert_eq!(a_in_flight, 64, "A held its cap of slots, never more");
}

/// Issue 8: with the most subscriptions a platform may have, 60 auths at once are each
/// answered 201 (none 500 after the processor approved it, which SQLite's single writer used to
/// cause), and every one of their notifications is delivered.
async fn sixty_concurrent_auths_with_a_full_fan_out_are_all_recorded(env: Env) {
    let p = env.create_platform("Busy");
    let receiver = Receiver::start(Answer::status(204)).await;
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let m = merchant(&api, &p.private_key).await;
    for _ in 0..16 {
        subscribe(&api, &p.private_key, &receiver.url).await;
    }
    let mut auths = tokio::task::JoinSet::new();
    for _ in 0..60 {
        let (api, key, m) = (api.clone(), p.private_key.clone(), m.clone());
        auths.spawn(async move { pay(&api, &key, &m).await });
    }
    let ids: std::collections::BTreeSet<String> = auths
        .join_all()
        .await
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 60, "sixty transactions, each answered 201");
    let got = receiver.wait_for(60 * 16, WAIT).await;
    let mut delivered = std::collections::BTreeMap::<String, usize>::new();
    for r in &got {
        let id = r.json()["data"]["id"].as_str().unwrap().to_owned();
        *delivered.entry(id).or_default() += 1;
    }
    assert_eq!(got.len(), 60 * 16, "one delivery per subscription and auth");
    assert!(
        ids.iter().all(|id| delivered.get(id) == Some(&16)),
        "each auth reached all 16 subscriptions"
    );
}

/// Issue 8: a rotated secret keeps signing beside the new one for the overlap (24 hours by
/// default, 4 s here): each delivery then verifies under either secret with the reference
/// library; after it, only under the new one. A retried rotation replays, it does not rotate
/// twice.
async fn a_rotated_secret_signs_beside_the_new_one_for_the_overlap(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(204)).await;
    let mut vars = fast_env("smtp://127.0.0.1:1");
    vars.push(("HOLDFAST_WEBHOOK_SECRET_OVERLAP_S", "4".into()));
    let server = start(&env, &vars);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    let hook = subscribe(&api, key, &receiver.url).await;
    let id = hook["id"].as_str().unwrap();
    let old = hook["secret"].as_str().unwrap();
    assert_eq!(hook["previousSecretExpiresOn"], Value::Null);

    let path = format!("/v1/webhooks/{id}/rotate-secret");
    let rotated = api.post_once(&path, key, "rotate-1", "").await;
    let overlap_ends = std::time::Instant::now() + Duration::from_secs(4);
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.text);
    let new = rotated.body["secret"].as_str().unwrap();
    assert!(new.starts_with("whsec_") && new != old);
    assert!(rotated.body["previousSecretExpiresOn"].is_string());
    let retried = api.post_once(&path, key, "rotate-1", "").await;
    assert_eq!(retried.headers["idempotent-replayed"], "true");
    // The replay is the rotation's answer as stored: without the secret, kept in no answer.
    let mut without_secret = rotated.body.clone();
    without_secret.as_object_mut().unwrap().remove("secret");
    assert_eq!(retried.body, without_secret, "a retry replays the rotation");
    assert_eq!(webhook(&api, key, id).await["secret"], new, "rotated once");

    pay(&api, key, &m).await;
    let during = receiver.wait_for(1, WAIT).await;
    assert_eq!(during.len(), 1);
    let signatures = during[0].header("webhook-signature").to_owned();
    assert_eq!(signatures.matches("v1,").count(), 2, "{signatures}");
    holdfast_e2e::verify_signature(new, &during[0]).unwrap();
    holdfast_e2e::verify_signature(old, &during[0]).unwrap();

    tokio::time::sleep_until(overlap_ends.into()).await;
    pay(&api, key, &m).await;
    let after = receiver.wait_for(2, WAIT).await;
    assert_eq!(after.len(), 2);
    assert_eq!(
        after[1].header("webhook-signature").matches("v1,").count(),
        1
    );
    holdfast_e2e::verify_signature(new, &after[1]).unwrap();
    assert!(
        holdfast_e2e::verify_signature(old, &after[1]).is_err(),
        "the old secret no longer signs"
    );

    let unknown = api
        .post(
            "/v1/webhooks/wh_0000000000000000000000000/rotate-secret",
            key,
            "",
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.text);
}

/// `POST /v1/webhooks/{id}/test`: a `webhook.test` event to that subscription only (another
/// that names the type hears nothing), signed and in its history like any notification; an
/// inactive subscription is refused (409), another mode's or an unknown one is not found.
async fn a_test_event_reaches_its_subscription_only(env: Env) {
    let platform = env.create_platform("Acme");
    let asked = Receiver::start(Answer::status(200)).await;
    let listening = Receiver::start(Answer::status(200)).await;
    let server = start(&env, &fast_env("smtp://127.0.0.1:1"));
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = subscribe(&api, key, &asked.url).await;
    let id = hook["id"].as_str().unwrap();
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["webhook.test"]}}"#,
        listening.url
    );
    assert_eq!(
        api.post("/v1/webhooks", key, &body).await.status,
        StatusCode::CREATED
    );

    let queued = api.post(&format!("/v1/webhooks/{id}/test"), key, "").await;
    assert_eq!(queued.status, StatusCode::ACCEPTED, "{}", queued.text);
    assert_eq!(queued.body["eventType"], "webhook.test");
    assert_eq!(queued.body["webhookId"], id);
    assert_eq!(queued.body["outcome"], "pending", "queued, not delivered");
    let got = asked.wait_for(1, WAIT).await;
    let sent = got[0].json();
    assert_eq!(sent["eventType"], "webhook.test");
    assert_eq!(sent["eventId"], queued.body["eventId"]);
    assert_eq!(sent["id"], queued.body["id"]);
    assert_eq!(sent["data"]["webhookId"], id);
    assert!(sent["data"]["message"].as_str().unwrap().contains("test"));
    holdfast_e2e::verify_signature(hook["secret"].as_str().unwrap(), &got[0]).unwrap();
    let records = history(&api, key, id, 1).await;
    assert_eq!(
        (
            records.len(),
            &records[0]["outcome"],
            &records[0]["eventType"]
        ),
        (1, &Value::from("succeeded"), &Value::from("webhook.test"))
    );
    // The other subscription's receiver would have had it by now.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        listening.received().is_empty(),
        "sent to the subscription asked only"
    );
    // Spec 6.4: only a transaction notification is resent; a test is not one.
    let test_delivery = queued.body["id"].as_str().unwrap();
    let refused = env.cli(&[
        "deliveries",
        "resend",
        "--platform",
        &platform.id,
        test_delivery,
    ]);
    assert!(!refused.success, "a test delivery is never resent");
    assert!(refused.stderr.contains("transaction"), "{}", refused.stderr);

    let (_, live_key) = env.create_key(&platform.id, "private", "live");
    let unknown = "wh_0000000000000000000000000";
    for (who, target) in [(live_key.as_str(), id), (key.as_str(), unknown)] {
        let reply = api
            .post(&format!("/v1/webhooks/{target}/test"), who, "")
            .await;
        assert_eq!(reply.status, StatusCode::NOT_FOUND, "{target}");
    }
    let off = format!(
        r#"{{"endpointUrl": "{}", "events": ["transaction.created"], "active": false}}"#,
        asked.url
    );
    api.patch(&format!("/v1/webhooks/{id}"), key, &off).await;
    let refused = api.post(&format!("/v1/webhooks/{id}/test"), key, "").await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert_eq!(refused.error_param(), Some("id"));
    assert_eq!(history(&api, key, id, 1).await.len(), 1, "nothing queued");
    assert_eq!(asked.received().len(), 1);
}

on_both_backends!(
    a_rotated_secret_signs_beside_the_new_one_for_the_overlap,
    sixty_concurrent_auths_with_a_full_fan_out_are_all_recorded,
    a_slow_platform_never_delays_another,
    subscriptions_are_capped_per_platform_and_mode,
    subscriptions_are_validated_and_replaced_whole,
    a_test_event_reaches_its_subscription_only,
    deliveries_are_signed_and_verifiable,
    retries_follow_the_delivery_table,
    twenty_five_failures_disable_and_email_the_creator_once,
    no_email_when_the_creator_is_gone,
    each_subscription_delivers_on_its_own,
    a_killed_worker_loses_nothing,
    an_email_waits_for_a_down_smtp_server,
    retention_and_resend,
    the_ssrf_guard_refuses_loopback_by_default,
    the_real_five_second_timeout,
    merchant_events_are_delivered_but_not_resendable,
    a_graceful_stop_finishes_the_attempt_in_flight,
    a_notification_of_a_since_disabled_subscription_is_skipped,
);

/// On PostgreSQL, a `serve` that delivers nothing itself (`HOLDFAST_WORKERS=0`) announces what
/// it writes, and a delivering process hears of it at once: here the deliverer's polls are a
/// minute apart, so only the announcement brings the notification to the receiver within
/// seconds (docs/webhooks.md, "Wake-ups across processes"). SQLite has no wake-up: its
/// deliverers poll.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_write_elsewhere_is_delivered_at_once_not_at_the_next_poll() {
    let Some(env) = Env::new(Backend::Postgres).await else {
        return;
    };
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let mut writes_only = fast_env("smtp://127.0.0.1:1");
    writes_only.push(("HOLDFAST_WORKERS", "0".into()));
    let writer = start(&env, &writes_only);
    let mut polls_every_minute = fast_env("smtp://127.0.0.1:1");
    polls_every_minute.retain(|(k, _)| *k != "HOLDFAST_WORKER_POLL_MS");
    polls_every_minute.push(("HOLDFAST_WORKER_POLL_MS", "60000".into()));
    polls_every_minute.push(("HOLDFAST_WORKER_IDLE_POLL_MS", "60000".into()));
    let _deliverer = start(&env, &polls_every_minute);
    let api = Api::new(&writer);
    let key = &platform.private_key;
    let m = merchant(&api, key).await;
    subscribe(&api, key, &receiver.url).await;
    // The deliverer's first claims, made as it started, are over: its next is a minute away.
    tokio::time::sleep(Duration::from_secs(1)).await;
    pay(&api, key, &m).await;
    let arrived = receiver.wait_for(1, Duration::from_secs(10)).await;
    assert_eq!(
        arrived.len(),
        1,
        "not delivered within 10 s of its write, with the deliverer a minute from its poll"
    );
}
