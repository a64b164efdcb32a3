//! Extreme values in every query parameter of every `/v1` route (as the OpenAPI document lists
//! them, so a new parameter joins the table by being described) and in every field of every
//! dashboard form (as the pages render them): far dates, offsets of ±23:59, 10^30, -1, NUL,
//! 10,000 characters. On both backends: every request answered, never a 5xx, and no panic in
//! the server's log.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::BTreeSet;

use holdfast_e2e::dashboard::{ADMIN_PASSWORD, client, owner_and_viewer, sign_in};
use holdfast_e2e::raw::RawRequest;
use holdfast_e2e::routes::{
    ROUTES, SERVER_ENV, concrete, key_for, present_key, resource_of, test_plan,
};
use holdfast_e2e::{Api, Env, on_both_backends};

/// What a hostile or careless client puts where a value goes, percent-encoded for a URL.
fn extremes() -> Vec<(&'static str, String)> {
    vec![
        ("the last day", "9999-12-31".into()),
        ("day zero", "0000-01-01".into()),
        ("past the last instant", "9999-12-31T23:59:59-23:59".into()),
        (
            "before the first instant",
            "0001-01-01T00:00:00%2B23:59".into(),
        ),
        ("10^30", "1000000000000000000000000000000".into()),
        ("-1", "-1".into()),
        ("NUL", "%00".into()),
        ("10,000 characters", "a".repeat(10_000)),
    ]
}

