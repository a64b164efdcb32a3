//! `GET /v1/clients/{script}`: the script a merchant page loads (spec 4.4). `holdfast.js` is the
//! documented entry, revalidated on every load (so a deactivated key stops loading it at once,
//! spec 3.1); `holdfast-<hash>.js` is the same bytes under a name that never changes them, for
//! pages that pin a version (with Subresource Integrity if they like: the script is served with
//! CORS, having nothing private in it).

use actix_web::http::header::{
    ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH,
};
use actix_web::{HttpRequest, HttpResponse, web};

use super::assets::{JAVASCRIPT, MERCHANT_SCRIPT};
use holdfast_web::ApiError;

pub const ENTRY: &str = "holdfast.js";

/// Serves the merchant script; the gate has already checked the public key.
#[utoipa::path(
    get,
    path = "/v1/clients/{script}",
    tag = "hosted client",
    operation_id = "getClientScript",
    params(
        ("script" = String, Path, pattern = "^holdfast(-[0-9a-f]{1,64})?\\.js$", description = "`holdfast.js`, or the versioned `holdfast-<hash>.js` it loads (any other hash is 404)."),
    ),
    responses(
        (status = 200, description = "The script.", content_type = "application/javascript", body = String),
        (status = 304, description = "Not modified since the copy the browser holds."),
    ),
)]
pub async fn serve(req: HttpRequest, script: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let asset = &*MERCHANT_SCRIPT;
    let versioned = *script == asset.versioned_name;
    if *script != ENTRY && !versioned {
        return Err(ApiError::NotFound { resource: "script" });
    }
    let tag = format!("\"{}\"", asset.versioned_name);
    if !versioned && if_none_match(&req, &tag) {
        return Ok(HttpResponse::NotModified()
            .insert_header((ETAG, tag))
            .insert_header((CACHE_CONTROL, "no-cache"))
            .finish());
    }
    let mut response = if versioned {
        asset.immutable()
    } else {
        HttpResponse::Ok()
            .insert_header((CONTENT_TYPE, JAVASCRIPT))
            .insert_header((CACHE_CONTROL, "no-cache"))
            .insert_header((ETAG, tag))
            .body(asset.body.as_str())
    };
    let headers = response.headers_mut();
    headers.insert(
        ACCESS_CONTROL_ALLOW_ORIGIN,
        actix_web::http::header::HeaderValue::from_static("*"),
    );
    headers.insert(
        actix_web::http::header::HeaderName::from_static("cross-origin-resource-policy"),
        actix_web::http::header::HeaderValue::from_static("cross-origin"),
    );
    Ok(response)
}

fn if_none_match(req: &HttpRequest, tag: &str) -> bool {
    req.headers()
        .get_all(IF_NONE_MATCH)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|candidate| candidate.trim().trim_start_matches("W/") == tag)
}
