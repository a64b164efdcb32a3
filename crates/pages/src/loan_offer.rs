//! `/loans/{link}`: the hosted page where a merchant reads a loan offer and accepts it, reached
//! through the unguessable link `POST /v1/loans` issued (kept only by hash). A door like the
//! others: it reads the offer, calls `LoanService` and renders. The terms are stated plainly:
//! the advance, the fee, the total to repay, the rate with a worked example, the minimum and
//! the offer's end. Accepting records the name typed, the time and the address.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::loan::{Loan, LoanState, MAX_TEXT};
use holdfast_domain::money::format as money;
use holdfast_domain::payment::card::could_hold_card_number;
use holdfast_domain::services::OfferPageError;
use holdfast_web::client_address::client_address;
use maud::{Markup, html};

use crate::PagesState;
use crate::dashboard::layout::{hosted, when};
use crate::dashboard::respond;
use crate::link_guard::{counted_guess, foreign_post, locked_out, refusal_page};

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/loans/{link}").get(show).post(accept));
}

/// The net of the worked example: 1,000 of the currency's major units.
const EXAMPLE_NET_MAJOR: i64 = 1_000;

async fn show(
    req: HttpRequest,
    state: web::Data<PagesState>,
    link: web::Path<String>,
) -> HttpResponse {
    if let Some(refused) = locked_out(&req, &state) {
        return refused;
    }
    match state.loans.offer_by_link(&link).await {
        Ok(loan) => respond(StatusCode::OK, offer_page(&loan, &link, &Typed::default())),
        Err(error) => refused_guess(&req, &state, &error),
    }
}

/// What the form was sent with, and what of it was refused, to show the form again: the name
/// typed is not secret and is put back to be mended.
#[derive(Default)]
struct Typed<'a> {
    name: Option<&'a str>,
    /// The field refused (`name` or `agree`) and why.
    refused: Option<(&'static str, String)>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Acceptance {
    #[serde(default)]
    name: String,
    #[serde(default)]
    agree: Option<String>,
}

async fn accept(
    req: HttpRequest,
    state: web::Data<PagesState>,
    link: web::Path<String>,
    form: web::Form<Acceptance>,
) -> HttpResponse {
    if let Some(refused) = foreign_post(&req) {
        return refused;
    }
    if let Some(refused) = locked_out(&req, &state) {
        return refused;
    }
    let agreed = form.agree.as_deref() == Some("yes");
    let address = client_address(&req).map_or_else(String::new, |a| a.to_string());
    match state
        .loans
        .accept_by_link(&link, &form.name, agreed, &address)
        .await
    {
        Ok(loan) => respond(StatusCode::OK, accepted_page(&loan)),
        Err(OfferPageError::Refused(invalid, loan)) => {
            let typed = if invalid.field == "agree" {
                // The name goes back into its field to go on, but never what could be a card
                // number.
                Typed {
                    name: Some(form.name.as_str()).filter(|name| !could_hold_card_number(name)),
                    refused: Some((
                        "agree",
                        "Tick the box to say you accept these terms for the business.".into(),
                    )),
                }
            } else {
                Typed {
                    name: None,
                    refused: Some(("name", format!("Your full name {}.", invalid.message))),
                }
            };
            respond(StatusCode::BAD_REQUEST, offer_page(&loan, &link, &typed))
        }
        Err(error) => refused_guess(&req, &state, &error),
    }
}

