//! `holdfast serve` as an operator meets it: health, request ids, the demo bootstrap on an empty
//! database, graceful shutdown.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::HashSet;

use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::{Method, StatusCode};

async fn health_and_request_ids(env: Env) {
    let platform = env.create_platform("Acme");
    let mut server = env.serve();
    let api = Api::new(&server);
    let health = api.send(Method::GET, "/healthz", None, None).await;
    assert_eq!(
        (health.status, health.body["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    let ready = api.send(Method::GET, "/readyz", None, None).await;
    assert_eq!(
        (ready.status, ready.body["status"].as_str()),
        (StatusCode::OK, Some("ready"))
    );

    let replies = [
        api.send(Method::GET, "/healthz", None, None).await,
        api.send(Method::GET, "/v1/merchants", None, None).await,
        api.get("/v1/merchants", &platform.private_key).await,
        api.send(Method::GET, "/v1/nothing-here", None, None).await,
        api.send(
            Method::PUT,
            "/v1/merchants",
            Some(&platform.private_key),
            None,
        )
        .await,
    ];
    let statuses: Vec<_> = replies.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses, [200, 401, 200, 404, 405]);
    // A 405 names what the path takes (RFC 9110 15.5.6), outside `/v1` too, in the envelope.
    let outside = api.send(Method::PUT, "/healthz", None, None).await;
    assert_eq!(outside.status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(outside.headers["allow"], "GET");
    assert_eq!(outside.body["error"]["code"], "method_not_allowed");
    assert_eq!(
        replies[4].headers["allow"], "POST, GET",
        "in the catalogue's order"
    );
    let mut ids = HashSet::new();
    for reply in &replies {
        let id = reply.headers["x-request-id"].to_str().unwrap().to_owned();
        assert!(id.starts_with("req_"), "{id}");
        if let Some(in_body) = reply.body["error"]["requestId"].as_str() {
            assert_eq!(in_body, id, "error bodies carry the same id");
        }
        ids.insert(id);
    }
    assert_eq!(ids.len(), replies.len(), "one id per request");

    assert!(server.terminate().success(), "SIGTERM is a clean stop");
    assert!(server.log().contains("\"message\":\"stopped\""));
}

/// A line an adapter logs while serving a request names the request, even from the task a
/// payment runs on: here the processor's timeout warning, logged under the request that paid.
async fn an_adapters_log_line_names_its_request(env: Env) {
    let platform = env.create_platform("Acme");
    let key = &platform.private_key;
    let mut server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PROCESSOR_TIMEOUT_MS", "200"),
    ]);
    let api = Api::new(&server);
    let m = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let merchant = m.body["id"].as_str().unwrap();
    let timeout_card = format!(
        r#"{{"merchantId": "{merchant}", "type": "auth", "amount": 1000, "payment": {{"number": "4000000000000168", "cvv": "123", "expiration": "1230"}}}}"#
    );
    let paid = api.post("/v1/transactions", key, &timeout_card).await;
    assert_eq!(paid.status, StatusCode::GATEWAY_TIMEOUT);
    let id = paid.headers["x-request-id"].to_str().unwrap().to_owned();
    assert!(server.terminate().success());
    let log = server.log();
    let warning = log
        .lines()
        .find(|line| line.contains("processor timed out"))
        .unwrap_or_else(|| panic!("no timeout warning in:\n{log}"));
    assert!(warning.contains(&id), "{warning} does not name {id}");
    // …and whose it was: the platform, the key's id and the mode, never the key.
    let line: serde_json::Value = serde_json::from_str(warning).unwrap();
    let request = line["spans"]
        .as_array()
        .and_then(|spans| spans.iter().find(|span| span["name"] == "request"))
        .unwrap_or_else(|| panic!("no request span: {warning}"));
    assert_eq!(request["platform"], platform.id.as_str(), "{warning}");
    assert_eq!(request["mode"], "test", "{warning}");
    assert!(
        request["key"]
            .as_str()
            .is_some_and(|k| k.starts_with("key_")),
        "{warning}"
    );
    assert!(
        !warning.contains(key.as_str()),
        "the key itself is never logged"
    );
}

async fn an_empty_database_gets_a_demo_platform_once(env: Env) {
    let mut first = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "true")]);
    let api = Api::new(&first);
    assert_eq!(
        api.send(Method::GET, "/healthz", None, None).await.status,
        StatusCode::OK
    );
    let exit = first.terminate();
    assert!(exit.success(), "{exit}:\n{}", first.log());
    let banner = first.stdout();
    let key_after = |name: &str| {
        banner
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or_else(|| panic!("no {name} in:\n{banner}"))
            .to_owned()
    };
    let private = key_after("Default Private Key");
    let public = key_after("Default Public Key");
    assert!(private.starts_with("priv_test_") && public.starts_with("pub_test_"));
    assert!(
        !first.log().contains(&private),
        "keys go to standard output, never the log"
    );

    let mut second = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "true")]);
    let api = Api::new(&second);
    assert_eq!(
        api.get("/v1/merchants", &private).await.status,
        StatusCode::OK
    );
    assert_eq!(
        api.get("/v1/merchants", &public).await.status,
        StatusCode::FORBIDDEN
    );
    assert!(
        second.stop_with("INT").success(),
        "SIGINT is a clean stop too"
    );
    assert!(
        !second.stdout().contains("priv_test_"),
        "shown once: {}",
        second.stdout()
    );
    let platforms = env.cli_json(&["platforms", "list"]);
    let names: Vec<_> = platforms["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["Demo Platform"],
        "one demo platform, however often serve starts"
    );
}

