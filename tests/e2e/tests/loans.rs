//! Loans from outside (docs/loans.md), on both backends: offered through the API, accepted with
//! the merchant's consent and paid out as a payout of method `loan` the sandbox bank pays;
//! settlements withhold the rate, never more than is outstanding; an early repayment from the
//! available balance; the events at a real receiver with valid signatures, and a loan
//! delivery's resend refused (spec 6.4); `holdfast ledger verify` clean throughout; expiry and
//! the 30-day minimum by moving the loan's times back (time travel, not sleep); a charge-off.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::dashboard::{ADMIN_PASSWORD, set_password};
use holdfast_e2e::money::{balance, merchant_settling_at_once, settled_sale, verify_clean};
use holdfast_e2e::{Answer, Api, Env, Received, Receiver, on_both_backends, verify_signature};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn loan(api: &Api, key: &str, id: &str) -> Value {
    let read = api.get(&format!("/v1/loans/{id}"), key).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    read.body
}

const OFFER: &str = r#"{"merchantId": "{merchant}", "advance": 100000, "fee": 10000,
    "withholdRateBps": 1000, "minimumPer30Days": 20000}"#;
const CONSENT: &str = r#"{"consent": {"name": "Ada Lovelace", "reference": "signed-terms-7"}}"#;

/// The whole life of a loan, observed from outside.
#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
async fn a_loan_is_paid_out_and_repaid_from_settlements(env: Env) {
    let receiver = Receiver::start(Answer::status(200)).await;
    let platform = env.create_platform("Lender");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = api
        .post(
            "/v1/webhooks",
            key,
            &json!({"endpointUrl": receiver.url,
                    "events": ["loan.created", "loan.accepted", "loan.paid_out",
                               "loan.repayment", "loan.repaid"]})
            .to_string(),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let merchant = merchant_settling_at_once(&api, key).await;

    // Offered: the terms, what is outstanding, and the acceptance page's link, once.
    let body = OFFER.replace("{merchant}", &merchant);
    let offered = api.post_once("/v1/loans", key, "loan-1", &body).await;
    assert_eq!(offered.status, StatusCode::CREATED, "{}", offered.text);
    let id = offered.body["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("loan_"));
    for (field, value) in [
        ("state", json!("offered")),
        ("advance", json!(100_000)),
        ("fee", json!(10_000)),
        ("total", json!(110_000)),
        ("outstanding", json!(110_000)),
        ("repaid", json!(0)),
        ("withholdRateBps", json!(1_000)),
        ("minimumPer30Days", json!(20_000)),
        ("currency", json!("USD")),
        ("payoutId", Value::Null),
        ("acceptance", Value::Null),
    ] {
        assert_eq!(offered.body[field], value, "{field}: {}", offered.text);
    }
    let url = offered.body["acceptanceUrl"].as_str().unwrap();
    assert!(url.contains("/loans/"), "{url}");
    let replayed = api.post_once("/v1/loans", key, "loan-1", &body).await;
    assert_eq!(replayed.body["id"], id.as_str(), "one loan per key");
    assert!(
        replayed.body.get("acceptanceUrl").is_none(),
        "the link's secret is kept nowhere, not even for a replay"
    );
    assert!(
        loan(&api, key, &id).await.get("acceptanceUrl").is_none(),
        "the link is shown once"
    );
    let second = api.post("/v1/loans", key, &body).await;
    assert_eq!(second.status, StatusCode::CONFLICT, "{}", second.text);
    assert_eq!(second.body["error"]["param"], "merchantId");
    let early = api.post(&format!("/v1/loans/{id}/repay"), key, "{}").await;
    assert_eq!(
        early.status,
        StatusCode::CONFLICT,
        "nothing to repay before the payout"
    );

    // Accepted with the merchant's consent, and paid out at once.
    let accepted = api
        .post_once(&format!("/v1/loans/{id}/accept"), key, "accept-1", CONSENT)
        .await;
    assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.text);
    assert_eq!(accepted.body["state"], "paid_out", "{}", accepted.text);
    let again = api
        .post_once(&format!("/v1/loans/{id}/accept"), key, "accept-1", CONSENT)
        .await;
    assert_eq!(
        (again.status, &again.body),
        (StatusCode::OK, &accepted.body),
        "a replay answers what the request did: accepted and paid out"
    );
    assert_eq!(accepted.body["acceptance"]["by"], "platform");
    assert_eq!(accepted.body["acceptance"]["name"], "Ada Lovelace");
    assert_eq!(
        accepted.body["acceptance"]["consentReference"],
        "signed-terms-7"
    );
    assert_eq!(accepted.body["acceptance"]["address"], "127.0.0.1");
    let payout_id = accepted.body["payoutId"].as_str().unwrap().to_owned();
    let payout = api.get(&format!("/v1/payouts/{payout_id}"), key).await;
    assert_eq!(payout.body["method"], "loan", "{}", payout.text);
    assert_eq!(payout.body["amount"], 100_000);
    assert_eq!(balance(&api, key, &merchant).await, json!([0, 0, 100_000]));
    let cancel = api.post(&format!("/v1/loans/{id}/cancel"), key, "").await;
    assert_eq!(
        cancel.status,
        StatusCode::CONFLICT,
        "paid out: too late to cancel"
    );
    verify_clean(&env);
    assert_eq!(env.cli_json(&["ledger", "pay-out"])["paid"], 1);
    assert_eq!(balance(&api, key, &merchant).await, json!([0, 0, 0]));
    verify_clean(&env);

    // A settlement of 350.09 withholds 10 %, rounded down: 35.00.
    settled_sale(&env, &api, key, &merchant, 35_009).await;
    assert_eq!(balance(&api, key, &merchant).await, json!([31_509, 0, 0]));
    let after = loan(&api, key, &id).await;
    assert_eq!(
        (after["repaid"].clone(), after["outstanding"].clone()),
        (json!(3_500), json!(106_500))
    );
    // An early repayment the available balance does not cover is refused; one it does is taken.
    let too_much = api
        .post(
            &format!("/v1/loans/{id}/repay"),
            key,
            r#"{"amount": 31510}"#,
        )
        .await;
    assert_eq!(too_much.status, StatusCode::CONFLICT, "{}", too_much.text);
    assert_eq!(too_much.body["error"]["param"], "amount");
    let repaid = api
        .post_once(
            &format!("/v1/loans/{id}/repay"),
            key,
            "repay-1",
            r#"{"amount": 31509}"#,
        )
        .await;
    assert_eq!(repaid.status, StatusCode::OK, "{}", repaid.text);
    assert_eq!(repaid.body["outstanding"], 74_991);
    assert_eq!(balance(&api, key, &merchant).await, json!([0, 0, 0]));
    verify_clean(&env);

    // A large settlement withholds only what is outstanding, and the loan is repaid.
    settled_sale(&env, &api, key, &merchant, 1_000_000).await;
    let done = loan(&api, key, &id).await;
    assert_eq!(done["state"], "repaid", "{done}");
    assert_eq!(done["outstanding"], 0);
    assert_eq!(done["repaid"], 110_000);
    assert_eq!(
        balance(&api, key, &merchant).await,
        json!([1_000_000 - 74_991, 0, 0])
    );
    let history = api.get(&format!("/v1/loans/{id}/repayments"), key).await;
    let rows: Vec<(Value, Value, bool)> = history.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].clone(),
                r["amount"].clone(),
                r["settlementRunId"].is_string(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (json!("withholding"), json!(74_991), true),
            (json!("early"), json!(31_509), false),
            (json!("withholding"), json!(3_500), true),
        ],
        "{}",
        history.text
    );
    let listed = api
        .get(
            &format!("/v1/loans?merchantId={merchant}&state=repaid"),
            key,
        )
        .await;
    assert_eq!(listed.body["data"][0]["id"], id.as_str(), "{}", listed.text);
    let kinds = api
        .get(
            &format!("/v1/balance-transactions?merchantId={merchant}&type=loan_withholding"),
            key,
        )
        .await;
    assert_eq!(
        kinds.body["data"].as_array().unwrap().len(),
        2,
        "{}",
        kinds.text
    );
    verify_clean(&env);

    // The events, signed; in the order they happened (deliveries run concurrently, so by their
    // time, and a settlement's repayment before the repaid it led to); a loan's delivery
    // cannot be resent.
    let delivered = receiver.wait_for(7, Duration::from_secs(10)).await;
    let secret = hook.body["secret"].as_str().unwrap();
    let events = in_order(&delivered, secret);
    let seen: Vec<(Value, Value)> = events
        .iter()
        .map(|e| {
            let outstanding = match e["eventType"].as_str().unwrap() {
                "loan.repayment" => e["data"]["loan"]["outstanding"].clone(),
                _ => e["data"]["outstanding"].clone(),
            };
            (e["eventType"].clone(), outstanding)
        })
        .collect();
    assert_eq!(
        seen,
        [
            (json!("loan.created"), json!(110_000)),
            (json!("loan.accepted"), json!(110_000)),
            (json!("loan.paid_out"), json!(110_000)),
            (json!("loan.repayment"), json!(106_500)),
            (json!("loan.repayment"), json!(74_991)),
            (json!("loan.repayment"), json!(0)),
            (json!("loan.repaid"), json!(0)),
        ]
    );
    let notification = delivered[0].json()["id"].as_str().unwrap().to_owned();
    let resend = env.cli(&[
        "deliveries",
        "resend",
        "--platform",
        &platform.id,
        &notification,
    ]);
    assert!(!resend.success, "a loan delivery is never resent");
    assert!(
        resend.stderr.contains("only transaction notifications"),
        "refused for being a loan's, not for another reason: {}",
        resend.stderr
    );
}

