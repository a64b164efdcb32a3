//! The route catalogue: every `/v1` route is declared once, with the key type it requires, and
//! registered from that declaration wrapped in authentication. A route cannot be served without
//! its access rule, and `catalogue()` lists exactly what is served (the security test compares
//! it with its own table).

use std::collections::HashMap;
use std::sync::Arc;

use actix_web::body::BoxBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::{Next, from_fn};
use actix_web::{Error, HttpMessage, ResponseError, Route, web};
use holdfast_domain::auth::Access;

use super::error::ApiError;
use crate::state::AppState;

/// One route as the outside sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteSpec {
    pub method: Method,
    pub path: &'static str,
    pub access: Access,
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
        self.entries.push((
            RouteSpec {
                method: method.clone(),
                path,
                access,
            },
            route.method(method),
        ));
    }
}

fn all() -> Routes {
    let mut routes = Routes::default();
    super::merchants::routes(&mut routes);
    routes
}

/// Every authenticated route served, in declaration order.
pub fn catalogue() -> Vec<RouteSpec> {
    all().entries.into_iter().map(|(spec, _)| spec).collect()
}

/// Registers every route, one resource per path, each wrapped in authentication for its methods.
pub fn register(cfg: &mut web::ServiceConfig) {
    let mut paths: Vec<&'static str> = Vec::new();
    let mut by_path: HashMap<&'static str, Vec<(RouteSpec, Route)>> = HashMap::new();
    for (spec, route) in all().entries {
        if !by_path.contains_key(spec.path) {
            paths.push(spec.path);
        }
        by_path.entry(spec.path).or_default().push((spec, route));
    }
    for path in paths {
        let mut resource = web::resource(path).default_service(web::to(|| async {
            Err::<(), _>(ApiError::MethodNotAllowed)
        }));
        let mut access = HashMap::new();
        for (spec, route) in by_path.remove(path).unwrap_or_default() {
            access.insert(spec.method, spec.access);
            resource = resource.route(route);
        }
        let access = Arc::new(access);
        cfg.service(resource.wrap(from_fn(move |req, next| {
            authenticate(access.clone(), req, next)
        })));
    }
}

/// Authenticates a request for the access its method requires (spec 5.6): 401 or 403 before
/// any handler runs; on success the `Principal` is left for the `Caller` extractor.
async fn authenticate(
    access: Arc<HashMap<Method, Access>>,
    req: ServiceRequest,
    next: Next<BoxBody>,
) -> Result<ServiceResponse<BoxBody>, Error> {
    let Some(required) = access.get(req.method()).copied() else {
        return next.call(req).await;
    };
    let state = req
        .app_data::<web::Data<AppState>>()
        .expect("AppState is registered")
        .clone();
    // A header that is not visible ASCII cannot be a key: treat it as malformed, not missing.
    let header = req
        .headers()
        .get("x-api-key")
        .map(|v| v.to_str().unwrap_or_default());
    match state.auth.authenticate(header, required).await {
        Ok(principal) => {
            req.extensions_mut().insert(principal);
            next.call(req).await
        }
        Err(err) => Ok(req.into_response(ApiError::from_auth(err, required).error_response())),
    }
}
