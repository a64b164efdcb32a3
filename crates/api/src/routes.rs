//! The route catalogue and the gate in front of it.
//!
//! Every `/v1` route is declared once, with the key type it requires. The gate runs before
//! routing and matches each `/v1` request against the catalogue: no match is 404, a known path
//! with another method is 405, a match is authenticated for its declared access before anything
//! else runs. A route registered any other way is therefore never reachable: forgetting to
//! declare a route fails closed, never open.

use holdfast_web::client_address::client_address;
use std::sync::Arc;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{Error, HttpMessage, ResponseError, Route, web};
use holdfast_domain::auth::{Access, AuthError};
use holdfast_domain::services::AuthenticateError;

use crate::ApiState;
use holdfast_web::error::ApiError;

/// The prefix of every authenticated route.
pub const API_PREFIX: &str = "/v1";

/// One route as the outside sees it. `{name}` in the path matches one non-empty segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
    /// A POST whose handler claims its idempotency key itself, with its first write (see
    /// `idempotency::guard`); every other POST's key is claimed before its handler runs.
    pub claims_own_key: bool,
}

impl RouteSpec {
    /// Whether `path` (a request path, without query) is an instance of this route's template.
    pub fn matches_path(&self, path: &str) -> bool {
        let mut template = self.path.split('/');
        let mut actual = path.split('/');
        loop {
            match (template.next(), actual.next()) {
                (None, None) => return true,
                (Some(t), Some(a)) if t.starts_with('{') && t.ends_with('}') => {
                    if a.is_empty() {
                        return false;
                    }
                }
                (Some(t), Some(a)) if t == a => {}
                _ => return false,
            }
        }
    }
}

/// Collects routes from each API area.
#[derive(Default)]
pub struct Routes {
    entries: Vec<(RouteSpec, Route)>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|(spec, _)| spec))
            .finish()
    }
}

impl Routes {
    pub fn add(&mut self, method: Method, path: &'static str, access: Access, route: Route) {
        self.declare(method, path, access, false, route);
    }

    /// A POST whose handler claims its idempotency key with its first write.
    pub fn add_claiming_own_key(&mut self, path: &'static str, access: Access, route: Route) {
        self.declare(Method::POST, path, access, true, route);
    }

    fn declare(
        &mut self,
        method: Method,
        path: &'static str,
        access: Access,
        claims_own_key: bool,
        route: Route,
    ) {
        assert!(
            path.starts_with(API_PREFIX),
            "{path} is outside {API_PREFIX}"
        );
        self.entries.push((
            RouteSpec {
                method: method.clone(),
                path,
                access,
                claims_own_key,
            },
            route.method(method),
        ));
    }
}

fn all() -> Routes {
    let mut routes = Routes::default();
    super::merchants::routes(&mut routes);
    super::transactions::routes(&mut routes);
    super::connections::routes(&mut routes);
    super::plans::routes(&mut routes);
    super::bins::routes(&mut routes);
    super::balances::routes(&mut routes);
    super::payouts::routes(&mut routes);
    super::loans::routes(&mut routes);
    super::tokens::routes(&mut routes);
    super::webhooks::routes(&mut routes);
    super::clients::routes(&mut routes);
    super::client_sessions::routes(&mut routes);
    super::apple_pay::routes(&mut routes);
    super::boarding_forms::routes(&mut routes);
    super::compliance::routes(&mut routes);
    routes
}

/// Every `/v1` route served, in declaration order.
pub fn catalogue() -> Vec<RouteSpec> {
    all().entries.into_iter().map(|(spec, _)| spec).collect()
}

