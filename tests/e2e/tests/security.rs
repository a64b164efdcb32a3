//! Spec 5 and 7 over every route: 401 for a missing, malformed, unknown, inactive or deleted
//! key (one identical body), 403 for the wrong key type, 404 for another mode's or another
//! platform's resource. The table must list exactly the routes the server registers.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_api::routes::catalogue;
use holdfast_domain::auth::Access;
use holdfast_e2e::routes::{
    ROUTES, SERVER_ENV, TOKEN_BODY, concrete, key_for, present_key, resource_of, test_plan,
};
use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::{Method, StatusCode};

fn method(name: &str) -> Method {
    name.parse().unwrap()
}

#[test]
fn the_table_lists_exactly_the_served_routes() {
    let table: Vec<(String, &str, Access)> = ROUTES
        .iter()
        .map(|(m, path, access, ..)| ((*m).to_owned(), *path, *access))
        .collect();
    let served: Vec<(String, &str, Access)> = catalogue()
        .into_iter()
        .map(|r| (r.method.to_string(), r.path, r.access))
        .collect();
    for route in &served {
        assert!(
            table.contains(route),
            "route missing from the security table: {route:?}"
        );
    }
    for route in &table {
        assert!(
            served.contains(route),
            "table names a route that is not served: {route:?}"
        );
    }
}

async fn refusals_on_every_route(env: Env) {
    let platform = env.create_platform("Acme");
    let other_platform = env.create_platform("Other");
    let (inactive_id, inactive) = env.create_key(&platform.id, "private", "test");
    let (deleted_id, deleted) = env.create_key(&platform.id, "private", "test");
    env.cli_json(&[
        "keys",
        "deactivate",
        "--platform",
        &platform.id,
        &inactive_id,
    ]);
    env.cli_json(&["keys", "delete", "--platform", &platform.id, &deleted_id]);
    let (_, live_private) = env.create_key(&platform.id, "private", "live");
    let (_, live_public) = env.create_key(&platform.id, "public", "live");
    let server = env.serve_with(SERVER_ENV);
    let api = Api::new(&server);
    let (connection, plan) = test_plan(&api, &platform.private_key).await;

    let unknown = "priv_test_ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let malformed = "priv_test_short";
    let unauthenticated: [(&str, Option<&str>); 5] = [
        ("missing", None),
        ("malformed", Some(malformed)),
        ("unknown", Some(unknown)),
        ("inactive", Some(&inactive)),
        ("deleted", Some(&deleted)),
    ];

    for (m, template, access, body, resource, other_mode_status) in ROUTES {
        let (merchant, id) =
            resource_of(&api, &platform.private_key, *resource, &connection, &plan).await;
        let body = body.map(|b| {
            b.replace("{merchant}", &merchant)
                .replace("{connection}", &connection)
        });
        let body = body.as_deref();
        let path = concrete(template, &id);
        let label = format!("{m} {template}");
        let send = |key: &str| {
            let (target, header) = present_key(*access, &path, Some(key));
            let header = header.map(str::to_owned);
            let api = api.clone();
            async move { api.send(method(m), &target, header.as_deref(), body).await }
        };

        assert_identical_401s(&api, m, *access, &path, body, &unauthenticated, &label).await;

        // Every key type may call a public-or-private route: no wrong type to refuse there.
        let owner = key_for(*access, &platform.private_key, &platform.public_key);
        let (wrong, right_other_mode): (Vec<&str>, &str) = match access {
            Access::Private => (vec![&platform.public_key, &live_public], &live_private),
            Access::Public => (vec![&platform.private_key, &live_private], &live_public),
            Access::PublicOrPrivate => (vec![], &live_public),
        };
        for key in wrong {
            let reply = send(key).await;
            assert_eq!(
                reply.status,
                StatusCode::FORBIDDEN,
                "{label}: wrong key type"
            );
            assert_eq!(reply.body["error"]["type"], "permission_error");
        }

        if template.contains("{id}") {
            // Other mode, other platform: not found, exactly as if it did not exist.
            for key in [right_other_mode, &other_platform.private_key] {
                let reply = send(key).await;
                assert_eq!(
                    reply.status,
                    StatusCode::NOT_FOUND,
                    "{label}: {}",
                    reply.text
                );
            }
            // Positive control: the owner of the resource is served.
            let reply = send(owner).await;
            assert!(
                reply.status.is_success(),
                "{label} as owner: {}",
                reply.text
            );
        } else {
            let reply = send(right_other_mode).await;
            assert_eq!(
                reply.status.as_u16(),
                *other_mode_status,
                "{label}: {}",
                reply.text
            );
            // Positive control: the owner (test mode) is served.
            let reply = send(owner).await;
            assert!(
                reply.status.is_success(),
                "{label} as owner: {}",
                reply.text
            );
        }
    }

    collections_are_per_mode(
        &api,
        &platform.private_key,
        &live_private,
        &other_platform.private_key,
    )
    .await;
}

