//! The merchants API from outside: create, list, get, update, delete; every refusal names its
//! field and writes nothing.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_e2e::routes::test_plan;
use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn lifecycle(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;

    let created = api
        .post(
            "/v1/merchants",
            key,
            r#"{"name": "  Corner Shop  ", "email": "shop@example.com"}"#,
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let m = &created.body;
    assert_eq!(m["onboardingStatus"], "not_started");
    let keys: Vec<&str> = m.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        [
            "id",
            "platformId",
            "mode",
            "name",
            "currency",
            "email",
            "planId",
            "onboardingStatus",
            "metadata",
            "createdOn",
            "updatedOn"
        ]
    );
    let id = m["id"].as_str().unwrap();
    assert!(id.starts_with("mid_"), "{id}");
    assert_eq!(m["platformId"], platform.id.as_str());
    assert_eq!(m["mode"], "test");
    assert_eq!(
        m["name"], "Corner Shop",
        "surrounding whitespace is trimmed"
    );
    assert_eq!(m["currency"], "USD", "USD when none is given");
    assert_eq!(m["email"], "shop@example.com");
    assert_eq!(m["metadata"], json!({}), "none given: an empty object");
    assert!(m["createdOn"].as_str().unwrap().ends_with('Z'));

    let path = format!("/v1/merchants/{id}");
    let fetched = api.get(&path, key).await;
    assert_eq!((fetched.status, &fetched.body), (StatusCode::OK, m));

    let updated = api
        .patch(&path, key, r#"{"currency": "EUR", "email": null}"#)
        .await;
    assert_eq!(updated.status, StatusCode::OK, "{}", updated.text);
    assert_eq!(updated.body["currency"], "EUR");
    assert_eq!(updated.body["email"], Value::Null);
    assert_eq!(
        updated.body["name"], "Corner Shop",
        "fields not sent are kept"
    );
    assert_eq!(updated.body["createdOn"], m["createdOn"]);
    assert_eq!(api.get(&path, key).await.body, updated.body);
    // Any currency of the list, whatever its minor unit (JPY has none, BHD three).
    for code in ["JPY", "BHD"] {
        let changed = api
            .patch(&path, key, &format!(r#"{{"currency": "{code}"}}"#))
            .await;
        assert_eq!(changed.status, StatusCode::OK, "{code}: {}", changed.text);
        assert_eq!(changed.body["currency"], code);
    }

    let deleted = api.delete(&path, key).await;
    assert_eq!(
        (deleted.status, deleted.body),
        (StatusCode::OK, json!({"id": id, "deleted": true}))
    );
    for method in [Method::GET, Method::DELETE] {
        let gone = api.send(method, &path, Some(key), None).await;
        assert_eq!(gone.status, StatusCode::NOT_FOUND);
        assert_eq!(gone.body["error"]["code"], "resource_missing");
    }
    assert_eq!(
        api.patch(&path, key, r#"{"name": "X"}"#).await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(api.get("/v1/merchants", key).await.body["data"], json!([]));
    assert_eq!(
        api.get("/v1/merchants/not-an-id", key).await.status,
        StatusCode::NOT_FOUND
    );
}

async fn bad_input_names_the_field_and_writes_nothing(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let long_name = format!(r#"{{"name": "{}"}}"#, "x".repeat(101));
    let create_cases: Vec<(&str, &str)> = vec![
        ("", "body"),
        ("not json", "body"),
        ("[]", "body"),
        ("{}", "name"),
        (r#"{"name": ""}"#, "name"),
        (r#"{"name": "   "}"#, "name"),
        (&long_name, "name"),
        (r#"{"name": 5}"#, "name"),
        (r#"{"name": "A", "currency": "usd"}"#, "currency"),
        (r#"{"name": "A", "currency": "US"}"#, "currency"),
        (r#"{"name": "A", "currency": 840}"#, "currency"),
        // Three letters, but no currency of ISO 4217's list, nor a funds code, nor a withdrawn one.
        (r#"{"name": "A", "currency": "XYZ"}"#, "currency"),
        (r#"{"name": "A", "currency": "USN"}"#, "currency"),
        (r#"{"name": "A", "currency": "HRK"}"#, "currency"),
        (r#"{"name": "A", "email": "not-an-email"}"#, "email"),
        (r#"{"name": "A", "curency": "EUR"}"#, "curency"),
    ];
    for (body, param) in &create_cases {
        let reply = api.post("/v1/merchants", key, body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.error_param(), Some(*param), "{body}: {}", reply.text);
        assert_eq!(reply.body["error"]["type"], "invalid_request_error");
        assert!(
            reply.body["error"]["requestId"]
                .as_str()
                .unwrap()
                .starts_with("req_")
        );
    }
    assert_eq!(
        api.get("/v1/merchants", key).await.body["data"],
        json!([]),
        "nothing half-written"
    );

    let created = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    let path = format!("/v1/merchants/{}", created.body["id"].as_str().unwrap());
    let patch_cases = [
        (r#"{"name": null}"#, "name"),
        (r#"{"currency": null}"#, "currency"),
        (r#"{"currency": "eu"}"#, "currency"),
        (r#"{"name": "ok", "email": "bad"}"#, "email"),
        (r#"{"mode": "live"}"#, "mode"),
    ];
    for (body, param) in patch_cases {
        let reply = api.patch(&path, key, body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            reply.text
        );
        assert_eq!(reply.error_param(), Some(param), "{body}");
    }
    assert_eq!(
        api.get(&path, key).await.body,
        created.body,
        "refused updates change nothing"
    );

    let oversized = format!(r#"{{"name": "{}"}}"#, "x".repeat(70_000));
    let reply = api.post("/v1/merchants", key, &oversized).await;
    assert_eq!(reply.status, StatusCode::PAYLOAD_TOO_LARGE);
}

/// Every list pages the same way: newest first, `limit` (default 10, 1 to 100) and a
/// `startingAfter` cursor; the same rows once each, whatever the page size.
async fn pages_are_newest_first_with_a_cursor(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let (sandbox, _) = test_plan(&api, key).await;
    // Collection, a body for one more (`{i}` numbered), an id of another kind.
    let lists = [
        (
            "/v1/merchants",
            r#"{"name": "Shop {i}"}"#.to_owned(),
            "key_123",
        ),
        (
            "/v1/processor-connections",
            r#"{"name": "Backup {i}", "kind": "sandbox"}"#.to_owned(),
            "mid_123",
        ),
        (
            "/v1/plans",
            format!(
                r#"{{"name": "Plan {{i}}", "fee": {{"basisPoints": 200, "fixed": 0}}, "defaultConnectionId": "{sandbox}"}}"#
            ),
            "mid_123",
        ),
        (
            "/v1/webhooks",
            r#"{"endpointUrl": "https://example.com/{i}", "events": ["transaction.created"]}"#
                .to_owned(),
            "mid_123",
        ),
    ];
    for (collection, body, wrong_id) in lists {
        pages_newest_first(&api, key, collection, &body, wrong_id).await;
    }
}

/// Makes 12 of `collection` from `body`, then reads them back in pages of 5.
/// Back from the oldest page of `seen` (every item, newest first, in pages of 5) with
/// `endingBefore`: the same items, each page newest first, `hasMore` saying newer ones follow.
async fn walk_back(api: &Api, key: &str, collection: &str, seen: &[String]) {
    let mut back: Vec<Vec<String>> = Vec::new();
    // The first item of the oldest page.
    let last_page = (seen.len() - 1) / 5 * 5;
    let mut cursor = seen[last_page].clone();
    loop {
        let page = api
            .get(&format!("{collection}?limit=5&endingBefore={cursor}"), key)
            .await;
        assert_eq!(page.status, StatusCode::OK, "{collection}: {}", page.text);
        let ids: Vec<String> = page.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect();
        let more = page.body["hasMore"].as_bool().unwrap();
        cursor.clone_from(&ids[0]);
        back.push(ids);
        if !more {
            break;
        }
    }
    back.reverse();
    assert_eq!(
        back.concat(),
        seen[..last_page],
        "{collection}: endingBefore walks back"
    );
}

async fn pages_newest_first(api: &Api, key: &str, collection: &str, body: &str, wrong_id: &str) {
    let existing: Vec<String> = api.get(&format!("{collection}?limit=100"), key).await.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let mut created = Vec::new();
    for i in 0..12 {
        let reply = api
            .post(collection, key, &body.replace("{i}", &i.to_string()))
            .await;
        assert_eq!(
            reply.status,
            StatusCode::CREATED,
            "{collection}: {}",
            reply.text
        );
        created.push(reply.body["id"].as_str().unwrap().to_owned());
    }
    created.reverse();
    created.extend(existing);
    let mut seen = Vec::new();
    let mut shape = Vec::new();
    let mut path = format!("{collection}?limit=5");
    loop {
        let page = api.get(&path, key).await;
        assert_eq!(page.status, StatusCode::OK, "{collection}: {}", page.text);
        let data = page.body["data"].as_array().unwrap();
        let more = page.body["hasMore"].as_bool().unwrap();
        shape.push((data.len(), more));
        seen.extend(data.iter().map(|m| m["id"].as_str().unwrap().to_owned()));
        if !more {
            break;
        }
        path = format!(
            "{collection}?limit=5&startingAfter={}",
            seen.last().unwrap()
        );
    }
    let pages = created.len().div_ceil(5);
    assert_eq!(shape.len(), pages, "{collection}: {shape:?}");
    assert!(
        shape[..pages - 1].iter().all(|&s| s == (5, true)),
        "{collection}: {shape:?}"
    );
    assert_eq!(seen, created, "{collection}");
    walk_back(api, key, collection, &seen).await;
    assert_eq!(
        api.get(collection, key).await.body["data"]
            .as_array()
            .unwrap()
            .len(),
        10,
        "{collection}: default limit"
    );

    for (query, param) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=ten", "limit"),
        (
            &format!("startingAfter={wrong_id}") as &str,
            "startingAfter",
        ),
        ("sort=name", "sort"),
        (&format!("endingBefore={wrong_id}") as &str, "endingBefore"),
        (
            &format!("startingAfter={0}&endingBefore={0}", created[0]) as &str,
            "endingBefore",
        ),
    ] {
        let reply = api.get(&format!("{collection}?{query}"), key).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{collection}?{query}"
        );
        assert_eq!(reply.error_param(), Some(param), "{collection}?{query}");
    }
}

/// A merchant's metadata: written at creation, replaced whole by a PATCH that carries it, kept
/// by one that does not, removed by `null` or `{}`; Stripe's limits and no card number, each
/// refusal naming `metadata` without repeating the value and changing nothing.
async fn metadata_is_replaced_whole_and_checked(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let key = &platform.private_key;
    let created = api
        .post(
            "/v1/merchants",
            key,
            r#"{"name": "Shop", "metadata": {"crm": "acct-7", "tier": "gold"}}"#,
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    assert_eq!(
        created.body["metadata"],
        json!({"crm": "acct-7", "tier": "gold"})
    );
    let path = format!("/v1/merchants/{}", created.body["id"].as_str().unwrap());
    let steps = [
        (
            r#"{"name": "Renamed"}"#,
            json!({"crm": "acct-7", "tier": "gold"}),
        ),
        (
            r#"{"metadata": {"crm": "acct-8"}}"#,
            json!({"crm": "acct-8"}),
        ),
        (r#"{"metadata": null}"#, json!({})),
        (r#"{"metadata": {"a": "1"}}"#, json!({"a": "1"})),
        (r#"{"metadata": {}}"#, json!({})),
    ];
    for (body, metadata) in steps {
        let patched = api.patch(&path, key, body).await;
        assert_eq!(patched.status, StatusCode::OK, "{body}: {}", patched.text);
        assert_eq!(patched.body["metadata"], metadata, "{body}");
        assert_eq!(api.get(&path, key).await.body["metadata"], metadata);
    }
    let fifty_one: serde_json::Map<String, Value> =
        (0..51).map(|i| (format!("k{i}"), json!("v"))).collect();
    let refused = [
        json!({"metadata": fifty_one}),
        json!({"metadata": {"k".repeat(41): "v"}}),
        json!({"metadata": {"white space": "v"}}),
        json!({"metadata": {"k": "v".repeat(501)}}),
        json!({"metadata": {"k": ""}}),
        json!({"metadata": {"k": 7}}),
        json!({"metadata": {"card": "4111 1111 1111 1111"}}),
        json!({"metadata": ["k", "v"]}),
    ];
    let before = api.get(&path, key).await.body;
    for body in &refused {
        for (method, target) in [
            (Method::PATCH, path.as_str()),
            (Method::POST, "/v1/merchants"),
        ] {
            let mut body = body.clone();
            if method == Method::POST {
                body["name"] = json!("Shop");
            }
            let reply = api
                .send(method.clone(), target, Some(key), Some(&body.to_string()))
                .await;
            assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{method} {body}");
            // A value of the wrong type is named by its key (`metadata.k`).
            let param = reply.error_param().unwrap_or_default();
            assert!(
                param == "metadata" || param.starts_with("metadata."),
                "{method} {body}: {param}"
            );
            assert!(!reply.text.contains("4111"), "never echoed: {}", reply.text);
        }
    }
    assert_eq!(api.get(&path, key).await.body, before, "nothing changed");
    let listed = api.get("/v1/merchants", key).await.body;
    assert_eq!(
        listed["data"].as_array().unwrap().len(),
        1,
        "nothing created"
    );
}

on_both_backends!(
    lifecycle,
    metadata_is_replaced_whole_and_checked,
    bad_input_names_the_field_and_writes_nothing,
    pages_are_newest_first_with_a_cursor,
);
