//! The hosted client's files, embedded in the binary. Each is also served under a name that
//! carries a hash of its bytes, so it can be cached for a year: a new build is a new name.

use std::sync::LazyLock;

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::{HttpResponse, web};
use holdfast_domain::payment::brand::IIN_RANGES;
use serde::Serialize;
use sha2::{Digest, Sha256};

use holdfast_web::ApiError;

pub const HOSTED_ROUTE: &str = "/hosted/{asset}";
pub const JAVASCRIPT: &str = "application/javascript; charset=utf-8";
const CSS: &str = "text/css; charset=utf-8";
/// A hashed name never changes its bytes.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// Where the frames' script receives the server's IIN table.
const IIN_PLACEHOLDER: &str = "\"__IIN_RANGES__\"";

/// One embedded file and its hashed name.
pub struct Asset {
    pub body: String,
    pub versioned_name: String,
    pub content_type: &'static str,
}

impl Asset {
    fn new(stem: &str, extension: &str, body: String, content_type: &'static str) -> Self {
        let digest = Sha256::digest(body.as_bytes());
        let hash = base16ct::lower::encode_string(digest.as_slice().get(..6).unwrap_or_default());
        Self {
            versioned_name: format!("{stem}-{hash}.{extension}"),
            body,
            content_type,
        }
    }

    /// The asset, to be kept for a year under its hashed name.
    pub fn immutable(&'static self) -> HttpResponse {
        HttpResponse::Ok()
            .insert_header((CONTENT_TYPE, self.content_type))
            .insert_header((CACHE_CONTROL, IMMUTABLE))
            .body(self.body.as_str())
    }
}

/// The script a merchant page loads (`/v1/clients/holdfast.js`).
pub static MERCHANT_SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "holdfast",
        "js",
        include_str!("../../assets/hosted/holdfast.js").to_owned(),
        JAVASCRIPT,
    )
});

/// The one POST to Holdfast the field and relay frames share, served ahead of each.
const POST_SCRIPT: &str = include_str!("../../assets/hosted/post.js");

/// The script inside every field frame, with the server's IIN table written into it.
pub static FIELD_SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    let source = include_str!("../../assets/hosted/field.js");
    Asset::new(
        "field",
        "js",
        format!(
            "{POST_SCRIPT}{}",
            source.replacen(IIN_PLACEHOLDER, &iin_table_json(), 1)
        ),
        JAVASCRIPT,
    )
});

/// The wallet relay frame's script: it tokenizes a wallet's token from Holdfast's origin.
pub static RELAY_SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "relay",
        "js",
        format!(
            "{POST_SCRIPT}{}",
            include_str!("../../assets/hosted/relay.js")
        ),
        JAVASCRIPT,
    )
});

/// The frames' stylesheet; a merchant's style object reaches it through custom properties.
pub static FIELD_STYLESHEET: LazyLock<Asset> = LazyLock::new(|| {
    Asset::new(
        "field",
        "css",
        include_str!("../../assets/hosted/field.css").to_owned(),
        CSS,
    )
});

/// One row of the IIN table as the browser reads it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct IinRow {
    digits: usize,
    low: u32,
    high: u32,
    brand: &'static str,
    cvv_length: usize,
}

fn iin_table_json() -> String {
    let rows: Vec<IinRow> = IIN_RANGES
        .iter()
        .map(|range| IinRow {
            digits: range.digits,
            low: range.low,
            high: range.high,
            brand: range.brand.as_str(),
            cvv_length: range.brand.cvv_length(),
        })
        .collect();
    serde_json::to_string(&rows).unwrap_or_else(|_| "[]".to_owned())
}

/// `GET /hosted/{asset}`: the frames' files, by hashed name only.
pub async fn serve(asset: web::Path<String>) -> Result<HttpResponse, ApiError> {
    [&*FIELD_SCRIPT, &*FIELD_STYLESHEET, &*RELAY_SCRIPT]
        .into_iter()
        .find(|a| a.versioned_name == *asset)
        .map(Asset::immutable)
        .ok_or(ApiError::RouteNotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_field_script_carries_the_servers_iin_table() {
        let source = include_str!("../../assets/hosted/field.js");
        assert_eq!(source.matches(IIN_PLACEHOLDER).count(), 1);
        assert!(!FIELD_SCRIPT.body.contains(IIN_PLACEHOLDER));
        let table: Vec<serde_json::Value> = serde_json::from_str(&iin_table_json()).unwrap();
        assert_eq!(table.len(), IIN_RANGES.len());
        assert_eq!(
            table[3],
            serde_json::json!({"digits": 2, "low": 34, "high": 34, "brand": "amex", "cvvLength": 4})
        );
    }

    #[test]
    fn hashed_names_follow_the_bytes() {
        let a = Asset::new("field", "js", "a".into(), JAVASCRIPT);
        let b = Asset::new("field", "js", "b".into(), JAVASCRIPT);
        assert_ne!(a.versioned_name, b.versioned_name);
        let hash = a
            .versioned_name
            .strip_prefix("field-")
            .and_then(|rest| rest.strip_suffix(".js"))
            .unwrap();
        assert_eq!(hash.len(), 12);
        assert!(hash.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
