//! Response bodies: camelCase JSON, RFC 3339 UTC timestamps.

use holdfast_domain::merchant::Merchant;
use holdfast_domain::page::Page;
use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

pub fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339)
        .expect("UTC timestamps format as RFC 3339")
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListView<T> {
    pub data: Vec<T>,
    pub has_more: bool,
}

impl<T> ListView<T> {
    pub fn from_page<D>(page: Page<D>, view: impl Fn(D) -> T) -> Self {
        Self {
            data: page.data.into_iter().map(view).collect(),
            has_more: page.has_more,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MerchantView {
    pub id: String,
    pub platform_id: String,
    pub mode: &'static str,
    pub name: String,
    pub currency: String,
    pub email: Option<String>,
    pub created_on: String,
    pub updated_on: String,
}

impl From<Merchant> for MerchantView {
    fn from(m: Merchant) -> Self {
        Self {
            id: m.id.to_string(),
            platform_id: m.platform_id.to_string(),
            mode: m.mode.as_str(),
            name: m.details.name.as_str().to_owned(),
            currency: m.details.currency.as_str().to_owned(),
            email: m.details.email.map(|e| e.as_str().to_owned()),
            created_on: rfc3339(m.created_on),
            updated_on: rfc3339(m.updated_on),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct DeletedView {
    pub id: String,
    pub deleted: bool,
}
