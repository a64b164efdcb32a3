//! Spec 5 and 7 over every route: 401 for a missing, malformed, unknown, inactive or deleted
//! key (one identical body), 403 for the wrong key type, 404 for another mode's or another
//! platform's resource. The table must list exactly the routes the server registers.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast::http::routes::catalogue;
use holdfast_domain::auth::Access;
use holdfast_e2e::routes::{ROUTES, live_plan, live_resource};
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
