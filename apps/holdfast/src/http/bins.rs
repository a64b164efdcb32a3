//! `GET /v1/bins/{bin}`: what the BIN table knows of a card's first six digits. Cards the table
//! does not list still get their brand from the IIN ranges (`listed: false`, funding unknown).

use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use holdfast_domain::auth::Access;
use serde_json::json;

use super::error::ApiError;
use super::extract::Caller;
use super::routes::Routes;
use crate::state::AppState;

pub fn routes(r: &mut Routes) {
    r.add(
        Method::GET,
        "/v1/bins/{bin}",
        Access::Private,
        web::route().to(lookup),
    );
}

async fn lookup(
    state: web::Data<AppState>,
    Caller(_): Caller,
    bin: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    if bin.len() != 6 || !bin.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::invalid(
            "bin",
            "must be the first six digits of a card number",
        ));
    }
    let info = state.tokens.bin(&bin);
    let listed =
        info.issuer.is_some() || info.country.is_some() || info.funding.as_str() != "unknown";
    Ok(HttpResponse::Ok().json(json!({
        "bin": info.bin,
        "brand": info.brand.as_str(),
        "funding": info.funding.as_str(),
        "issuer": info.issuer,
        "country": info.country,
        "listed": listed,
    })))
}