/// Registers every declared route, one resource per path.
pub fn register(cfg: &mut web::ServiceConfig) {
    let mut resources: Vec<(&'static str, actix_web::Resource)> = Vec::new();
    for (spec, route) in all().entries {
        match resources.iter_mut().find(|(path, _)| *path == spec.path) {
            Some((_, resource)) => {
                let taken = std::mem::replace(resource, web::resource(spec.path));
                *resource = taken.route(route);
            }
            None => resources.push((spec.path, web::resource(spec.path).route(route))),
        }
    }
    for (_, resource) in resources {
        cfg.service(resource);
    }
}

/// The gate (see the module documentation); wraps the whole application.
pub async fn gate(
    catalogue: Arc<Vec<RouteSpec>>,
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, Error> {
    // The path the router will route, never the raw one: `/%761/…` is `/v1/…` to it.
    let path = holdfast_web::hygiene::routed_path(&req);
    let under_api = path == API_PREFIX || path.starts_with("/v1/");
    // The API's own description takes no key: it says nothing a client has not been told.
    let open = path == super::openapi::PATH && req.method() == Method::GET;
    if !under_api || open {
        return next
            .call(req)
            .await
            .map(ServiceResponse::map_into_boxed_body);
    }
    // The router serves a path by the first template that matches it, in the catalogue's
    // order (`register`): `/v1/webhooks/event-types` is its own route, not `{id}`'s.
    let mut routed = None;
    let mut matched = None;
    for spec in catalogue.iter().filter(|spec| spec.matches_path(path)) {
        if *routed.get_or_insert(spec.path) != spec.path {
            continue;
        }
        if spec.method == req.method() {
            matched = Some(spec);
            break;
        }
    }
    let Some(&RouteSpec {
        access: required,
        claims_own_key,
        ..
    }) = matched
    else {
        // Only a refusal lists the methods: a request served allocates nothing for it.
        let refusal = match routed {
            None => ApiError::RouteNotFound,
            Some(template) => ApiError::MethodNotAllowed {
                allow: Some(
                    catalogue
                        .iter()
                        .filter(|spec| spec.path == template)
                        .map(|spec| spec.method.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
            },
        };
        return Ok(req.into_response(refusal.error_response()));
    };
    #[expect(
        clippy::expect_used,
        reason = "`app` registers the state before the gate, and the gate's tests serve through it"
    )]
    let state = req
        .app_data::<web::Data<ApiState>>()
        .expect("ApiState is registered")
        .clone();
    // A header that is not visible ASCII cannot be a key: malformed, not missing. A script
    // tag sends no headers, so a public route reads its key from the query instead.
    let query_key;
    let presented = match required {
        Access::Public => {
            query_key = super::clients::public_key_in(req.query_string());
            query_key.as_deref()
        }
        Access::Private | Access::PublicOrPrivate => req
            .headers()
            .get("x-api-key")
            .map(|v| v.to_str().unwrap_or_default()),
    };
    let address = client_address(req.request());
    if let Some(wait) = state.rate_limits.locked_out(address) {
        let refusal = ApiError::RateLimited { retry_after: wait };
        return Ok(req.into_response(refusal.error_response()));
    }
    match state.auth.authenticate(presented, required).await {
        Ok(principal) => {
            if let Err(wait) = state.rate_limits.admit(&principal, required, address) {
                let refusal = ApiError::RateLimited { retry_after: wait };
                return Ok(req.into_response(refusal.error_response()));
            }
            holdfast_web::request_context::name_caller(&principal);
            req.extensions_mut().insert(principal.clone());
            if req.method() == Method::POST {
                super::idempotency::guard(&state, &principal, claims_own_key, req, next).await
            } else {
                next.call(req)
                    .await
                    .map(ServiceResponse::map_into_boxed_body)
            }
        }
        Err(err) => {
            // Only a key that fails authentication counts against the address; a right key
            // of the wrong type (403) is not a guess.
            let locked = match err {
                AuthenticateError::Denied(AuthError::Unauthenticated) => {
                    state.rate_limits.failed(address)
                }
                _ => None,
            };
            let refusal = match locked {
                Some(wait) => ApiError::RateLimited { retry_after: wait },
                None => ApiError::from_auth(err, required),
            };
            Ok(req.into_response(refusal.error_response()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(path: &'static str) -> RouteSpec {
        RouteSpec {
            method: Method::GET,
            path,
            access: Access::Private,
            claims_own_key: false,
        }
    }

    #[test]
    fn templates_match_whole_segments() {
        let cases = [
            ("/v1/merchants", "/v1/merchants", true),
            ("/v1/merchants", "/v1/merchants/", false),
            ("/v1/merchants", "/v1/merchantsx", false),
            ("/v1/merchants", "/v1", false),
            ("/v1/merchants/{id}", "/v1/merchants/mid_1", true),
            ("/v1/merchants/{id}", "/v1/merchants/", false),
            ("/v1/merchants/{id}", "/v1/merchants/mid_1/x", false),
            ("/v1/merchants/{id}", "/v1/merchants", false),
        ];
        for (template, path, expected) in cases {
            assert_eq!(
                spec(template).matches_path(path),
                expected,
                "{template} ~ {path}"
            );
        }
    }

    #[test]
    fn every_declared_route_is_under_the_api_prefix_and_matches_itself() {
        for route in catalogue() {
            let sample = route.path.replace("{id}", "x_1");
            assert!(route.matches_path(&sample), "{route:?}");
        }
    }
}