/// An offer past its end expires at the review; a loan paid out falls past due once a 30-day
/// minimum is not met, is back in good standing once a settlement's withholding makes it up,
/// falls due again and is charged off by the operator; an offer is canceled: the books still
/// verify, and a receiver hears each move in its order.
#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
async fn offers_expire_minimums_fall_due_and_the_operator_charges_off(env: Env) {
    let receiver = Receiver::start(Answer::status(200)).await;
    let platform = env.create_platform("Lender");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = api
        .post(
            "/v1/webhooks",
            key,
            &json!({"endpointUrl": receiver.url, "events": MOVES}).to_string(),
        )
        .await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);
    let first = merchant_settling_at_once(&api, key).await;
    let body = OFFER.replace("{merchant}", &first);
    let offered = api.post("/v1/loans", key, &body).await;
    let expiring = offered.body["id"].as_str().unwrap().to_owned();
    // Time travel: the offer's end moved into the past.
    env.execute_sql(&format!(
        "UPDATE loans SET offer_expires_on = created_on WHERE id = '{expiring}';"
    ))
    .await;
    let accept = api
        .post(&format!("/v1/loans/{expiring}/accept"), key, CONSENT)
        .await;
    assert_eq!(accept.status, StatusCode::CONFLICT, "{}", accept.text);
    assert_eq!(
        env.cli_json(&["loans", "review"]),
        json!({"expired": 1, "paidOut": 0, "moved": 0})
    );
    assert_eq!(loan(&api, key, &expiring).await["state"], "expired");

    // A new offer, now that the first is final; accepted, paid out; then 31 days pass.
    let second = api.post("/v1/loans", key, &body).await;
    assert_eq!(second.status, StatusCode::CREATED, "{}", second.text);
    let id = second.body["id"].as_str().unwrap().to_owned();
    let accepted = api
        .post(&format!("/v1/loans/{id}/accept"), key, CONSENT)
        .await;
    assert_eq!(accepted.body["state"], "paid_out", "{}", accepted.text);
    assert_eq!(
        env.cli_json(&["loans", "review"]),
        json!({"expired": 0, "paidOut": 0, "moved": 0}),
        "within its first 30 days nothing is due"
    );
    paid_out_days_ago(&env, &id, 31).await;
    assert_eq!(env.cli_json(&["loans", "review"])["moved"], 1);
    assert_eq!(loan(&api, key, &id).await["state"], "past_due");
    verify_clean(&env);

    // A settlement withholds 10 % of 300,000: the first period's 20,000 is made up.
    settled_sale(&env, &api, key, &first, 300_000).await;
    let made_up = loan(&api, key, &id).await;
    assert_eq!(
        (&made_up["state"], &made_up["repaid"]),
        (&json!("paid_out"), &json!(30_000)),
        "{made_up}"
    );
    // A second period passes with nothing more repaid.
    paid_out_days_ago(&env, &id, 61).await;
    assert_eq!(env.cli_json(&["loans", "review"])["moved"], 1);
    assert_eq!(loan(&api, key, &id).await["state"], "past_due");

    let out = env.cli_json(&[
        "loans",
        "charge-off",
        &id,
        "--platform",
        &platform.id,
        "--mode",
        "test",
    ]);
    assert_eq!(out["state"], "charged_off", "{out}");
    assert_eq!(out["outstanding"], 0);
    assert_eq!(loan(&api, key, &id).await["state"], "charged_off");
    let again = env.cli(&[
        "loans",
        "charge-off",
        &id,
        "--platform",
        &platform.id,
        "--mode",
        "test",
    ]);
    assert!(!again.success, "charged off once");
    verify_clean(&env);

    // Test mode's sandbox underwriter sizes an offer by the last 90 days' volume.
    let seller = merchant_settling_at_once(&api, key).await;
    let body = format!(r#"{{"merchantId": "{seller}"}}"#);
    let nothing = api.post("/v1/loans/underwritten", key, &body).await;
    assert_eq!(nothing.status, StatusCode::CONFLICT, "{}", nothing.text);
    assert_eq!(nothing.body["error"]["param"], "merchantId");
    settled_sale(&env, &api, key, &seller, 300_000).await;
    let proposed = api.post("/v1/loans/underwritten", key, &body).await;
    assert_eq!(proposed.status, StatusCode::CREATED, "{}", proposed.text);
    for (field, value) in [
        ("state", json!("offered")),
        ("advance", json!(100_000)),
        ("fee", json!(10_000)),
        ("withholdRateBps", json!(1_000)),
        ("minimumPer30Days", json!(18_334)),
    ] {
        assert_eq!(proposed.body[field], value, "{field}: {}", proposed.text);
    }
    assert!(proposed.body["acceptanceUrl"].is_string());
    let proposal = proposed.body["id"].as_str().unwrap();
    let canceled = api
        .post(&format!("/v1/loans/{proposal}/cancel"), key, "{}")
        .await;
    assert_eq!(canceled.body["state"], "canceled", "{}", canceled.text);

    // Each move at the receiver, signed, in the order it happened.
    let delivered = receiver.wait_for(12, Duration::from_secs(10)).await;
    let secret = hook.body["secret"].as_str().unwrap();
    let events = in_order(&delivered, secret);
    let seen: Vec<(&str, &str)> = events
        .iter()
        .map(|e| {
            let loan = match e["eventType"].as_str().unwrap() {
                "loan.repayment" => &e["data"]["loan"],
                _ => &e["data"],
            };
            (
                e["eventType"].as_str().unwrap(),
                loan["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("loan.created", "offered"),
            ("loan.expired", "expired"),
            ("loan.created", "offered"),
            ("loan.accepted", "accepted"),
            ("loan.paid_out", "paid_out"),
            ("loan.past_due", "past_due"),
            ("loan.repayment", "paid_out"),
            ("loan.updated", "paid_out"),
            ("loan.past_due", "past_due"),
            ("loan.charged_off", "charged_off"),
            ("loan.created", "offered"),
            ("loan.canceled", "canceled"),
        ]
    );

    // `holdfast ledger verify` names a loan whose books do not add up, each way.
    env.execute_sql(&format!(
        "UPDATE loans SET repaid = repaid + 1 WHERE id = '{id}';"
    ))
    .await;
    assert_named(
        &env,
        &id,
        "its repaid amount is not what its repayments add up to",
    );
    env.execute_sql(&format!(
        "UPDATE loans SET repaid = repaid - 1 WHERE id = '{id}';
         DELETE FROM ledger_journals WHERE source_id IN
                (SELECT id FROM loan_repayments WHERE loan_id = '{id}');"
    ))
    .await;
    assert_named(&env, &id, "a repayment of it has no journal");
    env.execute_sql(&format!(
        "UPDATE loans SET state = 'paid_out' WHERE id = '{expiring}';"
    ))
    .await;
    assert_named(
        &env,
        &expiring,
        "paid out without its advance journal or its payout, or has one unpaid",
    );
}

/// `holdfast ledger verify` fails, naming `subject` with `what`.
fn assert_named(env: &Env, subject: &str, what: &str) {
    let out = env.cli(&["--json", "ledger", "verify"]);
    assert!(!out.success, "differences fail the command");
    let found: Value = serde_json::from_str(&out.stdout).unwrap();
    let named = found["problems"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p.as_str().unwrap() == format!("{subject}: {what}"));
    assert!(named, "{subject}: {what} in {found}");
}

/// The loan events in the order a loan's life makes them (the receiver's order for events of
/// one instant).
const MOVES: [&str; 10] = [
    "loan.created",
    "loan.expired",
    "loan.accepted",
    "loan.paid_out",
    "loan.past_due",
    "loan.repayment",
    "loan.updated",
    "loan.repaid",
    "loan.charged_off",
    "loan.canceled",
];

/// The events `delivered`, each signature checked against `secret`, in the order they happened:
/// by time (deliveries run concurrently), and for one instant in a loan's life's order (`MOVES`).
fn in_order(delivered: &[Received], secret: &str) -> Vec<Value> {
    let mut events: Vec<Value> = delivered
        .iter()
        .map(|d| {
            verify_signature(secret, d).unwrap();
            d.json()
        })
        .collect();
    events.sort_by_key(|e| {
        let rank = MOVES.iter().position(|t| e["eventType"] == *t);
        (e["createdOn"].as_str().unwrap().to_owned(), rank)
    });
    events
}

/// Moves loan `id`'s payout `days` into the past (time travel for its 30-day minimum).
async fn paid_out_days_ago(env: &Env, id: &str, days: i64) {
    let at = (time::OffsetDateTime::now_utc() - time::Duration::days(days))
        .replace_nanosecond(0)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    env.execute_sql(&format!(
        "UPDATE loans SET paid_out_on = '{at}' WHERE id = '{id}';"
    ))
    .await;
}

/// The merchant accepts on the hosted page in Debian's Chromium (`tests/browser/loan-offer.mjs`):
/// the API then reads who accepted, from where, and the advance paid out; the books verify;
/// the dashboard's Loans page shows it (`tests/browser/dashboard-loans.mjs`).
async fn the_merchant_accepts_on_the_hosted_page(env: Env) {
    let platform = env.create_platform("Lender");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = merchant_settling_at_once(&api, key).await;
    let offered = api
        .post("/v1/loans", key, &OFFER.replace("{merchant}", &merchant))
        .await;
    assert_eq!(offered.status, StatusCode::CREATED, "{}", offered.text);
    let url = offered.body["acceptanceUrl"].as_str().unwrap();
    let path = &url[url.find("/loans/").unwrap()..];
    holdfast_e2e::browser(
        &env,
        &server,
        "loan-offer.mjs",
        &[("HOLDFAST_OFFER_PATH", path)],
    );
    let id = offered.body["id"].as_str().unwrap();
    let read = loan(&api, key, id).await;
    assert_eq!(read["state"], "paid_out", "{read}");
    assert_eq!(read["acceptance"]["by"], "merchant");
    assert_eq!(read["acceptance"]["name"], "Ada Lovelace");
    assert_eq!(read["acceptance"]["consentReference"], Value::Null);
    assert_eq!(read["acceptance"]["address"], "127.0.0.1");
    verify_clean(&env);
    holdfast_e2e::browser(
        &env,
        &server,
        "dashboard-loans.mjs",
        &[
            ("HOLDFAST_ADMIN_EMAIL", "owner@example.com"),
            ("HOLDFAST_ADMIN_PASSWORD", ADMIN_PASSWORD),
            ("HOLDFAST_LOAN_ID", id),
        ],
    );
}

/// The offer page is in attackers' hands: a post from another origin is refused, a hostile
/// name is refused in words that never repeat it and nothing is accepted, an offer past its end
/// is gone (410) and takes no acceptance, and guessing links locks the address out, even from
/// the right link.
#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
async fn the_offer_page_refuses_forgeries_hostile_names_and_guesses(env: Env) {
    let platform = env.create_platform("Lender");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
        ("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3"),
    ]);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = merchant_settling_at_once(&api, key).await;
    let offered = api
        .post("/v1/loans", key, &OFFER.replace("{merchant}", &merchant))
        .await;
    let id = offered.body["id"].as_str().unwrap().to_owned();
    let url = offered.body["acceptanceUrl"].as_str().unwrap();
    let path = url[url.find("/loans/").unwrap()..].to_owned();
    let http = reqwest::Client::new();
    let origin = server.url("");
    let post = |path: String, origin: String, fields: Vec<(&'static str, String)>| {
        let http = http.clone();
        let target = server.url(&path);
        async move {
            let answer = http
                .post(target)
                .header("origin", origin)
                .form(&fields)
                .send()
                .await
                .unwrap();
            (answer.status(), answer.text().await.unwrap())
        }
    };
    let yes = || ("agree", "yes".to_owned());
    let (status, _) = post(
        path.clone(),
        "http://evil.example".into(),
        vec![("name", "Mallory".into()), yes()],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "another origin's post");
    for hostile in [
        "Ada\u{0}Lovelace",
        "<script>alert(1)</script>\u{7}",
        "Ada \u{202e}ecalevoL",
        "   ",
    ] {
        let (status, page) = post(
            path.clone(),
            origin.trim_end_matches('/').to_owned(),
            vec![("name", hostile.to_owned()), yes()],
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{hostile:?}: {page}");
        assert!(page.contains("Your full name must"), "{page}");
        assert!(!page.contains("alert(1)"), "never repeated, escaped or not");
        assert!(!page.contains("ecalevoL"), "never repeated");
    }
    // The box not ticked: the name goes back into its field, but never a card number.
    let (status, page) = post(
        path.clone(),
        origin.trim_end_matches('/').to_owned(),
        vec![("name", "4111 1111 1111 1111".to_owned())],
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("Tick the box"), "{page}");
    assert!(
        !page.contains("4111 1111"),
        "a card number is never shown back"
    );
    assert_eq!(
        loan(&api, key, &id).await["state"],
        "offered",
        "nothing accepted"
    );
    // Its end passed (time travel): the page says so, and takes no acceptance.
    env.execute_sql(&format!(
        "UPDATE loans SET offer_expires_on = created_on WHERE id = '{id}';"
    ))
    .await;
    let ended = http.get(server.url(&path)).send().await.unwrap();
    assert_eq!(ended.status(), StatusCode::GONE);
    assert!(ended.text().await.unwrap().contains("This offer has ended"));
    let (status, _) = post(
        path.clone(),
        origin.trim_end_matches('/').to_owned(),
        vec![("name", "Ada Lovelace".to_owned()), yes()],
    )
    .await;
    assert_eq!(status, StatusCode::GONE, "an ended offer is never accepted");
    assert_eq!(loan(&api, key, &id).await["state"], "offered");
    let guess = "/loans/ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    // A form posted to a guessed link, its box unticked, is a guess like any other.
    let (status, _) = post(
        guess.to_owned(),
        origin.trim_end_matches('/').to_owned(),
        vec![("name", "Mallory".to_owned())],
    )
    .await;
    let mut answers = vec![status.as_u16()];
    for _ in 0..3 {
        let answer = http.get(server.url(guess)).send().await.unwrap();
        answers.push(answer.status().as_u16());
    }
    assert_eq!(answers, [404, 404, 404, 429]);
    let right = http.get(server.url(&path)).send().await.unwrap();
    assert_eq!(
        right.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "even a right link"
    );
}

on_both_backends!(
    the_offer_page_refuses_forgeries_hostile_names_and_guesses,
    the_merchant_accepts_on_the_hosted_page,
    a_loan_is_paid_out_and_repaid_from_settlements,
    offers_expire_minimums_fall_due_and_the_operator_charges_off
);
