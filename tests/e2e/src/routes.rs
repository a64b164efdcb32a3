//! Every authenticated route, with a valid body and what its `{id}` stands for: the one table
//! the security and hostile-input tests walk. A test checks it lists exactly the routes served.

use holdfast_domain::auth::Access;
use reqwest::StatusCode;

use crate::Api;

/// What `{id}` in a route stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    None,
    Merchant,
    Transaction,
    Connection,
    Plan,
    Token,
    Webhook,
    ClientSession,
    BoardingForm,
    /// A merchant the sandbox approved through its boarding form.
    ApprovedMerchant,
    /// An approved merchant whose compliance form is attested.
    AttestedMerchant,
    /// A merchant with money available to pay out (the server must settle often).
    FundedMerchant,
    /// A pending payout of a funded merchant (the server must not run the payout rails).
    Payout,
    /// A loan offered to a fresh merchant.
    Loan,
    /// A loan accepted and paid out to a funded merchant, which can repay it early.
    RepayingLoan,
}

pub const AUTH_BODY: &str = r#"{"merchantId": "{merchant}", "type": "auth", "amount": 1000,
    "payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230", "name": "Ann O'Neil"}}"#;

/// Method, path, required key, a valid body, what `{id}` stands for, and the status a key of
/// the other mode gets on a collection route.
pub type Route = (
    &'static str,
    &'static str,
    Access,
    Option<&'static str>,
    Resource,
    u16,
);