async fn wrong_type_on_an_inactive_key_is_401_not_403(env: Env) {
    let platform = env.create_platform("Acme");
    env.cli_json(&[
        "keys",
        "deactivate",
        "--platform",
        &platform.id,
        &platform.public_key_id,
    ]);
    let server = env.serve();
    let reply = Api::new(&server)
        .get("/v1/merchants", &platform.public_key)
        .await;
    assert_eq!(reply.status, StatusCode::UNAUTHORIZED);
}

/// Every way of not being authenticated gets 401 with one identical body: no oracle.
async fn assert_identical_401s(
    api: &Api,
    m: &str,
    access: Access,
    path: &str,
    body: Option<&str>,
    keys: &[(&str, Option<&str>)],
    label: &str,
) {
    let mut first_body = None;
    for (case, key) in keys {
        let (target, header) = present_key(access, path, *key);
        let reply = api.send(method(m), &target, header, body).await;
        assert_eq!(
            reply.status,
            StatusCode::UNAUTHORIZED,
            "{label} with {case} key"
        );
        assert_eq!(
            reply
                .headers
                .get("www-authenticate")
                .map(reqwest::header::HeaderValue::as_bytes),
            Some(&br#"ApiKey realm="holdfast", header="x-api-key""#[..]),
            "{label} with {case} key: a 401 carries its challenge (RFC 9110 11.6.1)"
        );
        let body = reply.error_without_request_id();
        assert_eq!(body["error"]["type"], "authentication_error", "{label}");
        let first = first_body.get_or_insert(body.clone());
        assert_eq!(&body, first, "{label}: {case} differs from the other 401s");
    }
}

/// Collections are per mode and per platform.
async fn collections_are_per_mode(api: &Api, test_key: &str, live_key: &str, other_platform: &str) {
    let modes = |list: &serde_json::Value| -> Vec<String> {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mode"].as_str().unwrap().to_owned())
            .collect()
    };
    for (key, mode) in [(test_key, "test"), (live_key, "live")] {
        let list = api.get("/v1/merchants?limit=100", key).await;
        let seen = modes(&list.body);
        assert!(
            !seen.is_empty() && seen.iter().all(|m| m == mode),
            "{mode}: {seen:?}"
        );
    }
    let other = api.get("/v1/merchants?limit=100", other_platform).await;
    assert_eq!(
        other.body["data"],
        serde_json::json!([]),
        "another platform sees nothing"
    );
}

/// Over a key's rate: 429 in the envelope with `Retry-After`, for that key only, until its
/// bucket refills.
async fn rate_limits_per_key(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, second_private) = env.create_key(&platform.id, "private", "test");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_RATE_LIMIT_PRIVATE_PER_S", "5"),
        ("HOLDFAST_RATE_LIMIT_PUBLIC_PER_S", "2"),
    ]);
    let api = Api::new(&server);
    // Each burst is sent at once, so the bucket has no time to refill.
    let burst = |key: String, path: &'static str, n: usize| {
        let api = api.clone();
        async move {
            let sent: Vec<_> = (0..n)
                .map(|_| {
                    let (api, key) = (api.clone(), key.clone());
                    tokio::spawn(async move { api.get(path, &key).await })
                })
                .collect();
            let mut statuses = Vec::new();
            for reply in sent {
                let reply = reply.await.unwrap();
                if reply.status == StatusCode::TOO_MANY_REQUESTS {
                    assert_eq!(
                        reply.body["error"]["type"], "rate_limit_error",
                        "{}",
                        reply.text
                    );
                    let retry: u64 = reply.headers["retry-after"]
                        .to_str()
                        .unwrap()
                        .parse()
                        .unwrap();
                    assert!((1..=60).contains(&retry), "{retry}");
                }
                statuses.push(reply.status.as_u16());
            }
            statuses
        }
    };
    let private = burst(platform.private_key.clone(), "/v1/merchants", 12).await;
    let admitted = private.iter().filter(|s| **s == 200).count();
    assert!((5..=8).contains(&admitted), "{private:?}");
    assert!(private.contains(&429), "{private:?}");
    // Another key of the same platform has a bucket of its own.
    assert_eq!(
        api.get("/v1/merchants", &second_private).await.status,
        StatusCode::OK
    );
    // The bucket refills: after a second (5 a second), the first key is served again.
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert_eq!(
        api.get("/v1/merchants", &platform.private_key).await.status,
        StatusCode::OK,
        "refilled"
    );
    // A public key's rate is its own, and lower.
    let tokens: Vec<_> = (0..8)
        .map(|_| {
            let (api, key) = (api.clone(), platform.public_key.clone());
            tokio::spawn(async move { api.post("/v1/tokens", &key, TOKEN_BODY).await.status })
        })
        .collect();
    let mut public = Vec::new();
    for reply in tokens {
        public.push(reply.await.unwrap().as_u16());
    }
    let admitted = public.iter().filter(|s| **s == 201).count();
    assert!((2..=4).contains(&admitted), "{public:?}");
    assert!(public.contains(&429), "{public:?}");
    // Its tokenization budget spent, the key still loads a checkout's script and frames: page
    // loads have a bucket of their own (ten times the rate).
    let script = format!(
        "/v1/clients/holdfast.js?publicApiKey={}",
        platform.public_key
    );
    for _ in 0..5 {
        let loaded = reqwest::get(server.url(&script)).await.unwrap();
        assert_eq!(loaded.status(), StatusCode::OK);
    }
}

