//! `/docs`: the OpenAPI document as a page for people, rendered on the server from the same
//! document `GET /v1/openapi.json` serves. No script at all, one stylesheet embedded in the
//! binary, and a Content-Security-Policy that allows nothing else.

use std::fmt::Write as _;
use std::sync::LazyLock;

use actix_web::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, ContentType};
use actix_web::{HttpResponse, web};
use serde_json::Value;

use super::openapi;
use holdfast_web::html::escape;

pub const PATH: &str = "/docs";
const STYLESHEET_PATH: &str = "/docs/docs.css";
const STYLESHEET: &str = include_str!("../assets/docs.css");
const POLICY: &str = "default-src 'none'; style-src 'self'; base-uri 'none'; \
                      form-action 'none'; frame-ancestors 'none'";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.route(PATH, web::get().to(page))
        .route(STYLESHEET_PATH, web::get().to(stylesheet));
}

async fn page() -> HttpResponse {
    static PAGE: LazyLock<String> = LazyLock::new(|| render(openapi::document()));
    HttpResponse::Ok()
        .content_type(ContentType::html())
        .insert_header((CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .body(PAGE.as_str())
}

async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .insert_header((CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((CACHE_CONTROL, "no-cache"))
        .body(STYLESHEET)
}

/// Prose from the document: escaped, with its `code` spans marked as code.
fn prose(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_owned()
            }
        })
        .collect()
}

/// An anchor id from any text: letters, digits and dashes.
fn anchor(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// A schema in a few words: its name when it is a reference, else its type.
fn schema_name(schema: &Value) -> String {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.rsplit('/').next().unwrap_or(reference);
        return format!(
            r##"<a href="#schema-{}">{}</a>"##,
            anchor(name),
            escape(name)
        );
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        if let Some(choices) = schema.get(key).and_then(Value::as_array) {
            let names: Vec<String> = choices.iter().map(schema_name).collect();
            return names.join(" or ");
        }
    }
    if let Some(items) = schema.get("items") {
        return format!("array of {}", schema_name(items));
    }
    if let Some(words) = schema.get("enum").and_then(Value::as_array) {
        let words: Vec<String> = words
            .iter()
            .map(|w| format!("<code>{}</code>", escape(w.as_str().unwrap_or_default())))
            .collect();
        return format!("one of {}", words.join(", "));
    }
    match schema.get("type") {
        Some(Value::String(kind)) => escape(kind),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .map(escape)
            .collect::<Vec<_>>()
            .join(" or "),
        _ => "any".to_owned(),
    }
}

#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's `Index` on a `Value` reads `Null` for what is missing, never panics"
)]
fn render(doc: &Value) -> String {
    let mut html = String::new();
    let title = escape(text(&doc["info"], "title"));
    let version = escape(text(&doc["info"], "version"));
    let _ = write!(
        html,
        r##"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>{title} API reference</title><link rel="stylesheet" href="{STYLESHEET_PATH}"></head><body><a class="skip" href="#main">Skip to the reference</a><header><h1>{title} API reference <span class="version">{version}</span></h1><p>{}</p><p>The same reference as OpenAPI 3.1: <a href="{}">{}</a>.</p></header><nav aria-label="Operations"><h2>Operations</h2><ul>"##,
        prose(text(&doc["info"], "description")),
        openapi::PATH,
        openapi::PATH,
    );
    let operations = operations(doc);
    for (method, path, _) in &operations {
        let _ = write!(
            html,
            r##"<li><a href="#{}"><span class="method">{}</span> {}</a></li>"##,
            anchor(&format!("{method}-{path}")),
            method.to_uppercase(),
            escape(path)
        );
    }
    let _ = write!(html, "</ul></nav><main id=\"main\"><h2>Operations</h2>");
    for (method, path, op) in &operations {
        operation(&mut html, method, path, op);
    }
    html.push_str("<h2>Webhooks</h2><p>Each is a POST to a subscription's endpoint, signed as Standard Webhooks describes.</p>");
    if let Some(hooks) = doc["webhooks"].as_object() {
        for (name, item) in hooks {
            let op = &item["post"];
            let _ = write!(
                html,
                r#"<section class="operation" id="event-{}" aria-labelledby="event-{}-title"><h3 id="event-{}-title"><code>{}</code></h3><p>{}</p><p>Body: <code>data</code> is {}.</p></section>"#,
                anchor(name),
                anchor(name),
                anchor(name),
                escape(name),
                prose(text(op, "description")),
                schema_name(
                    &op["requestBody"]["content"]["application/json"]["schema"]["properties"]["data"]
                ),
            );
        }
    }
    html.push_str("<h2>Schemas</h2>");
    if let Some(schemas) = doc["components"]["schemas"].as_object() {
        for (name, schema) in schemas {
            schema_section(&mut html, name, schema);
        }
    }
    html.push_str("</main></body></html>");
    html
}

fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    if let Some(paths) = doc["paths"].as_object() {
        for (path, item) in paths {
            for method in ["get", "post", "patch", "put", "delete"] {
                if let Some(op) = item.get(method) {
                    found.push((method.to_owned(), path.clone(), op.clone()));
                }
            }
        }
    }
    found
}

#[expect(
    clippy::indexing_slicing,
    reason = "serde_json's `Index` on a `Value` reads `Null` for what is missing, never panics"
)]
fn operation(html: &mut String, method: &str, path: &str, op: &Value) {
    let id = anchor(&format!("{method}-{path}"));
    let keys: Vec<&str> = op["security"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|requirement| requirement.as_object()?.keys().next().map(String::as_str))
        .collect();
    let _ = write!(
        html,
        r#"<section class="operation" id="{id}" aria-labelledby="{id}-title"><h3 id="{id}-title"><span class="method">{}</span> <code>{}</code></h3><p>{} {}</p><p class="keys">Key: {}</p>"#,
        method.to_uppercase(),
        escape(path),
        prose(text(op, "summary")),
        prose(text(op, "description")),
        escape(&keys.join(" or ")),
    );
    if let Some(parameters) = op["parameters"].as_array().filter(|p| !p.is_empty()) {
        html.push_str(r#"<table><caption>Parameters</caption><thead><tr><th scope="col">Name</th><th scope="col">In</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>"#);
        for p in parameters {
            let _ = write!(
                html,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(text(p, "name")),
                escape(text(p, "in")),
                schema_name(&p["schema"]),
                prose(text(p, "description")),
            );
        }
        html.push_str("</tbody></table>");
    }
    let body = &op["requestBody"]["content"]["application/json"]["schema"];
    if !body.is_null() {
        let _ = write!(html, "<p>Body: {}</p>", schema_name(body));
    }
    html.push_str(r#"<table><caption>Responses</caption><thead><tr><th scope="col">Status</th><th scope="col">Body</th><th scope="col">When</th></tr></thead><tbody>"#);
    if let Some(responses) = op["responses"].as_object() {
        for (status, response) in responses {
            let schema = &response["content"]["application/json"]["schema"];
            let _ = write!(
                html,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(status),
                if schema.is_null() {
                    String::new()
                } else {
                    schema_name(schema)
                },
                prose(text(response, "description")),
            );
        }
    }
    html.push_str("</tbody></table></section>");
}

fn schema_section(html: &mut String, name: &str, schema: &Value) {
    let id = format!("schema-{}", anchor(name));
    let _ = write!(
        html,
        r#"<section class="schema" id="{id}" aria-labelledby="{id}-title"><h3 id="{id}-title">{}</h3><p>{}</p>"#,
        escape(name),
        prose(text(schema, "description")),
    );
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    match schema["properties"].as_object() {
        Some(properties) => {
            html.push_str(r#"<table><caption>Fields</caption><thead><tr><th scope="col">Field</th><th scope="col">Type</th><th scope="col">Description</th></tr></thead><tbody>"#);
            for (field, property) in properties {
                let _ = write!(
                    html,
                    "<tr><td><code>{}</code>{}</td><td>{}</td><td>{}</td></tr>",
                    escape(field),
                    if required.contains(&field.as_str()) {
                        " <span class=\"required\">required</span>"
                    } else {
                        ""
                    },
                    schema_name(property),
                    prose(text(property, "description")),
                );
            }
            html.push_str("</tbody></table>");
        }
        None => {
            let _ = write!(html, "<p>{}</p>", schema_name(schema));
        }
    }
    html.push_str("</section>");
}
