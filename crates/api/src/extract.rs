//! Request extraction that answers bad input with a 400 naming the field.

use holdfast_web::client_address::client_address;
use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::error::PayloadError;
use actix_web::{FromRequest, HttpMessage, HttpRequest, web};
use holdfast_domain::audit::Actor;
use holdfast_domain::auth::Principal;
use holdfast_domain::ids::has_id_shape;
use holdfast_domain::page::PageRequest;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::json_body;
use holdfast_web::error::ApiError;

pub use holdfast_web::error::MAX_BODY_BYTES;

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
    json_body::parse(bytes).map_err(|(param, message)| ApiError::invalid(param, message))
}

/// Whether a JSON text holds `\u0000`. A backslash only occurs inside strings, where it always
/// starts an escape, so stepping over each escape finds exactly the escaped NULs.
fn has_escaped_nul(bytes: &[u8]) -> bool {
    let mut rest = bytes;
    while let Some(at) = rest.iter().position(|b| *b == b'\\') {
        let escape = rest.get(at..).unwrap_or_default();
        if escape.starts_with(br"\u0000") {
            return true;
        }
        rest = escape.get(2..).unwrap_or_default();
    }
    false
}

/// The query string as `T`, a struct of the parameters a route takes. A parameter `T` does not
/// name is refused, named only when it is a plain name (the path comes from `serde_ignored`,
/// never from serde's text); a repeated one is refused without naming anything.
pub fn query<T: DeserializeOwned>(req: &HttpRequest) -> Result<T, ApiError> {
    let pairs = form_urlencoded::parse(req.query_string().as_bytes());
    let mut unknown = None;
    let parsed = serde_ignored::deserialize(serde_urlencoded::Deserializer::new(pairs), |path| {
        unknown.get_or_insert_with(|| path.to_string());
    });
    let value: T =
        parsed.map_err(|_| ApiError::invalid("query", "names a parameter more than once"))?;
    match unknown {
        Some(name) if json_body::plain_name(&name) => {
            Err(ApiError::invalid(name, "unknown query parameter"))
        }
        Some(_) => Err(ApiError::invalid("query", "has an unknown parameter")),
        None => Ok(value),
    }
}

/// `limit`, and `startingAfter` or `endingBefore`: the page a list endpoint answers.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// How many items the page holds: 1 to 100, 10 if not given.
    #[param(value_type = Option<i64>, minimum = 1, maximum = 100)]
    pub limit: Option<String>,
    /// The id of the last item of the previous page: the page starts after it (older items).
    pub starting_after: Option<String>,
    /// The id of the first item of the next page: the page ends before it (newer items). Never
    /// with `startingAfter`.
    pub ending_before: Option<String>,
}

impl PageQuery {
    /// The page, with `startingAfter` checked to be an id of the listed kind.
    pub fn page(self, cursor_prefix: &str) -> Result<PageRequest, ApiError> {
        let limit = self
            .limit
            .map(|raw| raw.parse::<i64>())
            .transpose()
            .map_err(|_| ApiError::invalid("limit", "must be an integer"))?;
        for (name, cursor) in [
            ("startingAfter", &self.starting_after),
            ("endingBefore", &self.ending_before),
        ] {
            if let Some(cursor) = cursor
                && !has_id_shape(cursor, cursor_prefix)
            {
                return Err(ApiError::invalid(
                    name,
                    format!("must be an id starting with {cursor_prefix}"),
                ));
            }
        }
        let page = PageRequest::new(limit, self.starting_after)?;
        match self.ending_before {
            Some(_) if page.starting_after.is_some() => Err(ApiError::invalid(
                "endingBefore",
                "give startingAfter or endingBefore, not both",
            )),
            Some(cursor) => Ok(page.ending_before(cursor)),
            None => Ok(page),
        }
    }
}

/// The page of a list endpoint that takes no other parameter.
pub fn page_request(req: &HttpRequest, cursor_prefix: &str) -> Result<PageRequest, ApiError> {
    query::<PageQuery>(req)?.page(cursor_prefix)
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

    /// Every way a list's query string is refused names the parameter when it is ours or a plain
    /// name, and never repeats what the client sent.
    #[test]
    fn query_strings_are_parsed_by_the_route_struct() {
        let pan = "4111111111111111";
        let cases = [
            ("", None),
            ("limit=5&startingAfter=mid_01", None),
            ("limit=five", Some("limit")),
            ("startingAfter=txn_01", Some("startingAfter")),
            ("colour=red", Some("colour")),
            ("limit=5&limit=6", Some("query")),
            ("x1=1", Some("query")),
            (&format!("{pan}=1"), Some("query")),
            (&format!("limit={pan}x"), Some("limit")),
        ];
        for (raw, want) in cases {
            let req = actix_web::test::TestRequest::with_uri(&format!("/v1/merchants?{raw}"))
                .to_http_request();
            match (page_request(&req, "mid_"), want) {
                (Ok(_), None) => {}
                (Err(ApiError::Invalid { param, message }), Some(want)) => {
                    assert_eq!(param, want, "{raw}");
                    assert!(!message.contains(pan) && !param.contains(pan), "{raw}");
                }
                (got, _) => panic!("{raw}: {got:?}"),
            }
        }
    }

    /// What `parse_json` checks beyond `json_body` (which names the field for the rest).
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

/// The caller as the audit log names it: its key, from the address the request came from.
#[derive(Debug, Clone)]
pub struct Acting(pub Actor);

impl FromRequest for Acting {
    type Error = ApiError;
    type Future = std::future::Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let key = req
            .extensions()
            .get::<Principal>()
            .and_then(|who| who.key_id.clone());
        std::future::ready(
            key.map(|key| Acting(Actor::api(key, client_address(req))))
                .ok_or_else(|| ApiError::Internal("route served without authentication".into())),
        )
    }
}
