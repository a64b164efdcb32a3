//! A JSON body that did not parse, described in our own words.
//!
//! serde's messages quote what the client sent (`invalid type: string "5555…"`), and under
//! `payment` that is a card number. So no text of serde's reaches a client: the message is built
//! from the error's path, whose map keys and field names are only named when they are plain
//! names (letters and underscores: no digits, so no card number, tax id or bank number fits),
//! and from a fixed vocabulary describing what was expected.

use serde_path_to_error::{Path, Segment};

/// `param` and `message` of the 400 for a body that is not the JSON the route takes.
pub fn describe(err: &serde_path_to_error::Error<serde_json::Error>) -> (String, String) {
    let inner = err.inner();
    if inner.is_syntax() || inner.is_eof() {
        let what = syntax(&inner.to_string());
        return (
            "body".to_owned(),
            format!(
                "is not valid JSON: {what} (line {}, column {})",
                inner.line(),
                inner.column()
            ),
        );
    }
    let text = inner.to_string();
    // serde_json ends every message with its position; only the last one is its own.
    let text = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(head, _)| head);
    let path = path_of(err.path());
    let at = |field: Option<String>| match (path.as_deref(), field) {
        (None, None) => "body".to_owned(),
        (None, Some(f)) => f,
        (Some(p), None) => p.to_owned(),
        (Some(p), Some(f)) => format!("{p}.{f}"),
    };
    if let Some(rest) = text.strip_prefix("missing field `") {
        // The name of a field we declare, never the client's.
        let field = rest
            .split('`')
            .next()
            .filter(|f| plain_name(f))
            .map(str::to_owned);
        return (at(field), "is required".to_owned());
    }
    if let Some(rest) = text.strip_prefix("duplicate field `") {
        let field = rest
            .split('`')
            .next()
            .filter(|f| plain_name(f))
            .map(str::to_owned);
        return (at(field), "is given more than once".to_owned());
    }
    if text.starts_with("unknown field `") {
        // The path ends at the client's name for it, named only when it is a plain name.
        return match path
            .as_deref()
            .map(|p| p.rsplit_once('.').unwrap_or(("", p)))
        {
            Some((_, last)) if last != "*" => (at(None), "is not a known field".to_owned()),
            Some(("", _)) | None => (
                "body".to_owned(),
                "contains a field that is not known".to_owned(),
            ),
            Some((parent, _)) => (
                parent.to_owned(),
                "contains a field that is not known".to_owned(),
            ),
        };
    }
    if text.starts_with("unknown variant `") {
        return (at(None), choices(text));
    }
    if let Some(rest) = text.strip_prefix("invalid type: ") {
        let got = kind(rest).map_or(String::new(), |k| format!(", not {k}"));
        return (at(None), format!("must be {}{got}", expected(text)));
    }
    if text.starts_with("invalid value: ") {
        return (at(None), format!("must be {}", expected(text)));
    }
    if text.starts_with("invalid length ") {
        return (at(None), "has the wrong number of elements".to_owned());
    }
    (at(None), "is not valid here".to_owned())
}

/// The path in the body, with every segment the client named checked to be a plain name.
fn path_of(path: &Path) -> Option<String> {
    let mut out = Vec::new();
    for segment in path {
        match segment {
            Segment::Seq { index } => out.push(index.to_string()),
            Segment::Map { key } if plain_name(key) => out.push(key.clone()),
            Segment::Enum { variant } if plain_name(variant) => out.push(variant.clone()),
            Segment::Map { .. } | Segment::Enum { .. } | Segment::Unknown => out.push("*".into()),
        }
    }
    (!out.is_empty()).then(|| out.join("."))
}

/// A name safe to repeat: 1 to 40 ASCII letters and underscores.
pub fn plain_name(name: &str) -> bool {
    (1..=40).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
}

/// What serde's "expected …" tail asked for, in our words. The tail is written by our own types,
/// but an attacker's text comes before it, so only the part after the last ", expected " counts,
/// and only as a key into this table.
fn expected(text: &str) -> &'static str {
    let tail = text.rsplit_once(", expected ").map_or("", |(_, t)| t);
    let tail = tail.trim();
    match tail {
        t if t.starts_with("struct ") || t == "a map" || t == "map" => "an object",
        "a string" | "string" | "a borrowed string" => "a string",
        "a boolean" | "bool" => "true or false",
        "a sequence" | "sequence" => "an array",
        "f32" | "f64" => "a number",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" | "u8" | "u16" | "u32" | "u64" | "u128"
        | "usize" | "an integer" => "a whole number within range",
        _ => "of another type",
    }
}