/// Every authenticated route: method, path, required key, a valid body (`{merchant}` is a
/// merchant of the test mode, the owner's: the sandbox takes test payments only), what `{id}`
/// stands for, and the status a key of the other mode (live) gets on a collection route (where
/// there is no resource to hide).
#[rustfmt::skip]
pub const ROUTES: &[Route] = &[
    ("POST", "/v1/merchants", Access::Private, Some(r#"{"name": "Shop"}"#), Resource::None, 201),
    ("GET", "/v1/merchants", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/merchants/{id}", Access::Private, None, Resource::Merchant, 0),
    ("PATCH", "/v1/merchants/{id}", Access::Private, Some(r#"{"name": "Renamed"}"#), Resource::Merchant, 0),
    ("DELETE", "/v1/merchants/{id}", Access::Private, None, Resource::Merchant, 0),
    // A live key cannot pay for a test merchant: the merchant does not exist for it.
    ("POST", "/v1/transactions", Access::Private, Some(AUTH_BODY), Resource::None, 400),
    ("GET", "/v1/transactions", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/transactions/{id}", Access::Private, None, Resource::Transaction, 0),
    // The sandbox takes test payments only: a live key cannot make a sandbox connection.
    ("POST", "/v1/processor-connections", Access::Private, Some(r#"{"name": "Backup", "kind": "sandbox"}"#), Resource::None, 400),
    ("GET", "/v1/processor-connections", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/processor-connections/{id}", Access::Private, None, Resource::Connection, 0),
    // A live key cannot route to a test connection: it does not exist for it.
    ("POST", "/v1/plans", Access::Private, Some(r#"{"name": "Gold", "fee": {"basisPoints": 200, "fixed": 0}, "defaultConnectionId": "{connection}"}"#), Resource::None, 400),
    ("GET", "/v1/plans", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/plans/{id}", Access::Private, None, Resource::Plan, 0),
    // A BIN table has no mode: both modes read the same answer.
    ("GET", "/v1/bins/{bin}", Access::Private, None, Resource::None, 200),
    // `?merchantId=` the merchant (`concrete`), which a live key does not see.
    ("GET", "/v1/balances", Access::Private, None, Resource::Merchant, 404),
    ("GET", "/v1/balance-transactions", Access::Private, None, Resource::None, 200),
    // A live key cannot pay out a test merchant: the merchant does not exist for it.
    ("POST", "/v1/payouts", Access::Private, Some(PAYOUT_BODY), Resource::FundedMerchant, 400),
    ("GET", "/v1/payouts", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/payouts/{id}", Access::Private, None, Resource::Payout, 0),
    ("POST", "/v1/payouts/{id}/cancel", Access::Private, None, Resource::Payout, 0),
    // A live key cannot lend to a test merchant: the merchant does not exist for it.
    ("POST", "/v1/loans", Access::Private, Some(LOAN_BODY), Resource::None, 400),
    ("GET", "/v1/loans", Access::Private, None, Resource::None, 200),
    // A live key: the sandbox underwriter is test mode's (and the merchant is not the live key's).
    ("POST", "/v1/loans/underwritten", Access::Private, Some(r#"{"merchantId": "{merchant}"}"#), Resource::FundedMerchant, 409),
    ("GET", "/v1/loans/{id}", Access::Private, None, Resource::Loan, 0),
    ("POST", "/v1/loans/{id}/accept", Access::Private, Some(ACCEPT_LOAN_BODY), Resource::Loan, 0),
    ("POST", "/v1/loans/{id}/cancel", Access::Private, None, Resource::Loan, 0),
    ("POST", "/v1/loans/{id}/repay", Access::Private, Some(r#"{"amount": 100}"#), Resource::RepayingLoan, 0),
    ("GET", "/v1/loans/{id}/repayments", Access::Private, None, Resource::RepayingLoan, 0),
    ("GET", "/v1/merchants/{id}/payout-schedule", Access::Private, None, Resource::Merchant, 0),
    ("PUT", "/v1/merchants/{id}/payout-schedule", Access::Private, Some(r#"{"interval": "weekly", "weekday": "friday", "minimumAmount": 5000}"#), Resource::Merchant, 0),
    // Public keys may tokenize (spec 5.3); a token is made in the key's own mode.
    ("POST", "/v1/tokens", Access::PublicOrPrivate, Some(TOKEN_BODY), Resource::None, 201),
    ("GET", "/v1/tokens/{id}", Access::Private, None, Resource::Token, 0),
    ("DELETE", "/v1/tokens/{id}", Access::Private, None, Resource::Token, 0),
    ("POST", "/v1/webhooks", Access::Private, Some(WEBHOOK_BODY), Resource::None, 201),
    ("GET", "/v1/webhooks", Access::Private, None, Resource::None, 200),
    // The catalogue has no mode: both modes read the same list.
    ("GET", "/v1/webhooks/event-types", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/webhooks/{id}", Access::Private, None, Resource::Webhook, 0),
    ("PATCH", "/v1/webhooks/{id}", Access::Private, Some(WEBHOOK_BODY), Resource::Webhook, 0),
    ("POST", "/v1/webhooks/{id}/rotate-secret", Access::Private, None, Resource::Webhook, 0),
    ("POST", "/v1/webhooks/{id}/test", Access::Private, None, Resource::Webhook, 0),
    ("DELETE", "/v1/webhooks/{id}", Access::Private, None, Resource::Webhook, 0),
    ("GET", "/v1/webhooks/{id}/deliveries", Access::Private, None, Resource::Webhook, 0),
    // A live key cannot open a session for a test merchant: the merchant does not exist for it.
    ("POST", "/v1/client-sessions", Access::Private, Some(SESSION_BODY), Resource::None, 400),
    ("GET", "/v1/client-sessions/{id}", Access::Private, None, Resource::ClientSession, 0),
    ("POST", "/v1/client-sessions/{id}/cancel", Access::Private, None, Resource::ClientSession, 0),
    // Apple Pay's merchant validation: a sandbox session in test mode, not set up in live.
    ("POST", "/v1/apple-pay/merchant-sessions", Access::PublicOrPrivate, Some(r#"{"validationUrl": "https://apple-pay-gateway-cert.apple.com/paymentservices/startSession", "domainName": "shop.example"}"#), Resource::None, 400),
    // The hosted client: a public key of either mode, in the query; neither has a mode.
    ("GET", "/v1/clients/{script}", Access::Public, None, Resource::None, 200),
    ("GET", "/v1/clients/fields/{field}", Access::Public, None, Resource::None, 200),
    // A live key cannot board a test merchant: the merchant does not exist for it.
    ("POST", "/v1/boarding-forms", Access::Private, Some(r#"{"merchantId": "{merchant}"}"#), Resource::None, 400),
    ("GET", "/v1/boarding-forms", Access::Private, None, Resource::None, 200),
    ("GET", "/v1/boarding-forms/{id}", Access::Private, None, Resource::BoardingForm, 0),
    ("POST", "/v1/boarding-forms/{id}/link", Access::Private, None, Resource::BoardingForm, 0),
    ("GET", "/v1/merchants/{id}/compliance", Access::Private, None, Resource::ApprovedMerchant, 0),
    ("POST", "/v1/merchants/{id}/compliance/attest", Access::Private, Some(ATTEST_BODY), Resource::ApprovedMerchant, 0),
    ("GET", "/v1/merchants/{id}/compliance/attestation", Access::Private, None, Resource::AttestedMerchant, 0),
];

pub const ATTEST_BODY: &str = r#"{"name": "Ada Lovelace", "title": "Director", "agreed": true}"#;

/// A route's template with its placeholders filled: `{id}` by `id` (the balances' merchant in
/// its query), the rest by values that name something real.
pub fn concrete(template: &str, id: &str) -> String {
    // The one route whose resource is named in its query.
    if template == "/v1/balances" {
        return format!("{template}?merchantId={id}");
    }
    template
        .replace("{id}", id)
        .replace("{bin}", "411111")
        .replace("{script}", "holdfast.js")
        .replace(
            "{field}",
            "number?origin=https%3A%2F%2Fshop.example&channel=abcdefghijklmnop",
        )
}

/// The key of the right type for a route of `access`: the public one only where the route
/// takes nothing else.
pub fn key_for<'k>(access: Access, private: &'k str, public: &'k str) -> &'k str {
    match access {
        Access::Public => public,
        Access::Private | Access::PublicOrPrivate => private,
    }
}

/// The target and `x-api-key` header that present `key` as a route of `access` takes it: a
/// public route (loaded by a script tag or a frame) reads it from the query.
pub fn present_key<'k>(
    access: Access,
    target: &str,
    key: Option<&'k str>,
) -> (String, Option<&'k str>) {
    match (access, key) {
        (Access::Public, Some(key)) => {
            let separator = if target.contains('?') { '&' } else { '?' };
            (format!("{target}{separator}publicApiKey={key}"), None)
        }
        (Access::Public, None) => (target.to_owned(), None),
        (Access::Private | Access::PublicOrPrivate, key) => (target.to_owned(), key),
    }
}

pub const WEBHOOK_BODY: &str =
    r#"{"endpointUrl": "https://example.com/hooks", "events": ["transaction.created"]}"#;

/// A payout of `{merchant}`, which must have money available (`Resource::FundedMerchant`).
pub const PAYOUT_BODY: &str = r#"{"merchantId": "{merchant}", "amount": 100}"#;

/// A loan offered to `{merchant}`: $1,000.00 and a $100.00 fee, repaid at 10 % of each
/// settlement.
pub const LOAN_BODY: &str =
    r#"{"merchantId": "{merchant}", "advance": 100000, "fee": 10000, "withholdRateBps": 1000}"#;

/// The platform accepting a loan with the merchant's consent.
pub const ACCEPT_LOAN_BODY: &str =
    r#"{"consent": {"name": "Ada Lovelace", "reference": "signed-terms-1"}}"#;

/// What the server of a walk over `ROUTES` must run with: settlement often, so a funded
/// merchant's sale becomes available at once, and no payout rail, so a payout stays pending.
pub const SERVER_ENV: &[(&str, &str)] = &[
    ("HOLDFAST_SETTLE_EVERY_MS", "100"),
    ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
];

pub const SESSION_BODY: &str = r#"{"merchantId": "{merchant}", "amount": 2500}"#;

pub const TOKEN_BODY: &str = r#"{"payment": {"number": "4111111111111111", "cvv": "123", "expiration": "1230", "name": "Ann O'Neil"}}"#;

/// A fresh merchant of `owner`'s mode, and the resource of that mode `{id}` stands for.
pub async fn resource_of(
    api: &Api,
    owner: &str,
    resource: Resource,
    connection: &str,
    plan: &str,
) -> (String, String) {
    let merchant = match resource {
        Resource::FundedMerchant | Resource::Payout | Resource::RepayingLoan => {
            funded_merchant(api, owner, connection).await
        }
        _ => {
            let made = api
                .post("/v1/merchants", owner, r#"{"name": "Shop"}"#)
                .await;
            assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
            made.body["id"].as_str().expect("an id").to_owned()
        }
    };
    let id = match resource {
        Resource::None | Resource::FundedMerchant => String::new(),
        Resource::Payout => {
            let body = PAYOUT_BODY.replace("{merchant}", &merchant);
            let payout = api.post("/v1/payouts", owner, &body).await;
            assert_eq!(payout.status, StatusCode::CREATED, "{}", payout.text);
            payout.body["id"].as_str().expect("an id").to_owned()
        }
        Resource::Loan => offered_loan(api, owner, &merchant).await,
        Resource::RepayingLoan => {
            let loan = offered_loan(api, owner, &merchant).await;
            let path = format!("/v1/loans/{loan}/accept");
            let accepted = api.post(&path, owner, ACCEPT_LOAN_BODY).await;
            assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.text);
            assert_eq!(accepted.body["state"], "paid_out", "{}", accepted.text);
            loan
        }
        Resource::Merchant => merchant.clone(),
        Resource::Connection => connection.to_owned(),
        Resource::Plan => plan.to_owned(),
        Resource::Token => {
            let token = api.post("/v1/tokens", owner, TOKEN_BODY).await;
            assert_eq!(token.status, StatusCode::CREATED, "{}", token.text);
            token.body["id"].as_str().expect("an id").to_owned()
        }
        Resource::Webhook => {
            let hook = api.post("/v1/webhooks", owner, WEBHOOK_BODY).await;
            assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
            hook.body["id"].as_str().expect("an id").to_owned()
        }
        Resource::ClientSession => {
            let body = SESSION_BODY.replace("{merchant}", &merchant);
            let session = api.post("/v1/client-sessions", owner, &body).await;
            assert_eq!(session.status, StatusCode::CREATED, "{}", session.text);
            session.body["id"].as_str().expect("an id").to_owned()
        }
        Resource::ApprovedMerchant => api.approved_merchant(owner).await,
        Resource::AttestedMerchant => {
            let approved = api.approved_merchant(owner).await;
            let path = format!("/v1/merchants/{approved}/compliance/attest");
            let attested = api.post(&path, owner, ATTEST_BODY).await;
            assert_eq!(attested.status, StatusCode::OK, "{}", attested.text);
            approved
        }
        Resource::BoardingForm => {
            let body = format!(r#"{{"merchantId": "{merchant}"}}"#);
            let form = api.post("/v1/boarding-forms", owner, &body).await;
            assert_eq!(form.status, StatusCode::CREATED, "{}", form.text);
            form.body["id"].as_str().expect("an id").to_owned()
        }
        Resource::Transaction => {
            let body = AUTH_BODY.replace("{merchant}", &merchant);
            let auth = api.post("/v1/transactions", owner, &body).await;
            assert_eq!(auth.status, StatusCode::CREATED, "{}", auth.text);
            auth.body["id"].as_str().expect("an id").to_owned()
        }
    };
    (merchant, id)
}

/// A loan offered to `merchant` (`LOAN_BODY`): its id.
pub async fn offered_loan(api: &Api, owner: &str, merchant: &str) -> String {
    let body = LOAN_BODY.replace("{merchant}", merchant);
    let loan = api.post("/v1/loans", owner, &body).await;
    assert_eq!(loan.status, StatusCode::CREATED, "{}", loan.text);
    loan.body["id"].as_str().expect("an id").to_owned()
}

/// A merchant of `owner`'s mode on a plan that settles at once, with a sale of 10.00 made
/// available by the server's settlement (`SERVER_ENV`).
pub async fn funded_merchant(api: &Api, owner: &str, connection: &str) -> String {
    let plan = api
        .post(
            "/v1/plans",
            owner,
            &format!(
                r#"{{"name": "At once", "fee": {{"basisPoints": 0, "fixed": 0}}, "defaultConnectionId": "{connection}", "settlementDelayDays": 0}}"#
            ),
        )
        .await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    let plan = plan.body["id"].as_str().expect("an id");
    let made = api
        .post("/v1/merchants", owner, r#"{"name": "Funded"}"#)
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let merchant = made.body["id"].as_str().expect("an id").to_owned();
    let moved = api
        .patch(
            &format!("/v1/merchants/{merchant}"),
            owner,
            &format!(r#"{{"planId": "{plan}"}}"#),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.text);
    let sale = AUTH_BODY
        .replace("{merchant}", &merchant)
        .replace(r#""auth""#, r#""sale""#);
    let sold = api.post("/v1/transactions", owner, &sale).await;
    assert_eq!(sold.status, StatusCode::CREATED, "{}", sold.text);
    let balance = format!("/v1/balances?merchantId={merchant}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let read = api.get(&balance, owner).await;
        if read.body["balances"][0]["available"].as_i64() == Some(1000) {
            return merchant;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sale was never settled: is the server settling often? {}",
            read.text
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// The sandbox connection and default plan a new platform has in test mode: the only mode
/// the sandbox serves (a live plan never routes to it).
pub async fn test_plan(api: &Api, test_private: &str) -> (String, String) {
    let first_id = |reply: crate::Reply| {
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        reply.body["data"][0]["id"]
            .as_str()
            .expect("one made with the platform")
            .to_owned()
    };
    (
        first_id(api.get("/v1/processor-connections", test_private).await),
        first_id(api.get("/v1/plans", test_private).await),
    )
}
