//! The hosted client in a real browser (`tests/browser/hosted-fields.mjs`, Debian's Chromium
//! driven by `playwright-core`): a card typed into Holdfast's frames on a merchant page of another
//! origin becomes a token the page receives without ever holding the number; then this test,
//! as the merchant's backend, pays with that token. Around it, from outside: the script's and
//! frames' refusals, and no card number or private key in the server's log.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_e2e::{Api, Env, Server, browser, on_both_backends};
use holdfast_wallets::google_pay::testing::Issuer;
use reqwest::StatusCode;
use serde_json::Value;

/// A plain GET, as a script tag or a frame would send it: no header carries a key.
async fn get(server: &Server, path: String) -> reqwest::Response {
    reqwest::get(server.url(&path)).await.unwrap()
}

async fn a_card_typed_in_the_frames_pays_from_the_backend(env: Env) {
    let platform = env.create_platform("Shop");
    let google = Issuer::at(time::OffsetDateTime::now_utc());
    let apple = holdfast_wallets::apple_pay::testing::Issuer::at(time::OffsetDateTime::now_utc());
    let server = env.serve_trusting_wallets(&google, Some(&apple));
    let api = Api::new(&server);
    let merchant = api
        .post(
            "/v1/merchants",
            &platform.private_key,
            r#"{"name": "Shop"}"#,
        )
        .await;
    let merchant = merchant.body["id"].as_str().unwrap().to_owned();
    let session = api
        .post(
            "/v1/client-sessions",
            &platform.private_key,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 2500}}"#),
        )
        .await;
    assert_eq!(session.status, StatusCode::CREATED, "{}", session.text);
    let session_id = session.body["id"].as_str().unwrap();
    let result = tempfile::NamedTempFile::new().unwrap();

    browser(
        &env,
        &server,
        "hosted-fields.mjs",
        &[
            ("HOLDFAST_PUBLIC_KEY", platform.public_key.as_str()),
            ("HOLDFAST_PRIVATE_KEY", platform.private_key.as_str()),
            ("HOLDFAST_RESULT", result.path().to_str().unwrap()),
            (
                "HOLDFAST_CLIENT_SECRET",
                session.body["clientSecret"].as_str().unwrap(),
            ),
            ("HOLDFAST_GOOGLE_PAY_TOKEN", &google.token_for(&merchant)),
            ("HOLDFAST_APPLE_PAY_TOKEN", &apple.good_token()),
            ("HOLDFAST_MERCHANT", &merchant),
        ],
    );

    // The merchant's backend pays with the token the page received: on the session's terms
    // only, and then the session is complete.
    let token: Value = serde_json::from_slice(&std::fs::read(result.path()).unwrap()).unwrap();
    let token = token["token"].as_str().unwrap();
    let pay = |amount: i64| {
        format!(
            r#"{{"merchantId": "{merchant}", "type": "auth", "amount": {amount}, "payment": {{"token": "{token}"}}}}"#
        )
    };
    let wrong = api
        .post("/v1/transactions", &platform.private_key, &pay(2000))
        .await;
    assert_eq!(wrong.status, StatusCode::BAD_REQUEST, "{}", wrong.text);
    assert_eq!(wrong.error_param(), Some("amount"));
    let paid = api
        .post("/v1/transactions", &platform.private_key, &pay(2500))
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(paid.body["state"], "authorized");
    assert_eq!(paid.body["payment"]["last4"], "1111");
    let completed = api
        .get(
            &format!("/v1/client-sessions/{session_id}"),
            &platform.private_key,
        )
        .await;
    assert_eq!(completed.body["status"], "completed");
    // Single use: the token is spent.
    let again = api
        .post("/v1/transactions", &platform.private_key, &pay(2500))
        .await;
    assert_eq!(again.status, StatusCode::BAD_REQUEST, "{}", again.text);

    // The Google Pay button's token, made by the relay frame from the wallet's token, pays too.
    let wallet = std::fs::read(format!("{}.wallet", result.path().display())).unwrap();
    let wallet: Value = serde_json::from_slice(&wallet).unwrap();
    let body = format!(
        r#"{{"merchantId": "{merchant}", "type": "sale", "amount": 2500, "payment": {{"token": "{}"}}}}"#,
        wallet["token"].as_str().unwrap()
    );
    let paid = api
        .post("/v1/transactions", &platform.private_key, &body)
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);

    let log = server.log();
    assert!(!log.contains("4111111111111111"), "card number in the log");
    assert!(
        !log.contains(&platform.private_key),
        "private key in the log"
    );
}

