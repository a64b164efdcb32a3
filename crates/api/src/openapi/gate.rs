//! What every operation gets from the route catalogue: the key it takes, and the refusals the
//! gate and the middleware answer before any handler runs. Declared once, in the catalogue.

use actix_web::http::Method;
use holdfast_domain::auth::Access;
use utoipa::Modify;
use utoipa::openapi::path::{Operation, ParameterBuilder, ParameterIn};
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, Required};

use crate::routes::catalogue;

pub const PRIVATE_KEY: &str = "privateKey";
pub const PUBLIC_KEY: &str = "publicKey";
pub const PUBLIC_KEY_IN_QUERY: &str = "publicApiKey";

pub struct FromCatalogue;

impl Modify for FromCatalogue {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            PRIVATE_KEY,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "x-api-key",
                "A private key (`priv_test_…` or `priv_…`): server-side only.",
            ))),
        );
        components.add_security_scheme(
            PUBLIC_KEY,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "x-api-key",
                "A public key (`pub_test_…` or `pub_…`): may only create single-use tokens.",
            ))),
        );
        components.add_security_scheme(
            PUBLIC_KEY_IN_QUERY,
            SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::with_description(
                crate::clients::KEY_PARAMETER,
                "A public key in the URL of a script or frame a web page loads (spec 5.2).",
            ))),
        );
        for route in catalogue() {
            let Some(item) = doc.paths.paths.get_mut(route.path) else {
                continue;
            };
            let operation = match route.method {
                Method::GET => item.get.as_mut(),
                Method::POST => item.post.as_mut(),
                Method::PATCH => item.patch.as_mut(),
                Method::DELETE => item.delete.as_mut(),
                Method::PUT => item.put.as_mut(),
                _ => None,
            };
            if let Some(operation) = operation {
                describe(operation, &route.method, route.path, route.access);
            }
        }
    }
}

fn describe(operation: &mut Operation, method: &Method, path: &str, access: Access) {
    let keys = match access {
        Access::Private => vec![PRIVATE_KEY],
        Access::Public => vec![PUBLIC_KEY_IN_QUERY],
        Access::PublicOrPrivate => vec![PRIVATE_KEY, PUBLIC_KEY],
    };
    operation.security = Some(
        keys.into_iter()
            .map(|key| SecurityRequirement::new(key, Vec::<String>::new()))
            .collect(),
    );
    let mut refusals = vec![
        (400, "The request is malformed; `param` names the field."),
        (401, "Missing, unknown or inactive API key."),
        (429, "Too many requests; see `Retry-After`."),
    ];
    match access {
        Access::Private => refusals.push((403, "A key of the wrong type.")),
        Access::Public => refusals.push((
            403,
            "A private key, which a web page must never hold: deactivate it and replace it.",
        )),
        Access::PublicOrPrivate => {}
    }
    if path.contains('{') {
        refusals.push((404, "No such resource in the key's platform and mode."));
    }
    if *method == Method::POST || *method == Method::PATCH || *method == Method::PUT {
        refusals.push((413, "The body is larger than 64 KiB."));
    }
    if *method == Method::POST {
        refusals.push((
            409,
            "The Idempotency-Key was used with another request, or its request is still running.",
        ));
        operation
            .parameters
            .get_or_insert_with(Vec::new)
            .push(optional_header(
                "Idempotency-Key",
                utoipa::openapi::ObjectBuilder::new()
                    .min_length(Some(1))
                    .max_length(Some(255))
                    .pattern(Some("^[\\x21-\\x7e]+$")),
                "1 to 255 visible ASCII characters. A repeat within 24 hours gets the first \
                 answer again, with `idempotent-replayed: true`.",
            ));
    }
    let parameters = operation.parameters.get_or_insert_with(Vec::new);
    parameters.push(optional_header(
        "x-request-id",
        utoipa::openapi::ObjectBuilder::new().pattern(Some("^[A-Za-z0-9._:\\-]{1,128}$")),
        "Your own id for the request (a UUID, say): answered in `x-request-id`, written on every \
         log line of the request and in error bodies' `requestId`. Anything else, or anything \
         that could hold a card number, is replaced by an id of ours (`req_…`).",
    ));
    parameters.push(optional_header(
        "traceparent",
        utoipa::openapi::ObjectBuilder::new()
            .pattern(Some("^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$")),
        "A W3C trace context: the request joins your trace (its id on every log line), and the \
         answer's `traceparent` names our span. An invalid one is ignored.",
    ));
    for (status, description) in refusals {
        operation
            .responses
            .responses
            .entry(status.to_string())
            .or_insert_with(|| refusal(status, description).into());
    }
}

/// An optional request header, a string of `rules` (its pattern and lengths).
fn optional_header(
    name: &str,
    rules: utoipa::openapi::ObjectBuilder,
    description: &str,
) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(
            rules.schema_type(utoipa::openapi::schema::Type::String),
        ))
        .build()
}

/// The refusal `status`, with the headers it carries: a 401's challenge, a 429's wait.
fn refusal(status: u16, description: &str) -> utoipa::openapi::Response {
    let header = |kind: utoipa::openapi::schema::Type, text: &str| {
        utoipa::openapi::header::HeaderBuilder::new()
            .schema(utoipa::openapi::ObjectBuilder::new().schema_type(kind))
            .description(Some(text))
            .build()
    };
    let mut response = error_response(description);
    match status {
        401 => {
            response.headers.insert(
                "WWW-Authenticate".into(),
                header(
                    utoipa::openapi::schema::Type::String,
                    "`ApiKey realm=\"holdfast\", header=\"x-api-key\"`: where the key goes.",
                ),
            );
        }
        429 => {
            response.headers.insert(
                "Retry-After".into(),
                header(
                    utoipa::openapi::schema::Type::Integer,
                    "Whole seconds to wait before trying again.",
                ),
            );
        }
        _ => {}
    }
    response
}

/// A refusal: the error envelope.
pub fn error_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Error")))
                .build(),
        )
        .build()
}
