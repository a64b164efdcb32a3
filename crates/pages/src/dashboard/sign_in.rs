//! Signing in and out, setting a password through a one-time link, and the Test/Live switch.

use actix_web::http::StatusCode;
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::dashboard::{BearerSecret, Password};
use holdfast_domain::mode::Mode;
use holdfast_domain::services::{ServiceError, SignInError};
use holdfast_web::client_address::client_address;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::{NoFields, SignedForm, cleared_cookie, presented_secret, signed_in_now};
use super::{DashboardError, layout, respond, see_other, try_again_in};
use crate::PagesState;
use holdfast_web::same_origin::is_same_origin;

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/dashboard").get(start))
        .service(web::resource("/dashboard/sign-in").post(sign_in))
        .service(web::resource("/dashboard/sign-out").post(sign_out))
        .service(web::resource("/dashboard/mode").post(switch_mode))
        .service(
            web::resource("/dashboard/welcome")
                .get(welcome)
                .post(set_password),
        );
}

/// The sign-in page, or the dashboard for someone already signed in.
async fn start(
    req: HttpRequest,
    state: web::Data<PagesState>,
) -> Result<HttpResponse, DashboardError> {
    if let Some(secret) = presented_secret(&req)
        && state.dashboard.signed_in(&secret).await?.is_some()
    {
        return Ok(see_other("/dashboard/keys"));
    }
    let notice = match req.query_string() {
        "password-set" => Some("Your password is set. Sign in with it."),
        "signed-out" => Some("You are signed out."),
        _ => None,
    };
    Ok(respond(StatusCode::OK, sign_in_page(notice, None)))
}

fn sign_in_page(notice: Option<&str>, error: Option<&str>) -> Markup {
    let body = html! {
        h1 { "Sign in" }
        @if let Some(notice) = notice { p.notice role="status" { (notice) } }
        @if let Some(error) = error { p.error #sign-in-error role="alert" { (error) } }
        form.stack method="post" action="/dashboard/sign-in" {
            label for="email" { "Email" }
            input #email type="email" name="email" autocomplete="username" required
                aria-describedby=[error.map(|_| "sign-in-error")];
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="current-password" required;
            button type="submit" { "Sign in" }
        }
        p { a href=(super::reset::PATH) { "Forgot your password?" } }
    };
    layout::bare("Sign in", &body)
}

#[derive(Debug, Deserialize)]
struct Credentials {
    email: String,
    password: String,
}

async fn sign_in(
    req: HttpRequest,
    state: web::Data<PagesState>,
    form: web::Form<Credentials>,
) -> Result<HttpResponse, DashboardError> {
    // A page elsewhere must not sign a visitor in to an account of its choosing.
    if !is_same_origin(&req) {
        return Err(DashboardError::Forgery);
    }
    let address = client_address(&req);
    if let Some(wait) = state.rate_limits.locked_out(address) {
        return Ok(too_many(wait));
    }
    let attempt = match state.sign_in_throttle.attempt(&form.email) {
        Ok(attempt) => attempt,
        Err(wait) => return Ok(too_many(wait)),
    };
    match state
        .dashboard
        .sign_in(&form.email, &form.password, None, address)
        .await
    {
        Ok((secret, signed_in)) => {
            attempt.succeeded();
            tracing::info!(user = %signed_in.user.id, platform = %signed_in.user.platform_id, "signed in to the dashboard");
            Ok(signed_in_now(&req, &secret))
        }
        Err(SignInError::Refused) => {
            attempt.stays_counted();
            if let Some(wait) = state.rate_limits.failed(address) {
                return Ok(too_many(wait));
            }
            let error = "That email and password do not match an account.";
            Ok(respond(
                StatusCode::UNAUTHORIZED,
                sign_in_page(None, Some(error)),
            ))
        }
        Err(SignInError::Store(e)) => Err(e.into()),
    }
}

/// Refused before the password is even checked: a right guess inside the lockout is no use.
fn too_many(wait: std::time::Duration) -> HttpResponse {
    let error = format!("Too many sign-in attempts. {}", try_again_in(wait));
    super::too_many(wait, sign_in_page(None, Some(&error)))
}

async fn sign_out(
    state: web::Data<PagesState>,
    form: SignedForm<NoFields>,
) -> Result<HttpResponse, DashboardError> {
    state.dashboard.sign_out(&form.signed.secret).await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/dashboard?signed-out"))
        .insert_header((header::SET_COOKIE, cleared_cookie()))
        .finish())
}

#[derive(Debug, Deserialize)]
struct ModeSwitch {
    mode: String,
    back: String,
}

async fn switch_mode(
    state: web::Data<PagesState>,
    form: SignedForm<ModeSwitch>,
) -> Result<HttpResponse, DashboardError> {
    let mode: Mode = form
        .fields
        .mode
        .parse()
        .map_err(|_| DashboardError::BadForm)?;
    state
        .dashboard
        .switch_mode(&form.signed.secret, mode)
        .await?;
    // Back to the page the switch was on, when it is one of ours.
    let back = super::layout::known_page(&form.fields.back).unwrap_or("/dashboard/keys");
    Ok(see_other(back))
}

