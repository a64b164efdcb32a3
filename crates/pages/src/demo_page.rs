//! `/demo`: a merchant's checkout, as a newcomer's first sight of Holdfast working. The page
//! loads the client script with the demo's public key and a client session opened for this
//! visit; `POST /demo/pay` is the "merchant's server": it pays with the token and shows the
//! transaction. Served only when `serve` set the demo up (test mode, the demo platform).
//!
//! Unlike a merchant's own site, this page shares Holdfast's origin with the fields' frames;
//! the page says so, and docs/hosted-fields.md explains what a real integration gets.

use actix_web::http::StatusCode;
use actix_web::http::header::{CONTENT_SECURITY_POLICY, ContentType};
use actix_web::{HttpResponse, web};
use holdfast_domain::auth::{Access, Principal};
use holdfast_domain::ids::{ClientSessionId, TokenId};
use holdfast_domain::payment::amount::Amount;
use holdfast_domain::payment::client_session::ClientSession;
use holdfast_domain::payment::lifecycle::TxnType;
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::services::{AuthenticateError, NewClientSession, NewPayment, PaymentSource};
use serde::Deserialize;

use crate::PagesState;
use crate::demo::{AMOUNT, Demo};
use holdfast_web::ApiError;
use holdfast_web::html::escape;

const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                      frame-src 'self'; connect-src 'self'; base-uri 'none'; \
                      form-action 'self'; frame-ancestors 'none'";
const SCRIPT: &str = include_str!("../assets/demo/demo.js");
const STYLESHEET: &str = include_str!("../assets/demo/demo.css");

pub fn config(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/demo").get(checkout))
        .service(web::resource("/demo/pay").post(pay))
        .service(web::resource("/demo/demo.js").get(script))
        .service(web::resource("/demo/demo.css").get(stylesheet));
}

/// The demo, if served, and its backend's identity, read afresh from the demo's private key as
/// a shop's server would send it: a key deactivated or deleted closes the demo at once. Its
/// pages take no key, so every visit and payment counts against that key's rate, as its calls
/// would from a real shop's server.
/// `None` once that key no longer authenticates.
async fn demo(state: &PagesState) -> Result<Option<(&Demo, Principal)>, ApiError> {
    let demo = state.demo.as_deref().ok_or(ApiError::RouteNotFound)?;
    state
        .rate_limits
        .admit(&demo.backend, Access::Private, None)
        .map_err(|wait| ApiError::RateLimited { retry_after: wait })?;
    match state
        .auth
        .authenticate(Some(demo.private_key.expose()), Access::Private)
        .await
    {
        Ok(backend) => Ok(Some((demo, backend))),
        Err(AuthenticateError::Denied(_)) => Ok(None),
        Err(store) => Err(ApiError::from_auth(store, Access::Private)),
    }
}

/// What the demo answers once its private key was deactivated or deleted.
fn closed() -> HttpResponse {
    let mut closed = page(
        "Demo closed",
        "<main><h1>The demo checkout is closed</h1><p>Its private key was deactivated or \
         deleted. Activate it again, or restart <code>holdfast serve</code> to give the demo \
         new keys.</p></main>",
    );
    *closed.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    closed
}

fn page(title: &str, body: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::html())
        .insert_header((CONTENT_SECURITY_POLICY, POLICY))
        .body(format!(
            r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Holdfast demo</title>
<link rel="stylesheet" href="/demo/demo.css">
</head>
<body>
<header><p class="brand">Demo Shop <span class="badge">test mode</span></p></header>
{body}
</body>
</html>
"#
        ))
}

/// The checkout, with a client session opened for this visit.
async fn checkout(state: web::Data<PagesState>) -> Result<HttpResponse, ApiError> {
    let Some((demo, backend)) = demo(&state).await? else {
        return Ok(closed());
    };
    let new = NewClientSession {
        merchant_id: demo.merchant.clone(),
        amount: Amount::new("amount", AMOUNT)?,
        currency: None,
        payment_methods: None,
        expires_in: None,
    };
    let session = state.client_sessions.create(&backend, new, None).await?;
    let body = format!(
        r#"<main id="checkout" data-client-secret="{secret}">
<h1>Checkout</h1>
<p class="lead">Pay <strong>{price}</strong> to Demo Shop. The card fields below are Holdfast's hosted fields: the card goes from them to Holdfast, which gives this page a one-time token; the shop's server then pays with it.</p>
<form id="pay" method="post" action="/demo/pay">
<div id="card-number" class="field"></div>
<div class="row"><div id="card-expiry" class="field"></div><div id="card-cvv" class="field"></div></div>
<input type="hidden" name="token" id="token" value="">
<input type="hidden" name="session" value="{session}">
<button type="submit" id="pay-button">Pay {price}</button>
<p id="error" class="error" role="alert"></p>
</form>
<section aria-labelledby="cards">
<h2 id="cards">Test cards</h2>
<p>Any future expiration date and any three digits (four for American Express) will do.</p>
<table>
<thead><tr><th scope="col">Card number</th><th scope="col">Outcome</th></tr></thead>
<tbody>
<tr><td><code>4111 1111 1111 1111</code></td><td>approved</td></tr>
<tr><td><code>3782 822463 10005</code></td><td>approved (American Express)</td></tr>
<tr><td><code>4000 0000 0000 0119</code></td><td>declined: insufficient funds</td></tr>
<tr><td><code>4111 1111 1111 1112</code></td><td>refused as you type: not a card number</td></tr>
</tbody>
</table>
<p class="note">On a shop's own site the fields come from Holdfast's origin, so no script of the shop can read them. Here the page itself is served by Holdfast, for the demo only. See <code>docs/hosted-fields.md</code>.</p>
</section>
</main>
<script src="/v1/clients/holdfast.js?publicApiKey={key}"></script>
<script src="/demo/demo.js"></script>"#,
        secret = escape(session.secret.expose()),
        session = escape(session.session.id.as_str()),
        key = escape(&demo.public_key),
        price = dollars(AMOUNT),
    );
    Ok(page("Checkout", &body))
}

