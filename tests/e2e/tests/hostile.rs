//! Every route × every hostile input we know of: wrong types, a canary card number in every
//! field, inside arrays, as an unknown field and as a key, NUL and invalid UTF-8 in the body,
//! the path, the query and headers, 10 MB, 10,000-deep nesting, encoded and dotted paths, wrong
//! methods and huge numbers. Never a 5xx, every refusal the envelope with a request id, and the
//! canary in no response, no log line and no byte of the database.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_api::routes::catalogue;
use holdfast_domain::auth::Access;
use holdfast_e2e::raw::{RawReply, RawRequest};
use holdfast_e2e::routes::{
    ROUTES, SERVER_ENV, concrete, key_for, present_key, resource_of, test_plan,
};
use holdfast_e2e::{Env, contains, on_both_backends};
use serde_json::{Value, json};

/// A Mastercard test number: a card number nothing of ours may repeat, log or keep.
const CANARY: &str = "5555555555554444";
const CANARY_NUMBER: u64 = 5_555_555_555_554_444;

/// A number no integer field holds, written as the canary three times over (replaced into the
/// body's text after serialising, where a JSON number of that size cannot be built).
const HUGE: &str = "555555555555444455555555555544445555555555554444";

const METHODS: [&str; 6] = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// One request and what it is allowed to get.
struct Case {
    label: String,
    request: RawRequest,
    expect: Expect,
}

#[derive(Clone, PartialEq, Eq, Debug)]
enum Expect {
    /// Anything but a 5xx (a harmless extra may be served).
    NoServerError,
    /// A refusal: a 4xx.
    Refused,
    /// This status exactly.
    Status(u16),
    /// 405, naming in `Allow` the methods the path takes (RFC 9110 15.5.6).
    MethodNotAllowed(String),
}

async fn hostile_inputs_on_every_route(env: Env) {
    let platform = env.create_platform("Acme");
    let mut server = env.serve_with(SERVER_ENV);
    let base = server.base_url.clone();
    let api = holdfast_e2e::Api::new(&server);
    let (connection, plan) = test_plan(&api, &platform.private_key).await;

    let mut sent = 0;
    for (method, template, access, body, resource, _) in ROUTES {
        let (merchant, id) =
            resource_of(&api, &platform.private_key, *resource, &connection, &plan).await;
        let body = body.map(|b| {
            b.replace("{merchant}", &merchant)
                .replace("{connection}", &connection)
        });
        let path = concrete(template, &id);
        let key = key_for(*access, &platform.private_key, &platform.public_key);
        for (n, case) in cases(method, template, &path, body.as_deref(), (*access, key))
            .into_iter()
            .enumerate()
        {
            let mut request = case.request;
            if request.method == "POST" {
                // So that every refusal a POST gets is also stored for replay, then dumped.
                request = request.header("idempotency-key", format!("hostile-{template}-{n}"));
            }
            let label = format!("{method} {template}: {}", case.label);
            let reply = request.send(&base).await;
            let reply = reply.unwrap_or_else(|| panic!("{label}: no answer"));
            check(&reply, case.expect, &label);
            sent += 1;
        }
    }
    assert!(sent > 800, "only {sent} hostile requests were made");

    assert!(server.terminate().success());
    let log = server.output();
    assert!(log.contains("\"status\":400"), "the log is the server's");
    assert!(!log.contains(CANARY), "the canary is in the server log");
    let dump = env.dump().await;
    // Positive control: the refusals were stored under their keys, so the dump holds them.
    assert!(
        contains(&dump, b"hostile-/v1/merchants-0"),
        "the dump holds the stored refusals"
    );
    assert!(
        !contains(&dump, CANARY.as_bytes()),
        "the canary is in the database"
    );
}