/// The query parameters the document describes for `method` on `template`.
fn query_parameters(method: &str, template: &str) -> Vec<String> {
    let document = holdfast_api::openapi::document();
    let operation = &document["paths"][template][method.to_ascii_lowercase()];
    operation["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["in"] == "query")
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect()
}

async fn extreme_values_in_every_query_parameter_and_dashboard_field(env: Env) {
    owner_and_viewer(&env);
    let platform = env.create_platform("Extremes");
    let mut server = env.serve_with(SERVER_ENV);
    let base = server.base_url.clone();
    let api = Api::new(&server);
    let (connection, plan) = test_plan(&api, &platform.private_key).await;

    let mut sent = 0;
    for (method, template, access, _, resource, _) in ROUTES {
        let parameters = query_parameters(method, template);
        if parameters.is_empty() {
            continue;
        }
        let (_, id) = resource_of(&api, &platform.private_key, *resource, &connection, &plan).await;
        let path = concrete(template, &id);
        let key = key_for(*access, &platform.private_key, &platform.public_key);
        for parameter in &parameters {
            for (label, value) in extremes() {
                let (target, header) =
                    present_key(*access, &format!("{path}?{parameter}={value}"), Some(key));
                let mut request = RawRequest::new(method, &target);
                if let Some(key) = header {
                    request = request.header("x-api-key", key);
                }
                let what = format!("{method} {template} {parameter}={label}");
                let reply = request
                    .send(&base)
                    .await
                    .unwrap_or_else(|| panic!("{what}: no answer"));
                assert!(
                    reply.status < 500,
                    "{what}: {} {}",
                    reply.status,
                    reply.text()
                );
                sent += 1;
            }
        }
    }
    assert!(
        sent >= 80,
        "only {sent} query requests: are the parameters described?"
    );
    eprintln!("{sent} requests with extreme query values");

    sent += dashboard_fields(&server).await;

    assert!(server.terminate().success());
    let log = server.output();
    assert!(!log.contains("panicked"), "a panic in the log:\n{log}");
    assert!(sent >= 200, "only {sent} requests were made");
}

/// Every field of every form on the dashboard's pages, each value in turn (the form's other
/// fields as the page gave them, its token valid), and every query parameter of a form that
/// reads: as the owner. Returns how many requests were made.
async fn dashboard_fields(server: &holdfast_e2e::Server) -> usize {
    let cookie = sign_in(server, "owner@example.com", ADMIN_PASSWORD).await;
    let http = client();
    let mut pages = BTreeSet::from([
        "/dashboard/keys".to_owned(),
        "/dashboard/transactions".to_owned(),
        "/dashboard/merchants".to_owned(),
        "/dashboard/boarding".to_owned(),
        "/dashboard/processors".to_owned(),
        "/dashboard/settings/webhooks".to_owned(),
        "/dashboard/audit".to_owned(),
        "/dashboard/reset".to_owned(),
        "/dashboard/platforms".to_owned(),
    ]);
    // A subscription's page has forms of its own.
    let hooks = http
        .post(server.url("/dashboard/settings/webhooks"))
        .header("cookie", &cookie)
        .form(&[
            ("csrf", token(&http, server, &cookie).await.as_str()),
            ("endpointUrl", "https://example.com/hooks"),
            ("events", "transaction.created"),
        ])
        .send()
        .await
        .unwrap();
    if let Some(to) = hooks.headers().get("location") {
        pages.insert(to.to_str().unwrap().to_owned());
    }
    let mut sent = 0;
    let mut forms_seen = 0;
    for page in &pages {
        let html = http
            .get(server.url(page))
            .header("cookie", &cookie)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for form in forms(&html) {
            // Ending the session would end the sweep; it has no field to vary anyway.
            if form.action.ends_with("/sign-out") {
                continue;
            }
            forms_seen += 1;
            for field in form.fields.iter().filter(|(name, _)| name != "csrf") {
                for (label, value) in extremes() {
                    let value = value.replace("%00", "\0").replace("%2B", "+");
                    let what = format!("{} {} {}={label}", form.method, form.action, field.0);
                    let fields: Vec<(String, String)> = form
                        .fields
                        .iter()
                        .map(|(n, v)| {
                            let v = if n == &field.0 {
                                value.clone()
                            } else {
                                v.clone()
                            };
                            (n.clone(), v)
                        })
                        .collect();
                    let request = if form.method == "get" {
                        http.get(server.url(&form.action)).query(&fields)
                    } else {
                        http.post(server.url(&form.action))
                            .header("origin", &server.base_url)
                            .form(&fields)
                    };
                    let answer = request.header("cookie", &cookie).send().await;
                    let answer = answer.unwrap_or_else(|e| panic!("{what}: no answer: {e}"));
                    assert!(
                        answer.status().as_u16() < 500,
                        "{what}: {}",
                        answer.status()
                    );
                    sent += 1;
                }
            }
        }
    }
    assert!(
        forms_seen >= 8,
        "only {forms_seen} dashboard forms were found"
    );
    eprintln!("{forms_seen} dashboard forms, {sent} requests");
    sent
}

async fn token(http: &reqwest::Client, server: &holdfast_e2e::Server, cookie: &str) -> String {
    let html = http
        .get(server.url("/dashboard/keys"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = html.split(r#"name="csrf" value=""#).nth(1).unwrap();
    token[..token.find('"').unwrap()].to_owned()
}

/// A form as the page renders it: where it goes, how, and its named fields with their values.
#[derive(Debug)]
struct Form {
    method: String,
    action: String,
    fields: Vec<(String, String)>,
}

/// The forms of a page rendered by our own templates (attributes in double quotes).
fn forms(html: &str) -> Vec<Form> {
    let attribute = |tag: &str, name: &str| -> Option<String> {
        let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
        let end = tag[start..].find('"')? + start;
        Some(html_unescape(&tag[start..end]))
    };
    let mut out = Vec::new();
    for chunk in html.split("<form").skip(1) {
        let Some(end) = chunk.find("</form>") else {
            continue;
        };
        let body = &chunk[..end];
        let open = &body[..body.find('>').unwrap_or(0)];
        let method = attribute(open, "method").unwrap_or_else(|| "get".into());
        let Some(action) = attribute(open, "action") else {
            continue;
        };
        let mut fields = Vec::new();
        for tag in body.split('<').skip(1) {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            if !(tag.starts_with("input")
                || tag.starts_with("select")
                || tag.starts_with("textarea"))
            {
                continue;
            }
            if let Some(name) = attribute(tag, "name") {
                let value = attribute(tag, "value").unwrap_or_default();
                fields.push((name, value));
            }
        }
        out.push(Form {
            method: method.to_ascii_lowercase(),
            action,
            fields,
        });
    }
    out
}

fn html_unescape(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

#[test]
fn the_form_reader_finds_fields_and_values() {
    let html = r#"<main><form class="stack" method="post" action="/dashboard/keys"><input type="hidden" name="csrf" value="T&amp;1"><label for="n">Name</label><input id="n" type="text" name="name"><select id="t" name="type"><option value="private">P</option></select></form><form method="get" action="/dashboard/transactions"><input name="from" value=""></form></main>"#;
    let found = forms(html);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].method, "post");
    assert_eq!(
        found[0].fields,
        [
            ("csrf".to_owned(), "T&1".to_owned()),
            ("name".to_owned(), String::new()),
            ("type".to_owned(), String::new()),
        ]
    );
    assert_eq!(found[1].action, "/dashboard/transactions");
}

on_both_backends!(extreme_values_in_every_query_parameter_and_dashboard_field);
