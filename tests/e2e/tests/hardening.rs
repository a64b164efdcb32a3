//! Inputs that used to stop the server, hang a request or wedge a key (issue 37), each sent to the
//! real binary on both backends: every request is answered, the log holds no panic, and the
//! server serves on.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::dashboard::{ADMIN_PASSWORD, VIEWER_PASSWORD, owner_and_viewer, sign_in};
use holdfast_e2e::raw::RawRequest;
use holdfast_e2e::{Api, Env, Server, on_both_backends};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Instants whose UTC value lies past year 9999 or before year 1, percent-encoded for a query.
const FAR_INSTANTS: [&str; 4] = [
    "9999-12-31T23:59:59-23:59",
    "9999-12-31T23:59:59.999999999-00:01",
    "0001-01-01T00:00:00%2B00:01",
    "0000-01-01T00:00:00Z",
];

async fn assert_serving(server: &Server) {
    let health = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(health.status(), 200, "the server stopped serving");
    assert!(
        !server.log().contains("panicked"),
        "a panic in the log:\n{}",
        server.log()
    );
}

async fn instants_past_what_is_stored_are_a_400_naming_the_parameter(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    for param in ["createdFrom", "createdUntil"] {
        for instant in FAR_INSTANTS {
            let reply = api
                .get(
                    &format!("/v1/transactions?{param}={instant}"),
                    &platform.private_key,
                )
                .await;
            assert_eq!(reply.status, 400, "{param}={instant}: {}", reply.text);
            assert_eq!(reply.error_param(), Some(param));
            let sent = instant.replace("%2B", "+");
            assert!(!reply.text.contains(&sent), "{}", reply.text);
        }
        let last = api
            .get(
                &format!("/v1/transactions?{param}=9999-12-31T23:59:59.999999Z"),
                &platform.private_key,
            )
            .await;
        assert_eq!(last.status, 200, "the last instant stored: {}", last.text);
    }
    assert_serving(&server).await;
}

async fn dashboard_days_at_either_end_are_served(env: Env) {
    owner_and_viewer(&env);
    let server = env.serve();
    for (email, password) in [
        ("owner@example.com", ADMIN_PASSWORD),
        ("viewer@example.com", VIEWER_PASSWORD),
    ] {
        let cookie = sign_in(&server, email, password).await;
        for query in [
            "to=9999-12-31",
            "from=9999-12-31&to=9999-12-31",
            "from=0001-01-01",
            "from=0000-01-01&to=0000-01-01",
            "to=99999-01-01",
        ] {
            let page = reqwest::Client::new()
                .get(server.url(&format!("/dashboard/transactions?{query}")))
                .header("cookie", &cookie)
                .send()
                .await
                .unwrap();
            assert_eq!(page.status(), 200, "{email}: {query}");
        }
    }
    assert_serving(&server).await;
}

/// Bytes straight onto a connection, then whatever comes back until the server closes it.
async fn send_raw(server: &Server, wire: &[u8]) -> Vec<u8> {
    let address = server.base_url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.unwrap();
    let _ = stream.write_all(wire).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    answer
}

