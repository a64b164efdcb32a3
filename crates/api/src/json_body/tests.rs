use std::collections::BTreeMap;

use super::*;

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "only deserialized, and `count` read")]
struct Body {
    name: Option<String>,
    count: Option<u32>,
    inner: Option<Inner>,
    list: Option<Vec<Inner>>,
    kind: Option<Kind>,
    routes: Option<BTreeMap<String, u32>>,
    pair: Option<(u8, u8)>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "only deserialized")]
struct Inner {
    number: String,
}

#[derive(Debug, PartialEq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Auth,
    Sale,
}

const PAN: &str = "5555555555554444";

fn refusal(body: &str) -> Refusal {
    parse::<Body>(body.as_bytes()).expect_err(body)
}

#[test]
fn a_sent_value_is_never_repeated() {
    let bodies = [
        format!(r#"{{"name": {PAN}}}"#),
        format!(r#"{{"name": ["{PAN}"]}}"#),
        format!(r#"{{"count": "{PAN}"}}"#),
        format!(r#"{{"count": {PAN}}}"#),
        format!(r#"{{"count": {PAN}.5}}"#),
        format!(r#"{{"inner": "{PAN}"}}"#),
        format!(r#"{{"inner": {{"number": {PAN}}}}}"#),
        format!(r#"{{"list": [{{"number": "x"}}, "{PAN}"]}}"#),
        format!(r#"{{"kind": "{PAN}"}}"#),
        format!(r#"{{"kind": {{"{PAN}": 1}}}}"#),
        format!(r#"{{"kind": "{PAN}`, expected one of `{PAN}"}}"#),
        format!(r#"{{"{PAN}": 1}}"#),
        format!(r#"{{"x{PAN}": 1}}"#),
        format!(r#"{{"unknown": "{PAN}"}}"#),
        format!(r#"{{"routes": {{"{PAN}": "x"}}}}"#),
        format!(r#"{{"routes": {{"{PAN}": 1, "{PAN}": 2}}}}"#),
        format!(r#"{{"name": "a", {PAN}}}"#),
        format!(r#"{{"name": "{PAN}"#),
        format!(r#"{{"inner": {{"number": "1", "{PAN}": 2}}}}"#),
        format!(r#"{{"pair": [1, 2, {PAN}]}}"#),
        format!(r#""{PAN}""#),
        format!("[{PAN}]"),
    ];
    for body in &bodies {
        let (param, message) = refusal(body);
        for text in [&param, &message] {
            assert!(!text.contains("5555"), "{body} -> {param}: {message}");
        }
    }
}

/// A number without a fractional part is an integer, as JSON Schema counts them.
#[test]
fn integral_numbers_are_integers() {
    for (body, count) in [
        (r#"{"count": 3.0}"#, 3),
        (r#"{"count": 1e3}"#, 1000),
        (r#"{"count": 0.0}"#, 0),
    ] {
        let read: Body = parse(body.as_bytes()).expect(body);
        assert_eq!(read.count, Some(count), "{body}");
    }
    assert_eq!(
        refusal(r#"{"count": -1.0}"#).1,
        "must be a whole number within range"
    );
}

/// Each wrong body, the field named and what was expected, in our words.
const NAMED: &[(&str, &str, &str)] = &[
    (r#"{"name": 5}"#, "name", "must be a string, not a number"),
    (
        r#"{"name": null, "count": true}"#,
        "count",
        "must be a whole number within range, not true or false",
    ),
    (
        r#"{"count": -1}"#,
        "count",
        "must be a whole number within range",
    ),
    (
        r#"{"count": 4294967296}"#,
        "count",
        "must be a whole number within range",
    ),
    (
        r#"{"count": 1.5}"#,
        "count",
        "must be a whole number within range, not a number",
    ),
    (
        r#"{"inner": "x"}"#,
        "inner",
        "must be an object, not a string",
    ),
    (r#"{"inner": {}}"#, "inner.number", "is required"),
    (
        r#"{"inner": {"number": "1", "x": 1}}"#,
        "inner.x",
        "is not a known field",
    ),
    (
        r#"{"list": [{"number": 1}]}"#,
        "list.0.number",
        "must be a string, not a number",
    ),
    (
        r#"{"list": {"number": "1"}}"#,
        "list",
        "must be an array, not an object",
    ),
    (r#"{"kind": "void"}"#, "kind", "must be one of auth, sale"),
    (r#"{"kind": 1}"#, "kind", "must be one of auth, sale"),
    (r#"{"nmae": "a"}"#, "nmae", "is not a known field"),
    (
        r#"{"n4me": "a"}"#,
        "body",
        "contains a field that is not known",
    ),
    (
        r#"{"routes": {"4111": "x"}}"#,
        "routes.*",
        "must be a whole number within range, not a string",
    ),
    (
        r#"{"routes": {"visa": 1, "visa": 2}}"#,
        "routes.visa",
        "is given more than once",
    ),
    (
        r#"{"routes": {"41": 1, "41": 2}}"#,
        "routes",
        "names a field more than once",
    ),
    (
        r#"{"name": "a", "name": "b"}"#,
        "name",
        "is given more than once",
    ),
    (
        r#"{"pair": [1]}"#,
        "pair",
        "has the wrong number of elements",
    ),
    (
        r#"{"pair": [1, 2, 3]}"#,
        "pair",
        "has the wrong number of elements",
    ),
    (
        r#"{"pair": [1, 256]}"#,
        "pair.1",
        "must be a whole number within range",
    ),
    ("[]", "body", "must be an object, not an array"),
    (
        r#"{"inner": ["1"]}"#,
        "inner",
        "must be an object, not an array",
    ),
    ("null", "body", "must be an object, not null"),
];

#[test]
fn the_field_is_named_and_the_expectation_said() {
    for &(body, param, message) in NAMED {
        assert_eq!(
            refusal(body),
            (param.to_owned(), message.to_owned()),
            "{body}"
        );
    }
}

#[test]
fn many_keys_are_checked_for_repeats_too() {
    let keys: Vec<String> = (0..20)
        .map(|i| format!(r#""k{}": 1"#, "a".repeat(i + 1)))
        .collect();
    let body = format!(r#"{{"routes": {{{}, "kaaa": 2}}}}"#, keys.join(", "));
    assert_eq!(
        refusal(&body),
        (
            "routes.kaaa".to_owned(),
            "is given more than once".to_owned()
        )
    );
    let body = format!(r#"{{"routes": {{{}}}}}"#, keys.join(", "));
    assert!(parse::<Body>(body.as_bytes()).is_ok());
}

#[test]
fn syntax_errors_give_a_position_in_our_words() {
    let (param, message) = refusal(r#"{"name": "a",}"#);
    assert_eq!(param, "body");
    assert!(message.starts_with("is not valid JSON: "), "{message}");
    assert!(message.contains("line 1, column 14"), "{message}");
    let (_, message) = refusal(r#"{"name": "a""#);
    assert!(message.contains("ends before"), "{message}");
    let (_, message) = refusal(r#"{"name": "a"} {}"#);
    assert!(message.contains("grammar"), "{message}");
}

#[test]
fn a_good_body_reads_whole() {
    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Whole {
        amount: i64,
        rate: f64,
        on: bool,
        note: Option<String>,
        tags: Vec<String>,
        routes: BTreeMap<String, String>,
        kind: Kind,
    }
    let whole: Whole = parse(
        br#"{"amount": -5, "rate": 1.5, "on": true, "note": null, "tags": ["a"], "routes": {"visa": "x"}, "kind": "sale", "ignored": 1}"#
            .as_slice(),
    )
    .unwrap();
    assert_eq!(
        whole,
        Whole {
            amount: -5,
            rate: 1.5,
            on: true,
            note: None,
            tags: vec!["a".into()],
            routes: BTreeMap::from([("visa".into(), "x".into())]),
            kind: Kind::Sale,
        }
    );
}