/// Key guessing from one address: after its budget of failures the address is refused, even
/// with a right key, in the 429 envelope; a right key of the wrong type is no guess.
async fn failed_authentication_locks_out_an_address(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, second_private) = env.create_key(&platform.id, "private", "test");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3"),
    ]);
    let api = Api::new(&server);
    // A right key of the wrong type is no guess: its 403s leave the address's budget alone.
    for _ in 0..4 {
        let wrong_type = api.get("/v1/merchants", &platform.public_key).await;
        assert_eq!(
            wrong_type.status,
            StatusCode::FORBIDDEN,
            "{}",
            wrong_type.text
        );
    }
    // Key guessing from one address: three failures, then 429, even for a right key.
    let unknown = "priv_test_ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned();
    let mut guesses = Vec::new();
    for _ in 0..5 {
        guesses.push(api.get("/v1/merchants", &unknown).await.status.as_u16());
    }
    assert_eq!(guesses, [401, 401, 401, 429, 429]);
    let right = api.get("/v1/merchants", &second_private).await;
    assert_eq!(
        right.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        right.text
    );
    // The lockout is the same envelope: its type, the request id, when to come back, no-store.
    assert_eq!(
        right.body["error"]["type"], "rate_limit_error",
        "{}",
        right.text
    );
    assert_eq!(
        right.body["error"]["requestId"].as_str(),
        right
            .headers
            .get("x-request-id")
            .and_then(|v| v.to_str().ok())
    );
    let retry: u64 = right.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    assert_eq!(right.headers["cache-control"], "no-store");
    // With no proxy trusted, a client that names another address in `X-Forwarded-For` is
    // still the address it connects from.
    let url = server.url("/v1/merchants");
    let disguised = forwarded_for(url, &second_private, "198.51.100.77", None).await;
    assert_eq!(disguised, StatusCode::TOO_MANY_REQUESTS);
}