fn check(reply: &RawReply, expect: Expect, label: &str) {
    let text = reply.text();
    assert!(reply.status < 500, "{label}: {} {text}", reply.status);
    assert!(
        !text.contains(CANARY),
        "{label}: the canary was echoed: {text}"
    );
    assert!(
        !reply.head.contains(CANARY),
        "{label}: the canary is in a header"
    );
    match expect {
        Expect::NoServerError => {}
        Expect::Refused => assert!(reply.status >= 400, "{label}: {} {text}", reply.status),
        Expect::Status(status) => assert_eq!(reply.status, status, "{label}: {text}"),
        Expect::MethodNotAllowed(allow) => {
            assert_eq!(reply.status, 405, "{label}: {text}");
            assert_eq!(reply.header("allow"), Some(allow.as_str()), "{label}");
        }
    }
    if reply.status >= 400 {
        let body = reply.json();
        assert!(
            body["error"]["type"].is_string(),
            "{label}: no envelope: {text}"
        );
        assert!(body["error"]["message"].is_string(), "{label}: {text}");
        assert!(
            body["error"]["requestId"]
                .as_str()
                .is_some_and(|id| id.starts_with("req_")),
            "{label}: no request id: {text}"
        );
        assert_eq!(
            reply.header("x-request-id"),
            body["error"]["requestId"].as_str(),
            "{label}"
        );
    }
    assert_eq!(
        reply.header("x-content-type-options"),
        Some("nosniff"),
        "{label}"
    );
    // Every answer is never stored, but for the one public by nature: the client script, kept
    // and revalidated on every load.
    let script = reply.status == 200
        && reply
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/javascript"));
    let expected = if script { "no-cache" } else { "no-store" };
    assert_eq!(reply.header("cache-control"), Some(expected), "{label}");
}

/// Hostile bodies in place of the route's valid `body`, each sent by `send`.
fn body_cases(body: &str, send: impl Fn(Vec<u8>) -> RawRequest) -> Vec<Case> {
    let refused = |label: String, raw: Vec<u8>| Case {
        label,
        request: send(raw),
        expect: Expect::Refused,
    };
    let valid: Value = serde_json::from_str(body).unwrap();
    let mut out: Vec<Case> = mutations(&valid)
        .into_iter()
        .map(|(label, mutated)| refused(label, mutated))
        .collect();
    out.extend(raw_bodies(body).into_iter().map(|(l, raw)| refused(l, raw)));
    // The route's own valid body with one bad character in its first string: that character
    // alone is what is refused, so it must be the 400 that names it.
    out.extend(bad_text_bodies(body).into_iter().map(|(label, raw)| Case {
        label,
        request: send(raw),
        expect: Expect::Status(400),
    }));
    out
}

/// A request presenting `key` as a route of `access` takes it.
fn keyed(method: &str, target: &str, access: Access, key: &str) -> RawRequest {
    let (target, header) = present_key(access, target, Some(key));
    let request = RawRequest::new(method, &target);
    match header {
        Some(key) => request.header("x-api-key", key),
        None => request,
    }
}