async fn a_dropped_or_garbled_connection_neither_panics_nor_floods_the_log(env: Env) {
    let _platform = env.create_platform("Acme");
    let server = env.serve();
    let garbage = b"GET /v1/merchants HTTP/1.1\r\nhost: x\r\nx-api-key: priv_test_AAAAAAAAAAAAAAAAAAAAAAAAAA\r\n\r\n\
                    POST /v1/merchants HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffff\r\n";
    let unknown_session = b"GET /dashboard/transactions HTTP/1.1\r\nhost: x\r\n\
                            cookie: holdfast_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\n\r\n\
                            garbage\r\n\r\n";
    for _ in 0..20 {
        send_raw(&server, garbage).await;
        send_raw(&server, unknown_session).await;
        RawRequest::new("GET", "/v1/merchants")
            .header("x-api-key", "priv_test_AAAAAAAAAAAAAAAAAAAAAAAAAA")
            .reset_after(&server.base_url, Duration::ZERO)
            .await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_serving(&server).await;
    // Sixty connections: a line each at most, never a flood.
    let lines = server.log().lines().count();
    assert!(lines < 400, "{lines} log lines for 60 connections");
}

async fn a_key_claimed_by_a_request_cut_off_is_never_stuck(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    for n in 0..20 {
        let key = format!("cut-off-{n}");
        let body = format!(r#"{{"name": "Shop {n}", "currency": "EUR"}}"#);
        let request = RawRequest::new("POST", "/v1/merchants")
            .header("x-api-key", platform.private_key.as_str())
            .header("idempotency-key", key.as_str())
            .json(body.as_bytes().to_vec());
        if n % 2 == 0 {
            request.reset_after(&server.base_url, Duration::ZERO).await;
        } else {
            // The request, then garbage pipelined after it on the same connection.
            let mut wire = format!(
                "POST /v1/merchants HTTP/1.1\r\nhost: x\r\nx-api-key: {}\r\nidempotency-key: {key}\r\n\
                 content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                platform.private_key,
                body.len()
            )
            .into_bytes();
            wire.extend_from_slice(b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n");
            send_raw(&server, &wire).await;
        }
        // The retry: the request's own answer (it ran, or runs now), never "still running".
        let mut retried = None;
        for _ in 0..50 {
            let reply = api
                .post_once("/v1/merchants", &platform.private_key, &key, &body)
                .await;
            if reply.status != 409 {
                retried = Some(reply);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let reply = retried.unwrap_or_else(|| panic!("key {key} stuck"));
        assert_eq!(reply.status, 201, "{key}: {}", reply.text);
    }
    // Each key made one merchant, whichever request ran it.
    let listed = api
        .get("/v1/merchants?limit=100", &platform.private_key)
        .await;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 20);
    assert_serving(&server).await;
}

async fn a_second_serve_on_a_taken_address_changes_nothing(env: Env) {
    let first = env.serve_with(&[]);
    let demo = reqwest::get(first.url("/demo")).await.unwrap();
    assert_eq!(demo.status(), 200);
    let address = first.base_url.trim_start_matches("http://").to_owned();
    let second = std::process::Command::new(holdfast_e2e::holdfast_bin())
        .arg("serve")
        .env("HOLDFAST_DATABASE_URL", env.database_url())
        .env("HOLDFAST_BIND", &address)
        .env("HOLDFAST_LOG", "warn")
        .env("HOLDFAST_VAULT_KEY", holdfast_e2e::TEST_VAULT_KEY)
        .output()
        .unwrap();
    assert!(!second.status.success());
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(said.contains(&address), "{said}");
    assert!(said.contains("HOLDFAST_BIND"), "{said}");
    assert!(
        !String::from_utf8_lossy(&second.stdout).contains("priv_test_"),
        "the second serve made keys"
    );
    let demo = reqwest::get(first.url("/demo")).await.unwrap();
    assert_eq!(demo.status(), 200, "the running server's demo broke");
}

/// `holdfast serve 2>&1 | head -c 100`: the log's reader reads a little and goes. The server
/// goes on answering, counts what it could not log, and still stops on SIGTERM.
async fn a_closed_log_pipe_neither_stops_nor_wedges_the_server(env: Env) {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut child = Command::new(holdfast_e2e::holdfast_bin())
        .arg("serve")
        .env("HOLDFAST_DATABASE_URL", env.database_url())
        .env("HOLDFAST_BIND", "127.0.0.1:0")
        .env("HOLDFAST_LOG", "info")
        .env("HOLDFAST_LOG_FORMAT", "json")
        .env("HOLDFAST_BOOTSTRAP_DEMO", "false")
        .env("HOLDFAST_VAULT_KEY", holdfast_e2e::TEST_VAULT_KEY)
        .env("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut log = BufReader::new(child.stderr.take().unwrap());
    let address = loop {
        let mut line = String::new();
        assert!(log.read_line(&mut line).unwrap() > 0, "serve ended");
        if let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line)
            && entry["message"] == "listening"
        {
            break entry["address"].as_str().unwrap().to_owned();
        }
    };
    drop(log);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut dropped = 0;
    for _ in 0..300 {
        let health = client
            .get(format!("http://{address}/healthz"))
            .send()
            .await
            .expect("answered though its log is gone");
        assert_eq!(health.status(), 200);
        let body: serde_json::Value = health.json().await.unwrap();
        dropped = body["logLinesDropped"].as_u64().unwrap();
    }
    assert!(dropped > 0, "the lines it could not write are counted");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("SIGTERM did not end the server");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A link shown once is in no stored answer: creating a boarding form and renewing its link,
/// both under an `Idempotency-Key`, are replayed without the link, and no byte of the database
/// holds either link.
async fn links_shown_once_are_in_no_stored_answer(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let body = r#"{"merchant": {"name": "Corner Shop", "currency": "EUR"}}"#;
    let made = api
        .post_once("/v1/boarding-forms", key, "form-1", body)
        .await;
    assert_eq!(made.status, 201, "{}", made.text);
    let form = made.body["id"].as_str().unwrap().to_owned();
    let renew = format!("/v1/boarding-forms/{form}/link");
    let renewed = api.post_once(&renew, key, "renew-1", "").await;
    assert_eq!(renewed.status, 200, "{}", renewed.text);
    let mut links = Vec::new();
    for (reply, path, idempotency_key, body) in [
        (&made, "/v1/boarding-forms", "form-1", body),
        (&renewed, renew.as_str(), "renew-1", ""),
    ] {
        let url = reply.body["url"].as_str().unwrap().to_owned();
        let replay = api.post_once(path, key, idempotency_key, body).await;
        assert_eq!(replay.status, reply.status, "{}", replay.text);
        assert_eq!(replay.headers["idempotent-replayed"], "true");
        assert!(replay.body["url"].is_null(), "{path}: {}", replay.text);
        assert_eq!(replay.body["id"], form.as_str());
        // The link's secret: what follows the last `=` or `/`.
        let secret = url.rsplit(['=', '/']).next().unwrap().to_owned();
        assert!(secret.len() >= 20, "{url}");
        links.push(secret);
    }
    // A signing secret is shown by the create and by GET, but is in no stored answer: a
    // replayed create has none.
    let hook_body =
        r#"{"endpointUrl": "https://example.com/h", "events": ["transaction.created"]}"#;
    let hook = api
        .post_once("/v1/webhooks", key, "hook-1", hook_body)
        .await;
    assert_eq!(hook.status, 201, "{}", hook.text);
    assert!(hook.body["secret"].as_str().unwrap().starts_with("whsec_"));
    let replayed = api
        .post_once("/v1/webhooks", key, "hook-1", hook_body)
        .await;
    assert_eq!(replayed.headers["idempotent-replayed"], "true");
    assert!(replayed.body["secret"].is_null(), "{}", replayed.text);
    assert_eq!(replayed.body["id"], hook.body["id"]);
    // And a client session's secret, the same way.
    let merchant = api.shop(key).await;
    let session_body =
        format!(r#"{{"merchantId": "{merchant}", "amount": 2500, "paymentMethods": ["card"]}}"#);
    let session = api
        .post_once("/v1/client-sessions", key, "cs-1", &session_body)
        .await;
    assert_eq!(session.status, 201, "{}", session.text);
    let client_secret = session.body["clientSecret"].as_str().unwrap().to_owned();
    let replayed = api
        .post_once("/v1/client-sessions", key, "cs-1", &session_body)
        .await;
    assert_eq!(replayed.headers["idempotent-replayed"], "true");
    assert!(replayed.body["clientSecret"].is_null(), "{}", replayed.text);
    links.push(client_secret.split("_secret_").nth(1).unwrap().to_owned());
    let dump = env.dump().await;
    for secret in links {
        assert!(
            !holdfast_e2e::contains(&dump, secret.as_bytes()),
            "a link's secret is at rest"
        );
    }
}

/// A reset link's email is sealed in the outbox: once it has reached a real SMTP server, the
/// link's token is in no byte of the database, the SQLite write-ahead log included.
async fn an_emailed_link_is_in_no_byte_at_rest(env: Env) {
    owner_and_viewer(&env);
    let smtp = holdfast_e2e::SmtpServer::start();
    let smtp_url = smtp.url();
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
        ("HOLDFAST_SMTP_URL", &smtp_url),
    ]);
    let asked = reqwest::Client::new()
        .post(server.url("/dashboard/reset"))
        .header("origin", &server.base_url)
        .form(&[("email", "owner@example.com")])
        .send()
        .await
        .unwrap();
    assert!(asked.status().is_success() || asked.status().is_redirection());
    let mails = smtp.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(mails.len(), 1);
    let link = holdfast_e2e::dashboard::link_in(&mails[0]);
    let token = link.split("token=").nth(1).unwrap().to_owned();
    assert!(token.len() >= 20, "{link}");
    let dump = env.dump().await;
    assert!(
        !holdfast_e2e::contains(&dump, token.as_bytes()),
        "the reset link's token is at rest"
    );
    assert_serving(&server).await;
}

/// What a subscription is accepted with, it can be delivered to: a URL or header value hyper
/// would refuse is a 400 naming the field, and no subscription is made.
async fn undeliverable_webhook_fields_are_refused_by_name(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    for (url, header, param) in [
        // As JSON writes them: a quote, angle brackets, NEL and a byte-order mark; a tab, and a
        // value that starts with a space (HTTP would strip it).
        (r#"https://example.com/a\"b"#, "x", "endpointUrl"),
        ("https://example.com/<x>", "x", "endpointUrl"),
        (r"https://example.com/\u0085", "x", "endpointUrl"),
        (r"https://example.com/\ufeff", "x", "endpointUrl"),
        ("https://example.com/h", r"\t", "customHeader.value"),
        ("https://example.com/h", " x", "customHeader.value"),
    ] {
        let body = format!(
            r#"{{"endpointUrl": "{url}", "events": ["transaction.created"], "customHeader": {{"name": "X-Gateway", "value": "{header}"}}}}"#
        );
        let reply = api.post("/v1/webhooks", key, &body).await;
        assert_eq!(reply.status, 400, "{body}: {}", reply.text);
        assert_eq!(reply.error_param(), Some(param), "{body}");
    }
    let listed = api.get("/v1/webhooks", key).await;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 0);
}

on_both_backends!(
    undeliverable_webhook_fields_are_refused_by_name,
    an_emailed_link_is_in_no_byte_at_rest,
    links_shown_once_are_in_no_stored_answer,
    a_closed_log_pipe_neither_stops_nor_wedges_the_server,
    instants_past_what_is_stored_are_a_400_naming_the_parameter,
    dashboard_days_at_either_end_are_served,
    a_dropped_or_garbled_connection_neither_panics_nor_floods_the_log,
    a_key_claimed_by_a_request_cut_off_is_never_stuck,
    a_second_serve_on_a_taken_address_changes_nothing,
);
