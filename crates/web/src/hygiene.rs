//! What every request must be before anything reads it: a path in the one form the router
//! matches, and text that is text.
//!
//! actix routes on the percent-decoded path, so `/%761/merchants` is `/v1/merchants` to it; the
//! gate decides on that same decoded path (`routed_path`). A path that only some layer would
//! normalise — `//`, `.` and `..` segments, a trailing slash, an escape the router keeps
//! encoded (`%2F`) — names no route: 404 before any lookup. A NUL or a byte that is not UTF-8 in
//! the path, the query or a header is a 400: PostgreSQL refuses NUL in text, and no field of
//! ours holds either.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{Error, ResponseError};

use crate::error::ApiError;

/// The path exactly as the router matches it: percent-decoded, except `%`, `/` and `+`.
pub fn routed_path(req: &ServiceRequest) -> &str {
    req.match_info().as_str()
}

pub async fn middleware(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    if let Some(refusal) = refusal(&req) {
        return Ok(req.into_response(refusal.error_response()));
    }
    next.call(req)
        .await
        .map(ServiceResponse::map_into_boxed_body)
}

fn refusal(req: &ServiceRequest) -> Option<ApiError> {
    if !is_text(&percent_decode(req.uri().path().as_bytes())) {
        return Some(ApiError::invalid(
            "path",
            "must be UTF-8 without NUL or control characters",
        ));
    }
    if let Some(query) = req.uri().query()
        && !is_text(&percent_decode(query.as_bytes()))
    {
        return Some(ApiError::invalid(
            "query",
            "must be UTF-8 without NUL or control characters",
        ));
    }
    if req
        .headers()
        .iter()
        .any(|(_, v)| std::str::from_utf8(v.as_bytes()).is_err())
    {
        return Some(ApiError::invalid("headers", "must be UTF-8"));
    }
    (!is_canonical(routed_path(req))).then_some(ApiError::RouteNotFound)
}

/// UTF-8 with no control character (tab aside: header-like values may hold one).
fn is_text(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).is_ok_and(|s| !s.chars().any(|c| c.is_control() && c != '\t'))
}

/// Whether `path` is in the one form a route can have.
fn is_canonical(path: &str) -> bool {
    if path == "/" {
        return true;
    }
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    !path.contains('%')
        && rest
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..")
}

/// `%XX` → the byte; a `%` not followed by two hex digits stays as it is.
fn percent_decode(raw: &[u8]) -> Vec<u8> {
    percent_encoding::percent_decode(raw).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_one_form_of_a_path_is_canonical() {
        let cases = [
            ("/", true),
            ("/v1/merchants", true),
            ("/v1/merchants/mid_1", true),
            ("/v1/merchants/", false),
            ("/v1//merchants", false),
            ("//v1/merchants", false),
            ("/v1/./merchants", false),
            ("/v1/x/../merchants", false),
            ("/v1/merchants/..", false),
            ("/v1/merchants%2Fmid_1", false),
            ("v1/merchants", false),
        ];
        for (path, canonical) in cases {
            assert_eq!(is_canonical(path), canonical, "{path}");
        }
    }

    #[test]
    fn decoding_finds_nul_and_bytes_that_are_not_utf8() {
        let cases = [
            ("mid_1", true),
            ("caf%C3%A9", true),
            ("mid_%00", false),
            ("%FF", false),
            ("%C3", false),
            ("a%0Ab", false),
            ("100%", true),
            ("%zz", true),
        ];
        for (raw, text) in cases {
            assert_eq!(is_text(&percent_decode(raw.as_bytes())), text, "{raw}");
        }
    }
}
