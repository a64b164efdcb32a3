//! Finishing touches utoipa cannot make: a component copied inline (a generic list view inlines
//! its items) becomes a reference to it again, and each list's `startingAfter` is typed as the
//! id of what the list holds.

#![expect(
    clippy::indexing_slicing,
    reason = "serde_json's index reads `null` for what is missing; the writes are into objects of \
              the document utoipa just wrote"
)]

use serde_json::{Map, Value, json};

const SCHEMAS: &str = "#/components/schemas/";

/// Replaces every inline copy of a component object with a `$ref` to it.
pub fn reference_copies(doc: &mut Value) {
    let Some(schemas) = doc["components"]["schemas"].as_object() else {
        return;
    };
    // Only objects with properties or alternatives: a bare `{"type": "string"}` is no copy.
    let components: Vec<(String, Value)> = schemas
        .iter()
        .filter(|(_, schema)| schema.get("properties").is_some() || schema.get("oneOf").is_some())
        .map(|(name, schema)| (name.clone(), schema.clone()))
        .collect();
    let Some(paths) = doc.get_mut("paths") else {
        return;
    };
    replace_copies(paths, &components, None);
    if let Some(schemas) = doc["components"]["schemas"].as_object_mut() {
        for (name, schema) in schemas.iter_mut() {
            replace_copies(schema, &components, Some(name));
        }
    }
    if let Some(hooks) = doc.get_mut("webhooks") {
        replace_copies(hooks, &components, None);
    }
}

/// Within `value` (the component `own`, if it is one, stays itself at its top).
fn replace_copies(value: &mut Value, components: &[(String, Value)], own: Option<&str>) {
    if own.is_none()
        && let Some((name, _)) = components.iter().find(|(_, schema)| schema == value)
    {
        *value = json!({ "$ref": format!("{SCHEMAS}{name}") });
        return;
    }
    match value {
        Value::Object(map) => {
            for inner in map.values_mut() {
                replace_copies(inner, components, None);
            }
        }
        Value::Array(items) => {
            for inner in items {
                replace_copies(inner, components, None);
            }
        }
        _ => {}
    }
}

/// The component a `$ref` names.
fn component<'a>(doc: &'a Value, reference: &Value) -> Option<&'a Value> {
    let name = reference.get("$ref")?.as_str()?.strip_prefix(SCHEMAS)?;
    doc["components"]["schemas"].get(name)
}

/// The schema of the id of the items a list operation answers with.
fn item_id(doc: &Value, operation: &Value) -> Option<Value> {
    let page = &operation["responses"]["200"]["content"]["application/json"]["schema"];
    let page = component(doc, page).unwrap_or(page);
    let item = &page["properties"]["data"]["items"];
    let item = component(doc, item).unwrap_or(item);
    let id = item["properties"].get("id")?;
    Some(json!({ "$ref": id.get("$ref")? }))
}

/// Types each list's cursor parameters as the id of its items.
pub fn type_cursors(doc: &mut Value) {
    let mut typed: Vec<(String, String, Value)> = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                if let Some(id) = item_id(doc, operation) {
                    typed.push((path.clone(), method.clone(), id));
                }
            }
        }
    }
    for (path, method, id) in typed {
        let parameters = &mut doc["paths"][&path][&method]["parameters"];
        for parameter in parameters.as_array_mut().into_iter().flatten() {
            if matches!(
                parameter["name"].as_str(),
                Some("startingAfter" | "endingBefore")
            ) {
                parameter["schema"] = id.clone();
            }
        }
    }
}

/// In each `oneOf` or `anyOf` of closed objects, names in every alternative the properties of the
/// others as `false` (never present). `additionalProperties: false` already says so; this says it
/// in a way generated types keep (`token?: never`), so that card fields beside a token, or a
/// `transactionId` on an auth, fail to compile rather than at the server.
pub fn exclusive_alternatives(doc: &mut Value) {
    let mut groups = Vec::new();
    alternatives(doc, &mut groups);
    let mut additions: Vec<(String, Vec<String>)> = Vec::new();
    for group in groups {
        let closed: Vec<(String, Vec<String>)> = group
            .into_iter()
            .filter_map(|name| {
                let target = doc["components"]["schemas"].get(&name)?;
                (target.get("additionalProperties") == Some(&Value::Bool(false))).then(|| {
                    let own = target["properties"]
                        .as_object()
                        .map(|p| p.keys().cloned().collect())
                        .unwrap_or_default();
                    (name, own)
                })
            })
            .collect();
        for (name, own) in &closed {
            let others: Vec<String> = closed
                .iter()
                .flat_map(|(_, theirs)| theirs.iter())
                .filter(|property| !own.contains(property))
                .cloned()
                .collect();
            additions.push((name.clone(), others));
        }
    }
    for (name, others) in additions {
        if let Some(properties) = doc["components"]["schemas"][&name]["properties"].as_object_mut()
        {
            for other in others {
                properties.entry(other).or_insert(Value::Bool(false));
            }
        }
    }
}

/// The component names of every `oneOf` and `anyOf` in `value` made of references.
fn alternatives(value: &Value, found: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) => {
            for key in ["oneOf", "anyOf"] {
                if let Some(items) = map.get(key).and_then(Value::as_array) {
                    let names: Vec<String> = items
                        .iter()
                        .filter_map(|item| item.get("$ref")?.as_str()?.strip_prefix(SCHEMAS))
                        .map(ToOwned::to_owned)
                        .collect();
                    if names.len() > 1 {
                        found.push(names);
                    }
                }
            }
            map.values().for_each(|inner| alternatives(inner, found));
        }
        Value::Array(items) => items.iter().for_each(|inner| alternatives(inner, found)),
        _ => {}
    }
}

/// Turns each `x-not` extension into JSON Schema's `not`, which utoipa cannot write.
pub fn nots(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(not) = map.remove(holdfast_domain::schema::rules::NOT_EXTENSION) {
                map.insert("not".into(), not);
            }
            map.values_mut().for_each(nots);
        }
        Value::Array(items) => items.iter_mut().for_each(nots),
        _ => {}
    }
}

/// Where the API is served: relative, so the document is right on whatever host serves it.
pub fn add_servers(doc: &mut Value) {
    let mut server = Map::new();
    server.insert("url".into(), "/".into());
    server.insert(
        "description".into(),
        "The server that serves this document (its HOLDFAST_PUBLIC_URL).".into(),
    );
    doc["servers"] = Value::Array(vec![Value::Object(server)]);
}
