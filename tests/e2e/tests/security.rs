//! Spec 5 and 7 over every route: 401 for a missing, malformed, unknown, inactive or deleted
//! key (one identical body), 403 for the wrong key type, 404 for another mode's or another
//! platform's resource. The table must list exactly the routes the server registers.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast::http::routes::catalogue;
use holdfast_domain::auth::Access;
use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::{Method, StatusCode};

/// What `{id}` in a route stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resource {
    None,
    Merchant,
    Transaction,
    Connection,
    Plan,
    Token,
    Webhook,
}

const AUTH_BODY: &str = r#"{"merchantId": "{merchant}", "type": "auth", "amount": 1000,
    "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}"#;

/// Method, path, required key, a valid body, what `{id}` stands for, and the status a key of
/// the other mode gets on a collection route.
type Route = (
    &'static str,
    &'static str,
    Access,
    Option<&'static str>,
    Resource,
    u16,
);

/// Every authenticated route: method, path, required key, a valid body (`{merchant}` is a
/// merchant of the live mode), what `{id}` stands for, and the status a key of the other mode
/// gets on a collection route (where there is no resource to hide).
#[rustfmt::skip]
const ROUTES: &[Route] = &[
    ("POST", "/v1/merchants", Access::Private, Some(r#"{"name": "Shop"}"#), Resource::None, 201),
    ("GET", "/v1/merchants", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/merchants/{id}", Access::Private, None, Resource::Merchant, 0),
    ("PATCH", "/v1/merchants/{id}", Access::Private, Some(r#"{"name": "Renamed"}"#), Resource::Merchant, 0),
    ("DELETE", "/v1/merchants/{id}", Access::Private, None, Resource::Merchant, 0),
    // A test key cannot pay for a live merchant: the merchant does not exist for it.
    ("POST", "/v1/transactions", Access::Private, Some(AUTH_BODY), Resource::None, 400),
    ("GET", "/v1/transactions", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/transactions/{id}", Access::Private, None, Resource::Transaction, 0),
    ("POST", "/v1/processor-connections", Access::Private, Some(r#"{"name": "Backup", "kind": "sandbox"}"#), Resource::None, 201),
    ("GET", "/v1/processor-connections", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/processor-connections/{id}", Access::Private, None, Resource::Connection, 0),
    // A test key cannot route to a live connection: it does not exist for it.
    ("POST", "/v1/plans", Access::Private, Some(r#"{"name": "Gold", "fee": {"basisPoints": 200, "fixed": 0}, "defaultConnectionId": "{connection}"}"#), Resource::None, 400),
    ("GET", "/v1/plans", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/plans/{id}", Access::Private, None, Resource::Plan, 0),
    // A BIN table has no mode: both modes read the same answer.
    ("GET", "/v1/bins/{bin}", Access::Private, None, Resource::None, 200),
    // Public keys may tokenize (spec 5.3); a token is made in the key's own mode.
    ("POST", "/v1/tokens", Access::PublicOrPrivate, Some(TOKEN_BODY), Resource::None, 201),
    ("GET", "/v1/tokens/{id}", Access::Private, None, Resource::Token, 0),
    ("POST", "/v1/webhooks", Access::Private, Some(WEBHOOK_BODY), Resource::None, 201),
    ("GET", "/v1/webhooks", Access::Private, None, Resource::None, 200),
    // The catalogue has no mode: both modes read the same list.
    ("GET", "/v1/webhooks/event-types", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/webhooks/{id}", Access::Private, None, Resource::Webhook, 0),
    ("PATCH", "/v1/webhooks/{id}", Access::Private, Some(WEBHOOK_BODY), Resource::Webhook, 0),
    ("DELETE", "/v1/webhooks/{id}", Access::Private, None, Resource::Webhook, 0),
    ("GET", "/v1/webhooks/{id}/deliveries", Access::Private, None, Resource::Webhook, 0),
];

const WEBHOOK_BODY: &str =
    r#"{"endpointUrl": "https://example.com/hooks", "events": ["transaction.created"]}"#;

const TOKEN_BODY: &str =
    r#"{"payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}"#;

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
    let server = env.serve();
    let api = Api::new(&server);
    let (connection, plan) = live_plan(&api, &live_private).await;

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
            live_resource(&api, &live_private, *resource, &connection, &plan).await;
        let body = body.map(|b| {
            b.replace("{merchant}", &merchant)
                .replace("{connection}", &connection)
        });
        let body = body.as_deref();
        let path = template.replace("{id}", &id).replace("{bin}", "411111");
        let label = format!("{m} {template}");

        assert_identical_401s(&api, m, &path, body, &unauthenticated, &label).await;

        // Every key type may call a public-or-private route: no wrong type to refuse there.
        let (wrong, right_other_mode): (Vec<&str>, &str) = match access {
            Access::Private => (
                vec![&platform.public_key, &live_public],
                &platform.private_key,
            ),
            Access::Public => (
                vec![&platform.private_key, &live_private],
                &platform.public_key,
            ),
            Access::PublicOrPrivate => (vec![], &platform.public_key),
        };
        for key in wrong {
            let reply = api.send(method(m), &path, Some(key), body).await;
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
                let reply = api.send(method(m), &path, Some(key), body).await;
                assert_eq!(
                    reply.status,
                    StatusCode::NOT_FOUND,
                    "{label}: {}",
                    reply.text
                );
            }
            // Positive control: the owner of the resource is served.
            let reply = api.send(method(m), &path, Some(&live_private), body).await;
            assert!(
                reply.status.is_success(),
                "{label} as owner: {}",
                reply.text
            );
        } else {
            let reply = api
                .send(method(m), &path, Some(right_other_mode), body)
                .await;
            assert_eq!(
                reply.status.as_u16(),
                *other_mode_status,
                "{label}: {}",
                reply.text
            );
            // Positive control: the live owner is served.
            let reply = api.send(method(m), &path, Some(&live_private), body).await;
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

/// A fresh live merchant, and the live resource `{id}` stands for.
async fn live_resource(
    api: &Api,
    live_private: &str,
    resource: Resource,
    connection: &str,
    plan: &str,
) -> (String, String) {
    let live = api
        .post("/v1/merchants", live_private, r#"{"name": "Live shop"}"#)
        .await;
    assert_eq!(live.status, StatusCode::CREATED, "{}", live.text);
    let merchant = live.body["id"].as_str().unwrap().to_owned();
    let id = match resource {
        Resource::None => String::new(),
        Resource::Merchant => merchant.clone(),
        Resource::Connection => connection.to_owned(),
        Resource::Plan => plan.to_owned(),
        Resource::Token => {
            let token = api.post("/v1/tokens", live_private, TOKEN_BODY).await;
            assert_eq!(token.status, StatusCode::CREATED, "{}", token.text);
            token.body["id"].as_str().unwrap().to_owned()
        }
        Resource::Webhook => {
            let hook = api.post("/v1/webhooks", live_private, WEBHOOK_BODY).await;
            assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
            hook.body["id"].as_str().unwrap().to_owned()
        }
        Resource::Transaction => {
            let body = AUTH_BODY.replace("{merchant}", &merchant);
            let auth = api.post("/v1/transactions", live_private, &body).await;
            assert_eq!(auth.status, StatusCode::CREATED, "{}", auth.text);
            auth.body["id"].as_str().unwrap().to_owned()
        }
    };
    (merchant, id)
}

/// Live mode starts empty: gives it a connection and a default plan, through the API.
async fn live_plan(api: &Api, live_private: &str) -> (String, String) {
    let connection = api
        .post(
            "/v1/processor-connections",
            live_private,
            r#"{"name": "Live sandbox", "kind": "sandbox"}"#,
        )
        .await;
    assert_eq!(
        connection.status,
        StatusCode::CREATED,
        "{}",
        connection.text
    );
    let connection = connection.body["id"].as_str().unwrap().to_owned();
    let plan_body = format!(
        r#"{{"name": "Live plan", "fee": {{"basisPoints": 250, "fixed": 25}}, "defaultConnectionId": "{connection}", "default": true}}"#
    );
    let plan = api.post("/v1/plans", live_private, &plan_body).await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    (connection, plan.body["id"].as_str().unwrap().to_owned())
}

/// Every way of not being authenticated gets 401 with one identical body: no oracle.
async fn assert_identical_401s(
    api: &Api,
    m: &str,
    path: &str,
    body: Option<&str>,
    keys: &[(&str, Option<&str>)],
    label: &str,
) {
    let mut first_body = None;
    for (case, key) in keys {
        let reply = api.send(method(m), path, *key, body).await;
        assert_eq!(
            reply.status,
            StatusCode::UNAUTHORIZED,
            "{label} with {case} key"
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

on_both_backends!(
    refusals_on_every_route,
    wrong_type_on_an_inactive_key_is_401_not_403
);