/// A request with `key`, as a proxy forwarding for `client` sends it: a POST of `body` (JSON)
/// to `url` when one is given, else a GET; the status.
async fn forwarded_for(
    url: String,
    key: &str,
    client: &str,
    body: Option<&'static str>,
) -> StatusCode {
    let http = reqwest::Client::new();
    let request = match body {
        Some(body) => http
            .post(url)
            .header("content-type", "application/json")
            .body(body),
        None => http.get(url),
    };
    request
        .header("x-api-key", key)
        .header("x-forwarded-for", client)
        .send()
        .await
        .unwrap()
        .status()
}

/// Behind a proxy named in `HOLDFAST_TRUSTED_PROXIES`, a public key's budget and the lockout
/// after failed authentications are per shopper it forwards for (the rightmost address it
/// appended), not shared by everyone behind it; what a shopper writes to the left of its own
/// address changes nothing.
async fn a_trusted_proxy_names_the_client_it_forwards_for(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_RATE_LIMIT_PUBLIC_PER_S", "1"),
        ("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3"),
        // The tests connect from loopback: they play the proxy.
        ("HOLDFAST_TRUSTED_PROXIES", "10.9.9.9, 127.0.0.0/8, ::1"),
    ]);
    // One shopper sends six tokenizations at once, three others one each in the same burst:
    // the one is refused past its budget, the others are not (a budget the proxy's address
    // shared would refuse them too).
    let mut shoppers = vec!["203.0.113.1"; 6];
    shoppers.extend(["203.0.113.2", "203.0.113.3", "203.0.113.4"]);
    let sent: Vec<_> = shoppers
        .into_iter()
        .map(|client| {
            let (url, key) = (server.url("/v1/tokens"), platform.public_key.clone());
            tokio::spawn(async move { forwarded_for(url, &key, client, Some(TOKEN_BODY)).await })
        })
        .collect();
    let mut statuses = Vec::new();
    for reply in sent {
        statuses.push(reply.await.unwrap().as_u16());
    }
    assert!(
        statuses[..6].contains(&429),
        "one shopper spends its budget: {statuses:?}"
    );
    assert_eq!(
        statuses[6..],
        [201, 201, 201],
        "other shoppers behind the same proxy have budgets of their own"
    );
    // Key guessing locks out the guesser, not the proxy.
    let unknown = "priv_test_ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let mut guesses = Vec::new();
    for _ in 0..4 {
        guesses.push(
            forwarded_for(server.url("/v1/merchants"), unknown, "198.51.100.1", None)
                .await
                .as_u16(),
        );
    }
    assert_eq!(guesses, [401, 401, 401, 429]);
    // A right key, as forwarded for: (X-Forwarded-For, status).
    let cases = [
        ("198.51.100.1", StatusCode::TOO_MANY_REQUESTS),
        ("198.51.100.2", StatusCode::OK),
        // Through two proxies.
        ("198.51.100.2, 10.9.9.9", StatusCode::OK),
        ("198.51.100.1, 10.9.9.9", StatusCode::TOO_MANY_REQUESTS),
        // The guesser writes a fresh address before its own: it is the client's own writing.
        ("198.51.100.9, 198.51.100.1", StatusCode::TOO_MANY_REQUESTS),
    ];
    for (client, status) in cases {
        let url = server.url("/v1/merchants");
        let got = forwarded_for(url, &platform.private_key, client, None).await;
        assert_eq!(got, status, "{client}");
    }
}

on_both_backends!(
    refusals_on_every_route,
    rate_limits_per_key,
    failed_authentication_locks_out_an_address,
    a_trusted_proxy_names_the_client_it_forwards_for,
    wrong_type_on_an_inactive_key_is_401_not_403
);
