use std::collections::BTreeSet;

use holdfast_domain::auth::Access;
use holdfast_domain::webhook::EventType;
use serde_json::Value;

use super::document;
use crate::routes::catalogue;

fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, _) in item.as_object().expect("a path item") {
            found.insert((method.to_uppercase(), path.clone()));
        }
    }
    found
}

/// The document and the catalogue the gate enforces list exactly the same routes.
#[test]
fn the_document_lists_exactly_the_routes_served() {
    let served: BTreeSet<(String, String)> = catalogue()
        .into_iter()
        .map(|route| (route.method.to_string(), route.path.to_owned()))
        .collect();
    assert_eq!(operations(document()), served);
}

/// Each operation asks for the key types its route takes, as the catalogue declares them.
#[test]
fn each_operation_names_the_keys_its_route_takes() {
    let doc = document();
    for route in catalogue() {
        let op = &doc["paths"][route.path][route.method.as_str().to_lowercase()];
        let keys: Vec<&str> = op["security"]
            .as_array()
            .expect("security")
            .iter()
            .filter_map(|r| r.as_object()?.keys().next().map(String::as_str))
            .collect();
        let expected: &[&str] = match route.access {
            Access::Private => &["privateKey"],
            Access::Public => &["publicApiKey"],
            Access::PublicOrPrivate => &["privateKey", "publicKey"],
        };
        assert_eq!(keys, expected, "{} {}", route.method, route.path);
        assert_eq!(
            doc["components"]["securitySchemes"][expected[0]]["in"],
            if route.access == Access::Public {
                "query"
            } else {
                "header"
            },
            "a script tag sends no header"
        );
        for status in ["400", "401", "429"] {
            assert!(
                op["responses"][status].is_object(),
                "{} {} {status}",
                route.method,
                route.path
            );
        }
    }
}

fn references(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                match (key.as_str(), inner) {
                    ("$ref", Value::String(target)) => found.push(target.clone()),
                    _ => references(inner, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| references(item, found)),
        _ => {}
    }
}

/// Every `$ref` names a schema the document defines.
#[test]
fn every_reference_resolves() {
    let doc = document();
    let mut found = Vec::new();
    references(doc, &mut found);
    assert!(!found.is_empty());
    for target in found {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{target} is not a schema reference"));
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "{target} is not defined"
        );
    }
}

/// The `webhooks` section has every event type of the catalogue, each with its `data`.
#[test]
fn every_event_type_is_a_webhook_with_its_data() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    let hooks = doc["webhooks"].as_object().expect("webhooks");
    assert_eq!(hooks.len(), EventType::ALL.len());
    for event in EventType::ALL {
        let body =
            &hooks[event.as_str()]["post"]["requestBody"]["content"]["application/json"]["schema"];
        assert_eq!(body["properties"]["eventType"]["const"], event.as_str());
        assert!(body["properties"]["data"].is_object(), "{}", event.as_str());
    }
    assert_eq!(
        hooks["transaction.created"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            ["properties"]["data"]["$ref"],
        "#/components/schemas/Transaction"
    );
}

/// Every operation describes the request headers every route reads: a client's request id and
/// trace context, and on POST the idempotency key with its limits.
#[test]
fn every_operation_names_the_headers_the_server_reads() {
    let doc = document();
    for route in catalogue() {
        let method = route.method.as_str().to_lowercase();
        let op = &doc["paths"][route.path][&method];
        let header = |name: &str| {
            op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["in"] == "header" && p["name"] == name)
                .cloned()
        };
        for name in ["x-request-id", "traceparent"] {
            let found = header(name).unwrap_or_else(|| panic!("{method} {} {name}", route.path));
            assert_eq!(found["required"], false);
            assert!(found["schema"]["pattern"].is_string(), "{name}");
        }
        let key = header("Idempotency-Key");
        assert_eq!(key.is_some(), method == "post", "{method} {}", route.path);
        if let Some(key) = key {
            assert_eq!(key["schema"]["minLength"], 1);
            assert_eq!(key["schema"]["maxLength"], 255);
            assert_eq!(key["schema"]["type"], "string");
        }
    }
}
