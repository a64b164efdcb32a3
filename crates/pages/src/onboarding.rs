//! `/onboarding/{link}`: the hosted boarding form a merchant fills in, reached through the
//! unguessable link `POST /v1/boarding-forms` issued. A door like the others: it reads the form,
//! calls `BoardingService` and renders; the checks are the domain's.
//!
//! Works without JavaScript (the browser's own field checks from `required` and `pattern`, the
//! server's on every save). Secrets typed here (tax id, account number, IBAN) are never shown
//! again, only their last four characters.

use holdfast_web::client_address::client_address;
use std::collections::BTreeMap;

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::services::PageError;

use crate::PagesState;
use crate::dashboard::respond;
use crate::link_guard::{counted_guess, foreign_post, locked_out, refusal_page};

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/onboarding/{link}").get(show).post(act));
}

mod render;

use render::{form_page, review_page};

/// Why the page could not do what was asked, as a page.
fn refusal(error: &PageError) -> HttpResponse {
    let (status, title, words) = match error {
        PageError::UnknownLink => (
            StatusCode::NOT_FOUND,
            "Link not found",
            "This link is unknown or was replaced by a newer one. Ask the platform that sent it for a new link.",
        ),
        PageError::Expired => (
            StatusCode::GONE,
            "Link expired",
            "This link has expired. Ask the platform that sent it for a new link: what you saved is kept.",
        ),
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The form could not be loaded. Try again in a moment.",
        ),
    };
    if status.is_server_error() {
        tracing::error!(error = %error, "boarding form page failed");
    }
    refusal_page(status, title, words)
}

async fn show(
    req: HttpRequest,
    state: web::Data<PagesState>,
    link: web::Path<String>,
) -> HttpResponse {
    if let Some(refused) = locked_out(&req, &state) {
        return refused;
    }
    match state.boarding.open(&link).await {
        Ok(form) => respond(
            StatusCode::OK,
            form_page(&form, &link, &[], None, &BTreeMap::new()),
        ),
        Err(error) => refused_guess(&req, &state, &error),
    }
}

/// An unknown link is a guess at a secret: it counts against the address, like a wrong key.
fn refused_guess(req: &HttpRequest, state: &PagesState, error: &PageError) -> HttpResponse {
    if matches!(error, PageError::UnknownLink)
        && let Some(refused) = counted_guess(req, state)
    {
        return refused;
    }
    refusal(error)
}

async fn act(
    req: HttpRequest,
    state: web::Data<PagesState>,
    link: web::Path<String>,
    form: web::Form<BTreeMap<String, String>>,
) -> HttpResponse {
    if let Some(refused) = foreign_post(&req) {
        return refused;
    }
    if let Some(refused) = locked_out(&req, &state) {
        return refused;
    }
    let typed = form.into_inner();
    let action = typed.get("action").map_or("save", String::as_str);
    let done = match action {
        "submit" => {
            let confirmed = typed.get("confirm").is_some_and(|v| v == "yes");
            let signer = typed.get("signerName").map_or("", String::as_str);
            let address = client_address(&req);
            state
                .boarding
                .submit(&link, signer, confirmed, address)
                .await
        }
        _ => state.boarding.save(&link, &typed).await,
    };
    match done {
        Ok(form) if action == "review" => respond(StatusCode::OK, review_page(&form, &link, &[])),
        Ok(form) => {
            let notice = form
                .status
                .is_editable()
                .then_some("Your answers are saved. Come back with the same link to carry on.");
            respond(
                StatusCode::OK,
                form_page(&form, &link, &[], notice, &BTreeMap::new()),
            )
        }
        // The page again with the refusals; what was saved before stays.
        Err(PageError::Refused(errors, form)) if action == "submit" => {
            respond(StatusCode::BAD_REQUEST, review_page(&form, &link, &errors))
        }
        Err(PageError::Refused(errors, form)) => respond(
            StatusCode::BAD_REQUEST,
            form_page(&form, &link, &errors, None, &typed),
        ),
        Err(PageError::Closed(form)) => respond(
            StatusCode::CONFLICT,
            form_page(&form, &link, &[], None, &BTreeMap::new()),
        ),
        Err(error) => refused_guess(&req, &state, &error),
    }
}