async fn the_script_and_frames_refuse_what_they_must(env: Env) {
    let platform = env.create_platform("Shop");
    let (inactive_id, inactive) = env.create_key(&platform.id, "public", "test");
    env.cli_json(&[
        "keys",
        "deactivate",
        "--platform",
        &platform.id,
        &inactive_id,
    ]);
    let (_, live_public) = env.create_key(&platform.id, "public", "live");
    let server = env.serve();
    let get = |path: String| get(&server, path);
    let script = |key: &str| format!("/v1/clients/holdfast.js?publicApiKey={key}");

    // Either mode's active public key loads the script.
    for key in [&platform.public_key, &live_public] {
        let reply = get(script(key)).await;
        assert_eq!(reply.status(), StatusCode::OK);
        assert_eq!(
            reply.headers()["content-type"],
            "application/javascript; charset=utf-8"
        );
        assert_eq!(reply.headers()["cache-control"], "no-cache");
        assert!(reply.text().await.unwrap().contains("window.Holdfast"));
    }
    // Missing, unknown, inactive, given twice: one 401.
    for path in [
        "/v1/clients/holdfast.js".to_owned(),
        script("pub_test_ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        script(&inactive),
        format!(
            "{}&publicApiKey={}",
            script(&platform.public_key),
            platform.public_key
        ),
    ] {
        let reply = get(path.clone()).await;
        assert_eq!(reply.status(), StatusCode::UNAUTHORIZED, "{path}");
        let body: Value = reply.json().await.unwrap();
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("publicApiKey")
        );
    }
    // A private key: 403, told to deactivate it, and its value is neither echoed nor logged.
    let reply = get(script(&platform.private_key)).await;
    assert_eq!(reply.status(), StatusCode::FORBIDDEN);
    let text = reply.text().await.unwrap();
    assert!(text.contains("Deactivate it now"), "{text}");
    assert!(!text.contains(&platform.private_key));
    // Any key in the header is not a key for a script tag.
    let reply = reqwest::Client::new()
        .get(server.url("/v1/clients/holdfast.js"))
        .header("x-api-key", &platform.public_key)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), StatusCode::UNAUTHORIZED);

    // The versioned name is immutable; an unknown name is 404.
    let body = get(script(&platform.public_key)).await;
    let tag = body.headers()["etag"]
        .to_str()
        .unwrap()
        .trim_matches('"')
        .to_owned();
    let pinned = get(format!(
        "/v1/clients/{tag}?publicApiKey={}",
        platform.public_key
    ))
    .await;
    assert_eq!(pinned.status(), StatusCode::OK);
    assert!(
        pinned.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let missing = get(format!(
        "/v1/clients/other.js?publicApiKey={}",
        platform.public_key
    ))
    .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    assert!(!server.log().contains(&platform.private_key));
}

async fn a_frame_is_framed_only_by_the_origin_it_names(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let get = |path: String| get(&server, path);
    // A hostile origin or channel is refused by name, never echoed.
    let frame = |query: &str| {
        format!(
            "/v1/clients/fields/number?publicApiKey={}&{query}",
            platform.public_key
        )
    };
    let page = get(frame(
        "origin=https://shop.example&channel=abcdefghijklmnop",
    ))
    .await;
    assert_eq!(page.status(), StatusCode::OK);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        policy.ends_with("frame-ancestors https://shop.example"),
        "{policy}"
    );
    assert!(!policy.contains("unsafe-inline"));
    for (query, param) in [
        ("channel=abcdefghijklmnop", "origin"),
        ("origin=https://shop.example", "channel"),
        (
            "origin=https://shop.example%3B%20script-src%20*&channel=abcdefghijklmnop",
            "origin",
        ),
        ("origin=https://shop.example&channel=short", "channel"),
        // Not serialized as a browser writes an origin: the default port is left out.
        (
            "origin=https://shop.example:443&channel=abcdefghijklmnop",
            "origin",
        ),
        (
            "origin=https://shop.example&channel=abcdefghijklmnop&extra=1",
            "extra",
        ),
    ] {
        let reply = get(frame(query)).await;
        assert_eq!(reply.status(), StatusCode::BAD_REQUEST, "{query}");
        let body: Value = reply.json().await.unwrap();
        assert_eq!(body["error"]["param"], param, "{query}");
        assert!(!body.to_string().contains("script-src"), "{query}: echoed");
    }
    let reply = get(
        frame("origin=https://shop.example&channel=abcdefghijklmnop").replace("/number", "/pin"),
    )
    .await;
    assert_eq!(reply.status(), StatusCode::NOT_FOUND);
}

