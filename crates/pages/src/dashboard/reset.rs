//! "Forgot your password?": a reset link emailed to the account's address. The page answers the
//! same whether or not an account uses the address, so it tells nobody which emails exist.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::user::Email;
use holdfast_web::client_address::client_address;
use maud::{Markup, html};
use serde::Deserialize;

use super::{DashboardError, layout, respond, too_many, try_again_in};
use crate::PagesState;
use holdfast_web::same_origin::is_same_origin;

pub const PATH: &str = "/dashboard/reset";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(form).post(request));
}

/// What every accepted request is told, whether an account uses the address or not.
const SENT: &str = "If an account uses that email address, a link to choose a new password is \
                    on its way to it. The link works once, within an hour.";

fn reset_page(notice: Option<&str>, error: Option<&str>) -> Markup {
    let body = html! {
        h1 { "Reset your password" }
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        @if let Some(error) = error { p.error #reset-error role="alert" { (error) } }
        p { "Enter the email address you sign in with. We will email it a link to choose a new password." }
        form.stack method="post" action=(PATH) {
            label for="email" { "Email" }
            input #email type="email" name="email" autocomplete="username" required
                aria-describedby=[error.map(|_| "reset-error")];
            button type="submit" { "Email me a link" }
        }
        p { a href="/dashboard" { "Back to sign in" } }
    };
    layout::bare("Reset your password", &body)
}

async fn form() -> HttpResponse {
    respond(StatusCode::OK, reset_page(None, None))
}

#[derive(Debug, Deserialize)]
struct Request {
    email: String,
}

async fn request(
    req: HttpRequest,
    state: web::Data<PagesState>,
    form: web::Form<Request>,
) -> Result<HttpResponse, DashboardError> {
    // Another site must not make us email our users.
    if !is_same_origin(&req) {
        return Err(DashboardError::Forgery);
    }
    let address = client_address(&req);
    // Each request counts against the address like a failed sign-in, so one address cannot
    // make us email many accounts; an address already over its budget is told to wait.
    if let Some(wait) = state
        .rate_limits
        .locked_out(address)
        .or_else(|| state.rate_limits.failed(address))
    {
        let error = format!(
            "Too many requests from your address. {}",
            try_again_in(wait)
        );
        return Ok(too_many(wait, reset_page(None, Some(&error))));
    }
    if Email::parse(&form.email).is_err() {
        let error = "Enter an email address like name@example.com.";
        return Ok(respond(
            StatusCode::BAD_REQUEST,
            reset_page(None, Some(error)),
        ));
    }
    // At most five links an account within 15 minutes; past that the answer stays the same
    // and nothing is sent, so the count tells nobody the account exists.
    let throttle = &state.reset_throttle;
    if let Ok(link) = throttle.attempt(&form.email) {
        link.stays_counted();
        // The link and its email are made after the answer: waiting for them would take
        // longer for an address with an account than for one without, and so tell which
        // addresses have one.
        let (dashboard, email) = (state.dashboard.clone(), form.email.clone());
        // The request's id goes with the work, so a failure's log line names the request.
        tokio::spawn(holdfast_web::request_context::with_current_id(async move {
            if let Err(error) = dashboard.request_reset(&email, address).await {
                tracing::error!(error = %error, "issuing a password reset link failed");
            }
        }));
    }
    Ok(respond(StatusCode::OK, reset_page(Some(SENT), None)))
}