/// The kind of value that was sent, from serde's fixed vocabulary, never the value.
fn kind(rest: &str) -> Option<&'static str> {
    const KINDS: [(&str, &str); 8] = [
        ("string", "a string"),
        ("integer", "a number"),
        ("floating point", "a number"),
        ("boolean", "a boolean"),
        ("map", "an object"),
        ("sequence", "an array"),
        ("null", "null"),
        ("unit", "null"),
    ];
    KINDS
        .iter()
        .find(|(prefix, _)| rest.starts_with(prefix))
        .map(|(_, ours)| *ours)
}

/// "must be one of a, b" for an enum, from the names our type declares. serde writes them after
/// the client's text, behind the last ", expected ", as `a`, `a` or `b`, or one of `a`, `b`.
fn choices(text: &str) -> String {
    let tail = text.rsplit_once(", expected ").map_or("", |(_, tail)| tail);
    let names: Vec<&str> = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .collect();
    if names.is_empty() {
        "is not one of the allowed values".to_owned()
    } else {
        format!("must be one of {}", names.join(", "))
    }
}

/// A JSON syntax error in our words; `serde_json`'s syntax messages are a fixed list, matched here
/// only to pick one of ours.
fn syntax(text: &str) -> &'static str {
    const OURS: [(&str, &str); 8] = [
        ("EOF", "the body ends before the JSON value does"),
        ("recursion limit", "it is nested too deeply"),
        ("trailing", "there is more after the JSON value"),
        ("number out of range", "a number is too large"),
        (
            "control character",
            "a string holds a raw control character",
        ),
        ("escape", "a string holds an invalid escape"),
        ("surrogate", "a string holds an invalid escape"),
        ("unicode", "a string is not valid UTF-8"),
    ];
    OURS.iter()
        .find(|(needle, _)| text.contains(needle))
        .map_or("unexpected character", |(_, ours)| *ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only deserialized")]
    struct Body {
        name: Option<String>,
        count: Option<u32>,
        inner: Option<Inner>,
        list: Option<Vec<Inner>>,
        kind: Option<Kind>,
        routes: Option<std::collections::BTreeMap<String, u32>>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only deserialized")]
    struct Inner {
        number: String,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Auth,
        Sale,
    }

    const PAN: &str = "5555555555554444";

    fn describe_body(body: &str) -> (String, String) {
        let de = &mut serde_json::Deserializer::from_str(body);
        let err = serde_path_to_error::deserialize::<_, Body>(de).unwrap_err();
        describe(&err)
    }

    #[test]
    fn a_sent_value_is_never_repeated() {
        let bodies = [
            format!(r#"{{"name": {PAN}}}"#),
            format!(r#"{{"name": ["{PAN}"]}}"#),
            format!(r#"{{"count": "{PAN}"}}"#),
            format!(r#"{{"count": {PAN}.5}}"#),
            format!(r#"{{"inner": "{PAN}"}}"#),
            format!(r#"{{"inner": {{"number": {PAN}}}}}"#),
            format!(r#"{{"list": [{{"number": "x"}}, "{PAN}"]}}"#),
            format!(r#"{{"kind": "{PAN}"}}"#),
            format!(r#"{{"kind": "{PAN}`, expected one of `{PAN}"}}"#),
            format!(r#"{{"{PAN}": 1}}"#),
            format!(r#"{{"x{PAN}": 1}}"#),
            format!(r#"{{"unknown": "{PAN}"}}"#),
            format!(r#"{{"routes": {{"{PAN}": "x"}}}}"#),
            format!(r#"{{"name": "a", {PAN}}}"#),
            format!(r#"{{"name": "{PAN}"#),
            format!(r#"{{"inner": {{"number": "1", "{PAN}": 2}}}}"#),
        ];
        for body in &bodies {
            let (param, message) = describe_body(body);
            for text in [&param, &message] {
                assert!(!text.contains("5555"), "{body} -> {param}: {message}");
            }
        }
    }

    #[test]
    fn the_field_is_named_and_the_expectation_said() {
        let cases = [
            (r#"{"name": 5}"#, "name", "must be a string, not a number"),
            (
                r#"{"count": -1}"#,
                "count",
                "must be a whole number within range",
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
            (r#"{"kind": "void"}"#, "kind", "must be one of auth, sale"),
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
                r#"{"name": "a", "name": "b"}"#,
                "name",
                "is given more than once",
            ),
        ];
        for (body, param, message) in cases {
            assert_eq!(
                describe_body(body),
                (param.to_owned(), message.to_owned()),
                "{body}"
            );
        }
    }

    #[test]
    fn syntax_errors_give_a_position_in_our_words() {
        let (param, message) = describe_body(r#"{"name": "a",}"#);
        assert_eq!(param, "body");
        assert!(message.starts_with("is not valid JSON: "), "{message}");
        assert!(message.contains("line 1, column 14"), "{message}");
        let (_, message) = describe_body(r#"{"name": "a""#);
        assert!(message.contains("ends before"), "{message}");
    }
}