/// `holdfast serve` on a new database serves `/demo`: a newcomer pays with a test card and sees
/// the transaction, which the demo platform's printed key then reads. A restart makes the
/// demo's keys afresh (the previous ones deleted) and keeps its merchant.
async fn the_demo_checkout_pays_end_to_end(env: Env) {
    let mut server = env.serve_with(&[]);
    browser(&env, &server, "pages.mjs", &[]);
    let printed = server.stdout();
    let private = printed
        .lines()
        .find_map(|line| line.trim().strip_prefix("Default Private Key"))
        .unwrap()
        .trim()
        .to_owned();
    // Another site's form cannot make the demo's server pay (cross-site request forgery).
    let forged = post_demo_pay(&server, "https://evil.example").await;
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let api = Api::new(&server);
    let sales = api.get("/v1/transactions?type=sale", &private).await;
    let states: Vec<(&str, i64)> = sales.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["state"].as_str().unwrap(), t["amount"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        states,
        [("declined", 2500), ("settled", 2500)],
        "newest first"
    );
    assert!(!server.log().contains("4111111111111111"));

    assert!(server.terminate().success());
    let again = env.serve_with(&[]);
    let page = reqwest::get(again.url("/demo")).await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    let keys = env.cli_json(&["keys", "list", "--platform", &platform_of(&printed)]);
    let demo_keys = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"].as_str().unwrap().starts_with("Demo page"))
        .count();
    assert_eq!(
        demo_keys, 2,
        "one public and one private demo key, whatever the restarts"
    );
    let merchants = Api::new(&again).get("/v1/merchants", &private).await;
    assert_eq!(merchants.body["data"].as_array().unwrap().len(), 1);

    // Spec 3.1: the demo's private key deactivated, the demo's server stops at once, as a
    // shop's would; activated again, it works again.
    let platform = platform_of(&printed);
    let demo_private = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "Demo page (private)")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let switch = |action: &str| {
        env.cli_json(&["keys", action, "--platform", &platform, &demo_private]);
    };
    let checkout = async || reqwest::get(again.url("/demo")).await.unwrap();
    switch("deactivate");
    let closed = checkout().await;
    assert_eq!(closed.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(closed.text().await.unwrap().contains("closed"));
    let paid = post_demo_pay(&again, again.url("").trim_end_matches('/')).await;
    assert_eq!(paid.status(), StatusCode::SERVICE_UNAVAILABLE);
    switch("activate");
    assert_eq!(checkout().await.status(), StatusCode::OK);
    let paid = post_demo_pay(&again, again.url("").trim_end_matches('/')).await;
    assert_ne!(
        paid.status(),
        StatusCode::SERVICE_UNAVAILABLE,
        "open again: the payment form is served (its made-up token is refused further on)"
    );
    // Deleted, the key closes the demo for good (until a restart makes new keys).
    switch("delete");
    assert_eq!(checkout().await.status(), StatusCode::SERVICE_UNAVAILABLE);
    let paid = post_demo_pay(&again, again.url("").trim_end_matches('/')).await;
    assert_eq!(paid.status(), StatusCode::SERVICE_UNAVAILABLE);
}

/// The demo's payment form posted from `origin`, with a token never made.
async fn post_demo_pay(server: &Server, origin: &str) -> reqwest::Response {
    reqwest::Client::new()
        .post(server.url("/demo/pay"))
        .header("origin", origin)
        .form(&[
            ("token", "tkn_01JDXXXXXXXXXXXXXXXXXXXXXX"),
            ("session", "cs_01"),
        ])
        .send()
        .await
        .unwrap()
}

fn platform_of(printed: &str) -> String {
    let at = printed.find("pfm_").unwrap();
    printed[at..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// A browser keeps `holdfast.js` and revalidates it on every load: unchanged, a 304; once the
/// key is deactivated, a 401 at once, cached copy or not (spec 3.1).
async fn the_script_is_revalidated_and_stops_with_its_key(env: Env) {
    let platform = env.create_platform("Shop");
    let server = env.serve();
    let path = format!(
        "/v1/clients/holdfast.js?publicApiKey={}",
        platform.public_key
    );
    let first = get(&server, path.clone()).await;
    let tag = first.headers()["etag"].to_str().unwrap().to_owned();
    let revalidate = || {
        reqwest::Client::new()
            .get(server.url(&path))
            .header("if-none-match", tag.clone())
            .send()
    };
    let unchanged = revalidate().await.unwrap();
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(unchanged.headers()["etag"].to_str().unwrap(), tag);
    assert!(unchanged.bytes().await.unwrap().is_empty());
    env.cli_json(&[
        "keys",
        "deactivate",
        "--platform",
        &platform.id,
        &platform.public_key_id,
    ]);
    let stopped = revalidate().await.unwrap();
    assert_eq!(stopped.status(), StatusCode::UNAUTHORIZED);
}

on_both_backends!(
    the_script_is_revalidated_and_stops_with_its_key,
    the_demo_checkout_pays_end_to_end,
    a_card_typed_in_the_frames_pays_from_the_backend,
    the_script_and_frames_refuse_what_they_must,
    a_frame_is_framed_only_by_the_origin_it_names
);
