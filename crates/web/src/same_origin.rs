//! Whether a form post came from a page of our own origin: the cross-site request forgery check
//! for pages served without an API key (the demo; the dashboard's forms add a token of their own).
//!
//! Browsers say where a request came from in `Sec-Fetch-Site` (fetch metadata) and, on every
//! POST, in `Origin`. A request that carries neither came from no browser page, and so cannot be
//! forged by one.

use actix_web::HttpRequest;
use actix_web::http::header::{HOST, ORIGIN};

/// `false` when the browser says the request came from another site, or from a page whose
/// origin is not this host.
pub fn is_same_origin(req: &HttpRequest) -> bool {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .map(|value| value.to_str().unwrap_or("\u{fffd}"))
    };
    if let Some(site) = header("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return false;
    }
    match (header(ORIGIN.as_str()), header(HOST.as_str())) {
        (None, _) => true,
        (Some(origin), Some(host)) => origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"))
            .is_some_and(|authority| authority.eq_ignore_ascii_case(host)),
        (Some(_), None) => false,
    }
}

#[cfg(test)]
mod tests {
    use actix_web::test::TestRequest;

    use super::*;

    #[test]
    fn only_our_own_pages_post() {
        let cases: [(&[(&str, &str)], bool); 9] = [
            (&[], true),
            (&[("origin", "http://127.0.0.1:8080")], true),
            (&[("origin", "https://127.0.0.1:8080")], true),
            (
                &[
                    ("origin", "http://127.0.0.1:8080"),
                    ("sec-fetch-site", "same-origin"),
                ],
                true,
            ),
            (&[("origin", "http://evil.example")], false),
            (&[("origin", "http://127.0.0.1:8080.evil.example")], false),
            (&[("origin", "null")], false),
            (&[("sec-fetch-site", "cross-site")], false),
            (
                &[
                    ("origin", "http://127.0.0.1:8080"),
                    ("sec-fetch-site", "same-site"),
                ],
                false,
            ),
        ];
        for (headers, expected) in cases {
            let mut req = TestRequest::post().insert_header((HOST, "127.0.0.1:8080"));
            for header in headers {
                req = req.insert_header(*header);
            }
            assert_eq!(
                is_same_origin(&req.to_http_request()),
                expected,
                "{headers:?}"
            );
        }
    }
}
