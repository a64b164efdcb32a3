//! What the pages reached through a secret link share (the boarding form, the loan offer): a
//! post from another origin refused, an address past its failed-authentication budget refused
//! before any link is looked at, and an unknown link counted as a guess at a secret, like a
//! wrong key.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use holdfast_web::client_address::client_address;
use holdfast_web::same_origin::is_same_origin;
use maud::html;

use crate::PagesState;
use crate::dashboard::layout::hosted;
use crate::dashboard::{respond, too_many, try_again_in};

/// A post that did not come from the page itself: refused, 403.
pub(crate) fn foreign_post(req: &HttpRequest) -> Option<HttpResponse> {
    (!is_same_origin(req)).then(|| {
        let body = html! { h1 { "Refused" } p.error role="alert" { "This form did not come from this page." } };
        respond(StatusCode::FORBIDDEN, hosted("Refused", &body))
    })
}

/// An address past its budget is refused before any link is looked at: a right guess inside
/// the lockout is no use.
pub(crate) fn locked_out(req: &HttpRequest, state: &PagesState) -> Option<HttpResponse> {
    let wait = state.rate_limits.locked_out(client_address(req))?;
    Some(too_many_attempts(wait))
}

/// Counts an unknown link against the address; the guess that spends the budget is answered
/// 429 like the ones after it.
pub(crate) fn counted_guess(req: &HttpRequest, state: &PagesState) -> Option<HttpResponse> {
    let wait = state.rate_limits.failed(client_address(req))?;
    Some(too_many_attempts(wait))
}

/// A page that says why the link cannot be used.
pub(crate) fn refusal_page(status: StatusCode, title: &str, words: &str) -> HttpResponse {
    let body = html! { h1 { (title) } p.error role="alert" { (words) } };
    respond(status, hosted(title, &body))
}

fn too_many_attempts(wait: std::time::Duration) -> HttpResponse {
    let words = format!(
        "Too many attempts from your address. {}",
        try_again_in(wait)
    );
    let body = html! { h1 { "Too many attempts" } p.error role="alert" { (words) } };
    too_many(wait, hosted("Too many attempts", &body))
}
