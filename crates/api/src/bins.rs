//! `GET /v1/bins/{bin}`: what the BIN table knows of a card's first six digits. Cards the table
//! does not list still get their brand from the IIN ranges (`listed: false`, funding unknown).

use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::payment::brand::{CardBrand, FundingType};
use serde::Serialize;
use utoipa::ToSchema;

use super::extract::Caller;
use super::routes::Routes;
use crate::ApiState;
use holdfast_web::error::ApiError;

pub fn routes(r: &mut Routes) {
    r.add(
        Method::GET,
        "/v1/bins/{bin}",
        Access::Private,
        web::route().to(lookup),
    );
}

/// Looks up a card's first six digits in the BIN table.
#[utoipa::path(get, path = "/v1/bins/{bin}", tag = "cards", operation_id = "getBin", params(("bin" = String, Path, pattern = "^[0-9]{6}$", description = "The first six digits of a card number.")), responses((status = 200, description = "What the BIN table knows.", body = BinView)))]
async fn lookup(
    state: web::Data<ApiState>,
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
    Ok(HttpResponse::Ok().json(BinView {
        bin: info.bin,
        brand: info.brand,
        funding: info.funding,
        issuer: info.issuer,
        country: info.country,
        listed,
    }))
}

/// What the BIN table knows of a card's first six digits.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Bin)]
struct BinView {
    bin: String,
    brand: CardBrand,
    funding: FundingType,
    issuer: Option<String>,
    /// ISO 3166-1 alpha-2, when the table knows it.
    country: Option<String>,
    /// Whether the BIN table lists it; if not, only the brand is known (from the IIN ranges).
    listed: bool,
}
