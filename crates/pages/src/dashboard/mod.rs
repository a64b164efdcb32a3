//! `/dashboard`: the pages a platform's people use (spec 4.6), server-rendered from the same
//! services as the API. A door like the others: it parses a form, calls one service method and
//! renders; every rule is the service's.
//!
//! Every page is sent with a strict policy (no inline script or style, no framing, forms posting
//! only here) and `no-store`: pages show account data, and some show a secret once.

mod audit;
mod auth;
mod boarding;
mod keys;
pub(crate) mod layout;
mod loans;
mod merchants;
mod money;
mod platforms;
mod processors;
mod reset;
mod sign_in;

mod transactions;
mod webhooks;

use actix_web::http::StatusCode;
use actix_web::http::header::{self, ContentType};
use actix_web::{HttpResponse, ResponseError, web};
use holdfast_domain::services::{Flash, ServiceError};
use maud::{Markup, html};

const STYLESHEET: &str = include_str!("../../assets/dashboard/dashboard.css");
const SCRIPT: &str = include_str!("../../assets/dashboard/dashboard.js");

/// No inline script or style anywhere; the one script only adds a copy button.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                      connect-src 'none'; form-action 'self'; base-uri 'none'; \
                      frame-ancestors 'none'";

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.app_data(
        web::FormConfig::default()
            .limit(16 * 1024)
            .error_handler(|_, _| {
                // serde's text can quote what was sent: our own words instead.
                DashboardError::BadForm.into()
            }),
    )
    .service(web::resource("/dashboard/assets/dashboard.css").get(stylesheet))
    .service(web::resource("/dashboard/assets/dashboard.js").get(script))
    .configure(sign_in::config)
    .configure(reset::config)
    .configure(keys::config)
    .configure(webhooks::config)
    .configure(transactions::config)
    .configure(merchants::config)
    .configure(money::config)
    .configure(loans::config)
    .configure(processors::config)
    .configure(audit::config)
    .configure(platforms::config)
    .configure(boarding::config);
}

async fn stylesheet() -> HttpResponse {
    asset(STYLESHEET, "text/css; charset=utf-8")
}

async fn script() -> HttpResponse {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

fn asset(body: &'static str, content_type: &'static str) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .body(body)
}

/// A page with the dashboard's headers.
pub(crate) fn respond(status: StatusCode, page: Markup) -> HttpResponse {
    HttpResponse::build(status)
        .content_type(ContentType::html())
        .insert_header((header::CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        // Not `no-referrer`: with it a browser sends `Origin: null` on our own forms, and the
        // same-origin check could no longer tell them from a forgery.
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .body(page.into_string())
}

/// A file to save (a CSV export), with the pages' headers: never cached, never framed.
pub(crate) fn download(filename: &str, content_type: &'static str, body: String) -> HttpResponse {
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .insert_header((header::CONTENT_SECURITY_POLICY, POLICY))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .insert_header((header::REFERRER_POLICY, "same-origin"))
        .insert_header((header::X_FRAME_OPTIONS, "DENY"))
        .body(body)
}

/// A page refusing a request until `wait` has passed: 429 with `Retry-After`, as every refusal
/// for too many attempts is, on the dashboard and the hosted pages alike.
pub(crate) fn too_many(wait: std::time::Duration, page: Markup) -> HttpResponse {
    let mut response = respond(StatusCode::TOO_MANY_REQUESTS, page);
    response.headers_mut().insert(
        header::RETRY_AFTER,
        header::HeaderValue::from(holdfast_web::error::retry_after_seconds(wait)),
    );
    response
}

/// "Try again in N minute(s).", rounded up.
pub(crate) fn try_again_in(wait: std::time::Duration) -> String {
    let minutes = holdfast_web::error::retry_after_seconds(wait).div_ceil(60);
    format!("Try again in {minutes} minute(s).")
}

/// A redirect after a form, to a page of the dashboard (never to anywhere a request named).
fn see_other(to: &str) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, to))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// Redirects to `to` after a change whose page then says `word`'s sentence once: the word is
/// kept on the session (`Flashes`), not in the address, so a reload says nothing again.
async fn done(
    state: &crate::PagesState,
    signed: &auth::Signed,
    to: &str,
    word: &str,
) -> Result<HttpResponse, DashboardError> {
    state
        .flashes
        .leave(&signed.secret, to, &Flash::Notice(word.to_owned()))
        .await?;
    Ok(see_other(to))
}

/// The sentence of the change that led to `page`, once; `None` on any later view.
async fn taken_notice(
    state: &crate::PagesState,
    signed: &auth::Signed,
    page: &str,
    notices: &[(&str, &'static str)],
) -> Result<Option<&'static str>, DashboardError> {
    Ok(
        match state
            .flashes
            .take(&signed.who, &signed.secret, page)
            .await?
        {
            Some(Flash::Notice(word)) => layout::notice(&word, notices),
            _ => None,
        },
    )
}

/// Why a dashboard request is not served, each as a page in words.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// Not signed in, or the session ended: back to the sign-in page.
    #[error("sign in first")]
    SignIn,
    /// A form without this session's token, or posted from another site.
    #[error("this form has expired or did not come from the dashboard")]
    Forgery,
    /// A viewer asked for a change.
    #[error("viewers can look but not change anything")]
    AdminOnly,
    /// A form that does not parse.
    #[error("the form could not be read")]
    BadForm,
    /// The thing asked for is not in this platform and mode.
    #[error("{0} not found in this mode")]
    NotFound(&'static str),
    /// Anything else: logged in full, shown in general words.
    #[error("something went wrong on our side")]
    Internal(String),
}

impl From<ServiceError> for DashboardError {
    fn from(err: ServiceError) -> Self {
        match err {
            ServiceError::NotFound(what) => Self::NotFound(what),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<holdfast_domain::Invalid> for DashboardError {
    fn from(err: holdfast_domain::Invalid) -> Self {
        Self::Internal(err.to_string())
    }
}

impl From<holdfast_domain::ports::StoreError> for DashboardError {
    fn from(err: holdfast_domain::ports::StoreError) -> Self {
        Self::Internal(err.to_string())
    }
}

impl ResponseError for DashboardError {
    fn status_code(&self) -> StatusCode {
        match self {
            Self::SignIn => StatusCode::SEE_OTHER,
            Self::Forgery | Self::AdminOnly => StatusCode::FORBIDDEN,
            Self::BadForm => StatusCode::BAD_REQUEST,
            Self::NotFound(_) => StatusCode::NOT_FOUND,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        match self {
            Self::SignIn => see_other("/dashboard"),
            Self::Internal(cause) => {
                tracing::error!(error = %cause, "dashboard request failed");
                refusal(self.status_code(), &self.to_string())
            }
            other => refusal(other.status_code(), &other.to_string()),
        }
    }
}

/// A refusal page: what happened, and the way back.
fn refusal(status: StatusCode, message: &str) -> HttpResponse {
    let mut sentence = message.to_owned();
    if let Some(first) = sentence.get(..1) {
        sentence.replace_range(..1, &first.to_uppercase());
    }
    let body = html! {
        h1 { "Not done" }
        p role="alert" { (sentence) "." }
        p { a href="/dashboard/keys" { "Back to the dashboard" } }
    };
    respond(status, layout::bare("Not done", &body))
}
