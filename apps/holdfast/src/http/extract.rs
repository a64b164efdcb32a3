//! Request extraction that answers bad input with a 400 naming the field.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::ids::has_id_shape;
use holdfast_domain::page::PageRequest;
use serde::de::DeserializeOwned;

use super::error::ApiError;
use super::json_errors;

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
            let bytes = body.await.map_err(|e| unreadable_body(&e))?;
            parse_json(&bytes).map(ApiJson)
        })
    }
}

/// Why a body could not be read, in the envelope.
pub fn unreadable_body(err: &actix_web::Error) -> ApiError {
    match err.as_error::<PayloadError>() {
        Some(PayloadError::Overflow) => ApiError::PayloadTooLarge {
            limit: MAX_BODY_BYTES,
        },
        _ => ApiError::invalid("body", "the request body could not be read"),
    }
}

pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::invalid("body", "a JSON object is required"));
    }
    // JSON may spell NUL as an escape; no text we keep may hold one (PostgreSQL refuses it).
    if has_escaped_nul(bytes) {
        return Err(ApiError::invalid(
            "body",
            "strings must not contain the NUL character",
        ));
    }
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut *de).map_err(|err| {
        let (param, message) = json_errors::describe(&err);
        ApiError::invalid(param, message)
    })?;
    de.end().map_err(|_| {
        ApiError::invalid(
            "body",
            "is not valid JSON: there is more after the JSON value",
        )
    })?;
    Ok(value)
}

/// Whether a JSON text holds `\u0000`. A backslash only occurs inside strings, where it always
/// starts an escape, so stepping over each escape finds exactly the escaped NULs.
fn has_escaped_nul(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes.get(i + 1) == Some(&b'u')
                && bytes.get(i + 2..i + 6).is_some_and(|hex| hex == b"0000")
            {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
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
                if !has_id_shape(&value, cursor_prefix) {
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
            other if json_errors::plain_name(other) => {
                return Err(ApiError::invalid(other, "unknown query parameter"));
            }
            _ => {
                return Err(ApiError::invalid("query", "has an unknown parameter"));
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
    }

    fn param(body: &str) -> Option<String> {
        match parse_json::<Body>(body.as_bytes()) {
            Ok(_) => None,
            Err(ApiError::Invalid { param, .. }) => Some(param),
            Err(other) => panic!("{other:?}"),
        }
    }

    /// What `parse_json` checks beyond `json_errors` (which names the field for the rest).
    #[test]
    fn empty_trailing_and_nul_bodies_are_refused() {
        let cases = [
            ("", Some("body")),
            ("  ", Some("body")),
            (r#"{"name": "a"} {"name": "b"}"#, Some("body")),
            (r#"{"name": "a\u0000"}"#, Some("body")),
            (r#"{"name": "a\u0000b"}"#, Some("body")),
            // An escaped backslash, then the text u0000: no NUL.
            (r#"{"name": "a\\u0000"}"#, None),
            (r#"{"name": 5}"#, Some("name")),
            (r#"{"name": "a"}"#, None),
        ];
        for (body, want) in cases {
            assert_eq!(param(body).as_deref(), want, "{body}");
        }
    }
}
