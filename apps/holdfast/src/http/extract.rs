//! Request extraction that answers bad input with a 400 naming the field.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::page::PageRequest;
use serde::de::DeserializeOwned;

use super::error::ApiError;

/// Largest JSON body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// A JSON body. Unknown fields are refused by the request types (`deny_unknown_fields`), so a
/// misspelt field is a 400 rather than silently ignored.
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned + 'static> FromRequest for ApiJson<T> {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, ApiError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let bytes = body.await.map_err(|e| match e.as_error::<PayloadError>() {
                Some(PayloadError::Overflow) => ApiError::PayloadTooLarge {
                    limit: MAX_BODY_BYTES,
                },
                _ => ApiError::invalid("body", "the request body could not be read"),
            })?;
            parse_json(&bytes).map(ApiJson)
        })
    }
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid("body", "a JSON object is required"));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|err| {
        let path = err.path().to_string();
        let inner = err.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            return ApiError::invalid(
                "body",
                format!("malformed JSON: {}", strip_position(&inner)),
            );
        }
        let message = strip_position(&inner);
        // serde names a missing or unknown field in back-quotes, relative to the path.
        let field = message.split('`').nth(1).filter(|_| {
            message.starts_with("missing field") || message.starts_with("unknown field")
        });
        let param = match (path.as_str(), field) {
            (".", Some(f)) => f.to_owned(),
            (p, Some(f)) if !p.ends_with(f) => format!("{p}.{f}"),
            (".", None) => "body".to_owned(),
            (p, _) => p.to_owned(),
        };
        let message = match message.split_once(", expected one of") {
            Some((head, _)) => head.to_owned(),
            None => message,
        };
        // Never echo a rejected value: under `payment` it could be a card number.
        let message = if message.starts_with("invalid type") || message.starts_with("invalid value")
        {
            redact_values(&message)
        } else {
            message
        };
        ApiError::invalid(param, message)
    })
}

/// Drops every back-quoted value from a serde message.
fn redact_values(message: &str) -> String {
    message
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, part)| part)
        .collect::<String>()
        .replace("  ", " ")
        .replace(" ,", ",")
}

fn strip_position(err: &serde_json::Error) -> String {
    let text = err.to_string();
    match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}

/// `limit` and `startingAfter` of a list endpoint; other query parameters are refused.
pub fn page_request(req: &HttpRequest, cursor_prefix: &str) -> Result<PageRequest, ApiError> {
    page_request_with(req, cursor_prefix, &[]).map(|(page, _)| page)
}

/// Like `page_request`, also accepting the filters named in `filters`, returned by name.
pub fn page_request_with(
    req: &HttpRequest,
    cursor_prefix: &str,
    filters: &[&str],
) -> Result<(PageRequest, HashMap<String, String>), ApiError> {
    let params = web::Query::<HashMap<String, String>>::from_query(req.query_string())
        .map_err(|_| ApiError::invalid("query", "the query string is malformed"))?
        .into_inner();
    let mut found = HashMap::new();
    let mut limit = None;
    let mut starting_after = None;
    for (name, value) in params {
        match name.as_str() {
            "limit" => {
                let n = value
                    .parse::<i64>()
                    .map_err(|_| ApiError::invalid("limit", "must be an integer"))?;
                limit = Some(n);
            }
            "startingAfter" => {
                if !value.starts_with(cursor_prefix) {
                    return Err(ApiError::invalid(
                        "startingAfter",
                        format!("must be an id starting with {cursor_prefix}"),
                    ));
                }
                starting_after = Some(value);
            }
            other if filters.contains(&other) => {
                found.insert(name, value);
            }
            other => {
                return Err(ApiError::invalid(other, "unknown query parameter"));
            }
        }
    }
    Ok((PageRequest::new(limit, starting_after)?, found))
}

/// The authenticated caller, put in place by the route's authentication middleware.
#[derive(Debug, Clone)]
pub struct Caller(pub Principal);

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        std::future::ready(
            req.extensions()
                .get::<Principal>()
                .cloned()
                .map(Caller)
                .ok_or_else(|| ApiError::Internal("route served without authentication".into())),
        )
    }
}

/// A field of a PATCH body: absent (leave as is), `null` (clear), or a value.
#[derive(Debug, Default)]
pub enum Field<T> {
    #[default]
    Absent,
    Null,
    Value(T),
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Field<T> {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(de).map(|v| v.map_or(Field::Null, Field::Value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only deserialized")]
    struct Body {
        name: String,
        inner: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[expect(dead_code, reason = "only deserialized")]
    struct Inner {
        count: u32,
    }

    fn param(body: &str) -> String {
        match parse_json::<Body>(body.as_bytes()).unwrap_err() {
            ApiError::Invalid { param, .. } => param,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            ("", "body"),
            ("{", "body"),
            ("[]", "body"),
            ("{}", "name"),
            (r#"{"name": 5}"#, "name"),
            (r#"{"name": "a", "nmae": "b"}"#, "nmae"),
            (r#"{"name": "a", "inner": {}}"#, "inner.count"),
            (r#"{"name": "a", "inner": {"count": -1}}"#, "inner.count"),
            (r#"{"name": "a", "inner": {"count": 1, "x": 1}}"#, "inner.x"),
        ];
        for (body, want) in cases {
            assert_eq!(param(body), want, "{body}");
        }
    }
}