fn cases(
    method: &str,
    template: &str,
    path: &str,
    body: Option<&str>,
    (access, key): (Access, &str),
) -> Vec<Case> {
    let mut out = Vec::new();
    let with_key = |m: &str, target: &str| keyed(m, target, access, key);
    let refused = |label: String, request: RawRequest| Case {
        label,
        request,
        expect: Expect::Refused,
    };

    if let Some(body) = body {
        out.extend(body_cases(body, |raw| with_key(method, path).json(raw)));
    }
    // Query strings: the canary as a value and as a name, NUL and bytes that are not UTF-8.
    for query in [
        format!("limit={CANARY}"),
        format!("startingAfter={CANARY}"),
        format!("startingAfter=mid_{CANARY}"),
        format!("{CANARY}=1"),
        format!("x{CANARY}=1"),
        "startingAfter=mid_%00".to_owned(),
        "limit=%FF".to_owned(),
        format!("limit=1&limit={CANARY}"),
    ] {
        let target = format!("{path}?{query}");
        let mut request = with_key(method, &target);
        if let Some(body) = body {
            request = request.json(body.to_owned());
        }
        let expect = if query.contains("%00") || query.contains("%FF") {
            Expect::Status(400)
        } else {
            Expect::NoServerError
        };
        out.push(Case {
            label: format!("query {query}"),
            request,
            expect,
        });
    }
    // Path segments: the canary, NUL and invalid UTF-8 where an id goes, and after the route.
    if template.contains('{') {
        let at = template.find('{').unwrap();
        let prefix = &template[..at];
        for segment in [
            CANARY,
            &format!("mid_{CANARY}"),
            "mid_%00",
            "%FF%FE",
            "txn_%0A",
        ] {
            let target = format!(
                "{prefix}{segment}{}",
                &template[template.find('}').unwrap() + 1..]
            );
            // Text that is not text is a 400 before any route is looked at; an id that names
            // nothing is any refusal (404, or 400 where the id is a body field's).
            let expect = if segment.contains('%') {
                Expect::Status(400)
            } else {
                Expect::Refused
            };
            out.push(Case {
                label: format!("segment {segment}"),
                request: with_key(method, &target),
                expect,
            });
        }
    }
    out.push(refused(
        "trailing canary".into(),
        with_key(method, &format!("{path}/{CANARY}")),
    ));
    // The key header itself carrying the canary, or bytes that are not UTF-8.
    out.push(Case {
        label: "canary key".into(),
        request: RawRequest::new(method, path).header("x-api-key", format!("priv_{CANARY}")),
        expect: Expect::Status(401),
    });
    out.push(Case {
        label: "non-UTF-8 header".into(),
        request: with_key(method, path).header("x-note", b"\xff\xfe".to_vec()),
        expect: Expect::Status(400),
    });
    // Encoded and dotted forms of the path, without a key: the gate decides on exactly what the
    // router routes, so none of them is served.
    for target in path_variants(path) {
        out.push(refused(
            format!("keyless {target}"),
            RawRequest::new(method, &target),
        ));
    }
    out.extend(wrong_methods(template, path, (access, key)));
    out
}

/// Every method the path does not declare: 405, in the envelope, with the methods it takes.
fn wrong_methods(template: &str, path: &str, (access, key): (Access, &str)) -> Vec<Case> {
    let routes = catalogue();
    let declared: Vec<&str> = routes
        .iter()
        .filter(|r| r.path == template)
        .map(|r| r.method.as_str())
        .collect();
    let allow = declared.join(", ");
    METHODS
        .iter()
        .filter(|other| !declared.contains(other))
        .map(|other| Case {
            label: format!("method {other}"),
            request: keyed(other, path, access, key),
            expect: Expect::MethodNotAllowed(allow.clone()),
        })
        .collect()
}

/// Each field of a valid body replaced by the canary in a type it does not take, inside an
/// array, beside it as an unknown field, as a key, with a NUL, or as a huge number.
fn mutations(valid: &Value) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut paths = Vec::new();
    collect_paths(valid, &mut Vec::new(), &mut paths);
    for path in &paths {
        let current = get(valid, path).clone();
        let wrong: Vec<Value> = match &current {
            Value::String(_) => vec![
                json!(CANARY_NUMBER),
                json!([CANARY]),
                json!({ "value": CANARY }),
                json!(format!("x\u{0}{CANARY}")),
            ],
            Value::Number(_) => vec![
                json!(CANARY),
                json!([CANARY_NUMBER]),
                json!(HUGE),
                json!(-1e300),
            ],
            Value::Bool(_) => vec![json!(CANARY), json!(CANARY_NUMBER)],
            Value::Array(_) => vec![json!(CANARY), json!([[CANARY_NUMBER]])],
            Value::Object(_) => vec![json!(CANARY), json!([CANARY]), json!(CANARY_NUMBER)],
            Value::Null => vec![],
        };
        for value in wrong {
            let mut body = valid.clone();
            *get_mut(&mut body, path) = value.clone();
            let text = body.to_string().replace(&format!("\"{HUGE}\""), HUGE);
            out.push((format!("{} = {value}", path.join(".")), text.into_bytes()));
        }
        if let Value::Object(_) = current {
            let mut body = valid.clone();
            get_mut(&mut body, path)["hostile"] = json!(CANARY);
            out.push((
                format!("{}.hostile", path.join(".")),
                body.to_string().into_bytes(),
            ));
        }
    }
    let mut unknown = valid.clone();
    unknown["hostile"] = json!(CANARY);
    let mut as_key = valid.clone();
    as_key[CANARY] = json!(1);
    for (label, body) in [
        ("unknown field", unknown),
        ("canary as a key", as_key),
        ("array body", json!([valid, CANARY])),
        ("string body", json!(CANARY)),
    ] {
        out.push((label.to_owned(), body.to_string().into_bytes()));
    }
    out
}