/// A server told to stop says so at once: `/readyz` answers 503 through its grace, while it still
/// serves, so a load balancer takes it out before it stops accepting; then it drains and exits.
async fn a_stopping_server_is_not_ready_through_its_grace(env: Env) {
    let mut server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_SHUTDOWN_GRACE_MS", "3000"),
    ]);
    let api = Api::new(&server);
    let ready = || api.send(Method::GET, "/readyz", None, None);
    assert_eq!(ready().await.status, StatusCode::OK);
    let signalled = std::time::Instant::now();
    server.signal("TERM");
    let mut reply = ready().await;
    while reply.status == StatusCode::OK && signalled.elapsed() < std::time::Duration::from_secs(2)
    {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        reply = ready().await;
    }
    assert_eq!(
        reply.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        reply.text
    );
    assert_eq!(reply.body["status"], "stopping");
    assert_eq!(
        api.send(Method::GET, "/healthz", None, None).await.status,
        StatusCode::OK,
        "still serving through the grace"
    );
    assert!(server.wait().success(), "a clean stop");
    assert!(
        signalled.elapsed() >= std::time::Duration::from_secs(3),
        "stopped only after its grace"
    );
}

/// A client's own request id and W3C trace context are carried through: answered back and on
/// every log line of the request; a malformed one, or one holding a card number, is not.
async fn a_clients_request_id_and_trace_are_carried_through(env: Env) {
    let platform = env.create_platform("Traced");
    let key = &platform.private_key;
    let mut server = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "false")]);
    let api = Api::new(&server);
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let traceparent = format!("00-{trace}-00f067aa0ba902b7-01");
    let merchant = api.shop(key).await;
    let body = format!(
        r#"{{"type": "auth", "merchantId": "{merchant}", "amount": 1000, "payment": {{"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}}}"#
    );
    let paid = api
        .send_with(
            Method::POST,
            "/v1/transactions",
            Some(key),
            Some(&body),
            &[
                ("x-request-id", "checkout-7:try.2"),
                ("traceparent", &traceparent),
            ],
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(paid.headers["x-request-id"], "checkout-7:try.2");
    let answered = paid.headers["traceparent"].to_str().unwrap();
    let parts: Vec<&str> = answered.split('-').collect();
    assert_eq!(parts.len(), 4, "{answered}");
    assert_eq!((parts[0], parts[1], parts[3]), ("00", trace, "01"));
    assert!(
        parts[2].len() == 16 && parts[2] != "00f067aa0ba902b7",
        "our own span: {answered}"
    );

    let refused = api
        .send_with(
            Method::GET,
            "/v1/merchants/mid_0000000000000000000000000X",
            Some(key),
            None,
            &[
                ("x-request-id", "4111111111111111"),
                ("traceparent", "00-nonsense-01"),
            ],
        )
        .await;
    let id = refused.headers["x-request-id"].to_str().unwrap();
    assert!(id.starts_with("req_"), "a card-like id is replaced: {id}");
    assert_eq!(refused.body["error"]["requestId"], id);
    assert!(!refused.headers.contains_key("traceparent"));

    assert!(server.terminate().success());
    let log = server.log();
    let lines: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("checkout-7:try.2"))
        .collect();
    assert!(
        lines.iter().any(|l| l.contains(r#""message":"request""#)),
        "the access log line: {log}"
    );
    for line in &lines {
        assert!(
            line.contains(trace),
            "every line of the request names its trace: {line}"
        );
    }
    assert!(!log.contains("4111111111111111"), "never logged");
}

on_both_backends!(
    a_clients_request_id_and_trace_are_carried_through,
    health_and_request_ids,
    an_adapters_log_line_names_its_request,
    an_empty_database_gets_a_demo_platform_once,
    a_stopping_server_is_not_ready_through_its_grace
);

/// `/readyz` reports a database that went away; `/healthz` still answers (the process is up).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_when_postgres_goes_away() {
    let Some(env) = Env::new(holdfast_e2e::Backend::Postgres).await else {
        return;
    };
    let server = env.serve();
    let api = Api::new(&server);
    assert_eq!(
        api.send(Method::GET, "/readyz", None, None).await.status,
        StatusCode::OK
    );
    env.drop_database().await;
    let ready = api.send(Method::GET, "/readyz", None, None).await;
    assert_eq!(
        ready.status,
        StatusCode::SERVICE_UNAVAILABLE,
        "{}",
        ready.text
    );
    assert_eq!(ready.body["status"], "unavailable");
    assert_eq!(
        api.send(Method::GET, "/healthz", None, None).await.status,
        StatusCode::OK
    );
}
