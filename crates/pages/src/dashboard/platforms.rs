//! The platform switch: an email may have an account on several platforms (emails are unique
//! per platform only). Sign-in opens the oldest account the password opens; this page moves the
//! session to another of the email's accounts, once that account's own password is typed.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::ids::PlatformId;
use holdfast_domain::services::SignInError;
use maud::{Markup, html};
use serde::Deserialize;

use super::auth::{Signed, SignedForm, signed_in_now};
use super::{DashboardError, layout, respond, too_many, try_again_in};
use crate::PagesState;

pub const PATH: &str = "/dashboard/platforms";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource(PATH).get(list).post(switch));
}

/// The email's accounts on other platforms, by platform id and name.
async fn others(
    state: &PagesState,
    signed: &Signed,
) -> Result<Vec<(PlatformId, String)>, DashboardError> {
    let user = &signed.who.user;
    let mut others = Vec::new();
    for account in state.dashboard.accounts(&user.email).await? {
        if account.platform_id == user.platform_id {
            continue;
        }
        let platform = state.platforms.get(&account.platform_id).await?;
        others.push((platform.id, platform.name.as_str().to_owned()));
    }
    Ok(others)
}

async fn switch_page(
    state: &PagesState,
    signed: &Signed,
    error: Option<&str>,
) -> Result<Markup, DashboardError> {
    let others = others(state, signed).await?;
    let current = state.platforms.get(&signed.who.user.platform_id).await?;
    let body = html! {
        h1 { "Platforms" }
        p { "You are signed in to " strong { (current.name.as_str()) } " (" code { (current.id.as_str()) } ")." }
        @if let Some(error) = error { p.error #switch-error role="alert" { (error) } }
        @if others.is_empty() {
            p { "Your email has no account on another platform." }
        } @else {
            p { "Your email also has an account on the platforms below. Each account has its own "
                "password: type that account's password to switch to it." }
            form.stack method="post" action=(PATH) {
                input type="hidden" name="csrf" value=(signed.csrf);
                label for="platform" { "Platform" }
                select #platform name="platform" {
                    @for (id, name) in &others {
                        option value=(id.as_str()) { (name) " (" (id.as_str()) ")" }
                    }
                }
                label for="password" { "Password" }
                input #password type="password" name="password" autocomplete="current-password" required
                    aria-describedby=[error.map(|_| "switch-error")];
                button type="submit" { "Switch platform" }
            }
        }
    };
    Ok(layout::page(signed, "Platforms", PATH, &body))
}

async fn list(
    state: web::Data<PagesState>,
    signed: Signed,
) -> Result<HttpResponse, DashboardError> {
    let body = switch_page(&state, &signed, None).await?;
    Ok(respond(StatusCode::OK, body))
}

/// The page again, with why the switch was refused.
async fn refused(
    state: &PagesState,
    signed: &Signed,
    status: StatusCode,
    error: &str,
) -> Result<HttpResponse, DashboardError> {
    let body = switch_page(state, signed, Some(error)).await?;
    Ok(respond(status, body))
}

/// Too many sign-in attempts, from this account or this address: 429 with `Retry-After`.
async fn locked_out(
    state: &PagesState,
    signed: &Signed,
    wait: std::time::Duration,
) -> Result<HttpResponse, DashboardError> {
    let error = format!("Too many sign-in attempts. {}", try_again_in(wait));
    let body = switch_page(state, signed, Some(&error)).await?;
    Ok(too_many(wait, body))
}

#[derive(Debug, Deserialize)]
struct Fields {
    platform: String,
    password: String,
}

async fn switch(
    req: HttpRequest,
    state: web::Data<PagesState>,
    form: SignedForm<Fields>,
) -> Result<HttpResponse, DashboardError> {
    let signed = &form.signed;
    let email = signed.who.user.email.as_str();
    let platform = PlatformId::parse("platform", &form.fields.platform)
        .map_err(|_| DashboardError::BadForm)?;
    // The same budget as the sign-in page: a switch is a sign-in to another account.
    if let Some(wait) = state.rate_limits.locked_out(signed.address) {
        return locked_out(&state, signed, wait).await;
    }
    let attempt = match state.sign_in_throttle.attempt(email) {
        Ok(attempt) => attempt,
        Err(wait) => return locked_out(&state, signed, wait).await,
    };
    match state
        .dashboard
        .sign_in(
            email,
            &form.fields.password,
            Some(&platform),
            signed.address,
        )
        .await
    {
        Ok((secret, _)) => {
            attempt.succeeded();
            // The old session ends: one browser, one session, and a new secret for the new
            // account.
            state.dashboard.sign_out(&signed.secret).await?;
            Ok(signed_in_now(&req, &secret))
        }
        Err(SignInError::Refused) => {
            attempt.stays_counted();
            // The attempt that spends the budget is refused like the ones after it.
            if let Some(wait) = state.rate_limits.failed(signed.address) {
                return locked_out(&state, signed, wait).await;
            }
            refused(
                &state,
                signed,
                StatusCode::UNAUTHORIZED,
                "That password does not open your account on that platform.",
            )
            .await
        }
        Err(SignInError::Store(e)) => Err(e.into()),
    }
}
