//! `/favicon.ico`: the icon a browser asks for on its first visit to any page (a 404 there was a
//! console error on every first visit). Embedded, like every asset.

use actix_web::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use actix_web::{HttpResponse, web};

const ICON: &[u8] = include_bytes!("../../assets/favicon.ico");

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/favicon.ico").get(favicon));
}

async fn favicon() -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((CONTENT_TYPE, "image/vnd.microsoft.icon"))
        .insert_header((CACHE_CONTROL, "public, max-age=86400"))
        .body(ICON)
}