#[derive(Debug, Deserialize)]
struct LinkQuery {
    token: String,
}

/// The page a one-time link opens: choose a password, or, for a link that can no longer be
/// used, say so at once. A link is a credential: one that does not work counts against the
/// address's budget, like a wrong key.
async fn welcome(
    req: HttpRequest,
    state: web::Data<PagesState>,
    query: web::Query<LinkQuery>,
) -> Result<HttpResponse, DashboardError> {
    let address = client_address(&req);
    if let Some(wait) = state.rate_limits.locked_out(address) {
        let error = format!(
            "Too many attempts from your address. {}",
            try_again_in(wait)
        );
        return Ok(super::too_many(wait, unusable_page(&error)));
    }
    // Only a token of our own form goes back into the page: nothing else a link carries is
    // repeated.
    let usable = match BearerSecret::presented(&query.token) {
        Some(token) if state.dashboard.link_is_usable(&token).await? => Some(token),
        _ => None,
    };
    if let Some(token) = usable {
        return Ok(respond(StatusCode::OK, password_page(token.expose(), None)));
    }
    if let Some(wait) = state.rate_limits.failed(address) {
        let error = format!(
            "Too many attempts from your address. {}",
            try_again_in(wait)
        );
        return Ok(super::too_many(wait, unusable_page(&error)));
    }
    Ok(respond(StatusCode::NOT_FOUND, unusable_page(UNUSABLE_LINK)))
}

const UNUSABLE_LINK: &str = "This link is unknown, used or expired. Ask for a new one.";

/// A link that cannot set a password: no form to fill in vain, and the way to a new link.
fn unusable_page(error: &str) -> Markup {
    let body = html! {
        h1 { "This link cannot be used" }
        p.error role="alert" { (error) }
        p { "A link works once, for a limited time. " a href="/dashboard/reset" { "Ask for a new link" } " or " a href="/dashboard" { "sign in" } "." }
    };
    layout::bare("This link cannot be used", &body)
}

fn password_page(token: &str, error: Option<&str>) -> Markup {
    let body = html! {
        h1 { "Choose your password" }
        p { "Use 10 to 128 characters. This link works once." }
        @if let Some(error) = error { p.error #password-error role="alert" { (error) } }
        form.stack method="post" action="/dashboard/welcome" {
            input type="hidden" name="token" value=(token);
            label for="password" { "Password" }
            input #password type="password" name="password" autocomplete="new-password"
                minlength="10" maxlength="128" required
                aria-describedby=[error.map(|_| "password-error")];
            label for="confirm" { "Password again" }
            input #confirm type="password" name="confirm" autocomplete="new-password" required;
            button type="submit" { "Set password" }
        }
    };
    layout::bare("Choose your password", &body)
}

#[derive(Debug, Deserialize)]
struct NewPassword {
    token: String,
    password: String,
    confirm: String,
}

async fn set_password(
    req: HttpRequest,
    state: web::Data<PagesState>,
    form: web::Form<NewPassword>,
) -> Result<HttpResponse, DashboardError> {
    if !is_same_origin(&req) {
        return Err(DashboardError::Forgery);
    }
    // Only a token of our own form goes back into the page, as on the link's own page.
    let presented = BearerSecret::presented(&form.token);
    let token = presented.as_ref().map_or("", BearerSecret::expose);
    let again = |error: &str| {
        Ok(respond(
            StatusCode::BAD_REQUEST,
            password_page(token, Some(error)),
        ))
    };
    if form.password != form.confirm {
        return again("The two passwords differ. Type the same password twice.");
    }
    let Ok(password) = Password::parse(&form.password) else {
        return again("The password must be 10 to 128 characters long.");
    };
    // A link is a credential: guessing them counts against the address like a wrong key, and
    // the guess that spends its budget, like every one after it, is answered 429 with
    // `Retry-After`.
    let locked = |wait| {
        let error = format!(
            "Too many attempts from your address. {}",
            try_again_in(wait)
        );
        Ok(super::too_many(wait, password_page(token, Some(&error))))
    };
    let address = client_address(&req);
    if let Some(wait) = state.rate_limits.locked_out(address) {
        return locked(wait);
    }
    let redeemed = match &presented {
        Some(token) => state.dashboard.redeem(token, &password, address).await,
        None => Err(ServiceError::NotFound("link")),
    };
    match redeemed {
        Ok(user) => {
            tracing::info!(user = %user.id, platform = %user.platform_id, "dashboard password set through a link");
            Ok(see_other("/dashboard?password-set"))
        }
        Err(ServiceError::NotFound(_)) => match state.rate_limits.failed(address) {
            Some(wait) => locked(wait),
            None => again(UNUSABLE_LINK),
        },
        Err(other) => Err(other.into()),
    }
}