/// `valid` with `bad` (bytes) at the start of its first string value.
fn with_bad_text(valid: &str, bad: &[u8]) -> Vec<u8> {
    let at = valid.find(": \"").expect("a body with a string value") + 3;
    let mut out = valid.as_bytes()[..at].to_vec();
    out.extend_from_slice(bad);
    out.extend_from_slice(&valid.as_bytes()[at..]);
    out
}

/// The route's valid body, but for one character that is not text; none for a body without
/// text (an early repayment's amount).
fn bad_text_bodies(valid: &str) -> Vec<(String, Vec<u8>)> {
    if !valid.contains(": \"") {
        return Vec::new();
    }
    vec![
        (
            "invalid UTF-8 in a valid body".into(),
            with_bad_text(valid, b"\xff\xfe"),
        ),
        (
            "escaped NUL in a valid body".into(),
            with_bad_text(valid, br"a\u0000b"),
        ),
        (
            "raw NUL in a valid body".into(),
            with_bad_text(valid, b"a\x00b"),
        ),
    ]
}

/// Bodies no JSON value can describe.
fn raw_bodies(valid: &str) -> Vec<(String, Vec<u8>)> {
    let mut not_utf8 = br#"{"name": ""#.to_vec();
    not_utf8.extend_from_slice(b"\xff\xfe");
    not_utf8.extend_from_slice(CANARY.as_bytes());
    not_utf8.extend_from_slice(br#""}"#);
    let huge = format!(
        r#"{{"name": "{}"}}"#,
        CANARY.repeat(10 * 1024 * 1024 / CANARY.len())
    );
    vec![
        ("invalid UTF-8".into(), not_utf8),
        ("10 MB".into(), huge.into_bytes()),
        (
            "10,000-deep".into(),
            format!("{}{}", "[".repeat(10_000), "]".repeat(10_000)).into_bytes(),
        ),
        (
            "10,000-deep object".into(),
            format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000)).into_bytes(),
        ),
        (
            "truncated".into(),
            valid.as_bytes()[..valid.len() / 2].to_vec(),
        ),
        (
            "trailing canary".into(),
            format!("{valid} {CANARY}").into_bytes(),
        ),
        ("escaped NUL".into(), br#"{"name": "a\u0000b"}"#.to_vec()),
        ("raw NUL".into(), b"{\"name\": \"a\x00b\"}".to_vec()),
    ]
}

/// Ways of writing a path that some layer might read as the same route.
fn path_variants(path: &str) -> Vec<String> {
    let rest = path.trim_start_matches("/v1");
    vec![
        format!("/%76%31{rest}"),
        format!("/%761{rest}"),
        format!("/V1{rest}"),
        format!("/v1/{rest}"),
        format!("//v1{rest}"),
        format!("/v1/.{rest}"),
        format!("/v1/x/..{rest}"),
        format!("{path}/"),
        format!("/v1%2F{}", rest.trim_start_matches('/')),
        format!("/{}", path.trim_start_matches('/').replace('/', "%2F")),
    ]
}

fn collect_paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                prefix.push(k.clone());
                out.push(prefix.clone());
                collect_paths(v, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                prefix.push(i.to_string());
                out.push(prefix.clone());
                collect_paths(v, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn get<'a>(value: &'a Value, path: &[String]) -> &'a Value {
    path.iter().fold(value, |v, key| match v {
        Value::Array(items) => &items[key.parse::<usize>().unwrap()],
        _ => &v[key.as_str()],
    })
}

fn get_mut<'a>(value: &'a mut Value, path: &[String]) -> &'a mut Value {
    path.iter().fold(value, |v, key| match v {
        Value::Array(items) => &mut items[key.parse::<usize>().unwrap()],
        _ => &mut v[key.as_str()],
    })
}

// The table is `routes::ROUTES`, shared with the security tests: their
// `the_table_lists_exactly_the_served_routes` fails when a served route is missing from it.
on_both_backends!(hostile_inputs_on_every_route);
