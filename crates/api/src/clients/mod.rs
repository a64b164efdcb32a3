//! The hosted client (spec 1, 4.4, 5.2): the script a merchant page loads with its public key,
//! and the payment-field frames the script puts in that page. Card data exists only inside the
//! frames, which Holdfast serves from its own origin, and in the request they send to
//! `POST /v1/tokens`; the page gets field state and the token. See `docs/hosted-fields.md`.
//!
//! `/v1/clients/…` routes take the public key as the `publicApiKey` query parameter (a script
//! tag or a frame sends no headers), so the gate authenticates them like any other route:
//! unknown or inactive key 401, a private key 403. The frames' script and stylesheet are
//! static, key-free and immutable, under `/hosted/`.

mod assets;
pub(super) mod frame;
pub(super) mod script;

use actix_web::http::Method;
use actix_web::web;
use holdfast_domain::auth::Access;

use super::routes::Routes;

/// The query parameter that carries a public key (spec 5.2).
pub const KEY_PARAMETER: &str = "publicApiKey";

pub fn routes(r: &mut Routes) {
    r.add(
        Method::GET,
        "/v1/clients/{script}",
        Access::Public,
        web::route().to(script::serve),
    );
    r.add(
        Method::GET,
        "/v1/clients/fields/{field}",
        Access::Public,
        web::route().to(frame::serve),
    );
}

/// The frames' own script and stylesheet, which need no key.
pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.route(assets::HOSTED_ROUTE, web::get().to(assets::serve));
}

/// The public key a query string carries: `None` when absent, and an empty (so malformed) key
/// when it is given more than once, since which one was meant cannot be known.
pub fn public_key_in(query: &str) -> Option<String> {
    let mut found = None;
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if name == KEY_PARAMETER {
            if found.is_some() {
                return Some(String::new());
            }
            found = Some(value.into_owned());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_read_from_the_query_once() {
        let cases = [
            ("", None),
            ("publicApiKey=pub_test_x", Some("pub_test_x")),
            ("a=1&publicApiKey=pub%5Ftest%5Fx&b=2", Some("pub_test_x")),
            ("publicapikey=pub_test_x", None),
            ("publicApiKey=a&publicApiKey=a", Some("")),
            ("publicApiKey=", Some("")),
        ];
        for (query, expected) in cases {
            assert_eq!(public_key_in(query).as_deref(), expected, "{query}");
        }
    }
}