/// What the page posts: the token the fields made, and the session it was made under.
#[derive(Deserialize)]
struct PayForm {
    token: String,
    session: String,
}

/// The shop's server: pays with the token and shows what happened.
async fn pay(
    state: web::Data<PagesState>,
    req: actix_web::HttpRequest,
    form: web::Form<PayForm>,
) -> Result<HttpResponse, ApiError> {
    // Checked before the demo's rate is spent: a forged post costs the demo nothing.
    if state.demo.is_some() && !holdfast_web::same_origin::is_same_origin(&req) {
        let mut refused = outcome_page(
            None,
            None,
            "This form pays only from the demo checkout page.",
        );
        *refused.status_mut() = StatusCode::FORBIDDEN;
        return Ok(refused);
    }
    let Some((demo, backend)) = demo(&state).await? else {
        return Ok(closed());
    };
    let Ok(token) = TokenId::parse("token", &form.token) else {
        return Ok(outcome_page(
            None,
            None,
            "The page sent no token: pay from the checkout form.",
        ));
    };
    let new = NewPayment {
        merchant_id: demo.merchant.clone(),
        kind: TxnType::Sale,
        amount: Amount::new("amount", AMOUNT)?,
        source: PaymentSource::Token(token),
        labels: holdfast_domain::payment::labels::Labels::default(),
    };
    let paid = state.payments.pay(&backend, new, None).await;
    // The session the token was made under: completed by an approved payment.
    let session = match ClientSessionId::parse("session", &form.session) {
        Ok(id) => state.client_sessions.get(&backend, &id).await.ok(),
        Err(_) => None,
    };
    Ok(match paid {
        Ok(txn) => outcome_page(Some(&txn), session.as_ref(), ""),
        Err(err) => outcome_page(None, session.as_ref(), &ApiError::from(err).shown()),
    })
}

fn outcome_page(
    txn: Option<&Transaction>,
    session: Option<&ClientSession>,
    refusal: &str,
) -> HttpResponse {
    let session = session.map_or_else(String::new, |s| {
        format!(
            "<p>Client session <code>{}</code> is now <strong>{}</strong>.</p>",
            escape(s.id.as_str()),
            s.status
        )
    });
    let Some(txn) = txn else {
        let body = format!(
            r#"<main><h1>Not paid</h1><p class="error">{}</p>{session}<p><a href="/demo">Back to the checkout</a></p></main>"#,
            escape(refusal)
        );
        return page("Not paid", &body);
    };
    let approved = txn.state == txn.kind.state_when_approved();
    let heading = if approved { "Paid" } else { "Not paid" };
    let body = format!(
        r#"<main>
<h1>{heading}</h1>
<p class="lead">{lead}</p>
<dl class="transaction">
<dt>Transaction</dt><dd><code>{id}</code></dd>
<dt>State</dt><dd>{state}</dd>
<dt>Amount</dt><dd>{amount}</dd>
<dt>Card</dt><dd>{brand} ending in {last4}</dd>
<dt>Processor</dt><dd>{code} {message}</dd>
</dl>
{session}
<p>The shop's server can read it with its private key: <code>GET /v1/transactions/{id}</code>.</p>
<p><a href="/demo">Pay again</a></p>
</main>"#,
        lead = if approved {
            "The sandbox processor approved the sale."
        } else {
            "The sandbox processor did not approve the sale."
        },
        id = escape(txn.id.as_str()),
        state = txn.state.as_str(),
        amount = dollars(txn.amount),
        brand = txn.payment.brand.as_str(),
        last4 = escape(&txn.payment.last4),
        code = escape(&txn.authorization.processor_code),
        message = escape(&txn.authorization.processor_message),
    );
    page(heading, &body)
}

fn dollars(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

async fn script() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("application/javascript; charset=utf-8")
        .body(SCRIPT)
}

async fn stylesheet() -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/css; charset=utf-8")
        .body(STYLESHEET)
}