/// The offer: its terms, a worked example, and the form that accepts it.
fn offer_page(loan: &Loan, link: &str, typed: &Typed<'_>) -> Markup {
    let error = |field: &str| {
        typed
            .refused
            .as_ref()
            .filter(|(f, _)| *f == field)
            .map(|(_, message)| message.as_str())
    };
    let (name_error, agree_error) = (error("name"), error("agree"));
    let c = loan.currency;
    let t = &loan.terms;
    let scale = 10_i64.pow(u32::from(c.minor_units()));
    let net = EXAMPLE_NET_MAJOR.saturating_mul(scale);
    let withheld = t.withholding(net, t.total());
    let action = format!("/loans/{link}");
    let body = html! {
        h1 { "Your financing offer" }
        p { "Read the terms, then accept them for the business. Nothing is paid until you accept." }
        dl.facts {
            dt { "You receive" } dd { (money(t.advance, c)) }
            dt { "Flat fee" } dd { (money(t.fee, c)) }
            dt { "Total to repay" } dd { (money(t.total(), c)) " (the amount you receive and the fee; no interest)" }
            dt { "Repaid from your sales" } dd { (t.rate_percent()) " of each settlement's net, withheld before the rest is paid to you" }
            @if let Some(minimum) = t.minimum_per_30_days {
                dt { "Minimum" } dd { "At least " (money(minimum, c)) " repaid in each 30 days after the money is paid out" }
            }
            dt { "Offer ends" } dd { (when(loan.offer_expires_on)) }
        }
        h2 { "A worked example" }
        p {
            "If a day's sales settle a net of " (money(net, c)) ", " (money(withheld, c))
            " is withheld to repay the loan and " (money(net.saturating_sub(withheld), c))
            " is paid to you. Withholding stops once " (money(t.total(), c))
            " has been repaid. You may also repay early at any time."
        }
        form.stack method="post" action=(action) {
            label for="name" { "Your full name" }
            span.hint #name-hint { "Accepting records your name, the time and your address." }
            @if let Some(error) = name_error { span.field-error #name-error role="alert" { (error) } }
            input #name name="name" type="text" required autocomplete="name" maxlength=(MAX_TEXT)
                value=[typed.name]
                aria-invalid=[name_error.map(|_| "true")]
                aria-describedby=(if name_error.is_some() { "name-hint name-error" } else { "name-hint" });
            @if let Some(error) = agree_error { span.field-error #agree-error role="alert" { (error) } }
            div.check {
                input #agree type="checkbox" name="agree" value="yes" required
                    aria-invalid=[agree_error.map(|_| "true")]
                    aria-describedby=[agree_error.map(|_| "agree-error")];
                label for="agree" { "I accept these terms for the business, and I may accept them for it." }
            }
            button type="submit" { "Accept the offer" }
        }
    };
    hosted("Your financing offer", &body)
}

/// What accepting did.
fn accepted_page(loan: &Loan) -> Markup {
    let c = loan.currency;
    let body = html! {
        h1 { "Offer accepted" }
        @if loan.state == LoanState::PaidOut {
            p role="status" { (money(loan.terms.advance, c)) " is on its way to the business's bank account." }
        } @else {
            p role="status" { "Your acceptance is recorded. " (money(loan.terms.advance, c)) " is paid out as soon as the business's bank account is ready." }
        }
        p { "Each settlement withholds its share until " (money(loan.terms.total(), c)) " has been repaid. This link no longer works." }
    };
    hosted("Offer accepted", &body)
}

fn refusal(error: &OfferPageError) -> HttpResponse {
    let (status, title, words) = match error {
        OfferPageError::UnknownLink => (
            StatusCode::NOT_FOUND,
            "Link not found",
            "This link is unknown, or its offer was already accepted or withdrawn. Ask the platform that sent it.",
        ),
        // The form shows its own refusals with the offer (`accept`); never reached here.
        OfferPageError::Refused(..) => (
            StatusCode::BAD_REQUEST,
            "Check the form",
            "Open the link again and fill in the form.",
        ),
        OfferPageError::Expired => (
            StatusCode::GONE,
            "Offer expired",
            "This offer has ended. Ask the platform that sent it for a new one.",
        ),
        OfferPageError::Busy => (
            StatusCode::SERVICE_UNAVAILABLE,
            "Try again",
            "The offer changed while you accepted it. Open the link again to see where it stands.",
        ),
        OfferPageError::Store(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "Something went wrong",
            "The offer could not be loaded. Try again in a moment.",
        ),
    };
    if status.is_server_error() {
        tracing::error!(error = %error, "loan offer page failed");
    }
    refusal_page(status, title, words)
}

/// An unknown link is a guess at a secret: it counts against the address, like a wrong key.
fn refused_guess(req: &HttpRequest, state: &PagesState, error: &OfferPageError) -> HttpResponse {
    if matches!(error, OfferPageError::UnknownLink)
        && let Some(refused) = counted_guess(req, state)
    {
        return refused;
    }
    refusal(error)
}
