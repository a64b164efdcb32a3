//! Merchant onboarding from outside (docs/onboarding.md): a boarding form created through the
//! API, filled in and submitted on its hosted page as a browser without JavaScript posts it,
//! `form.completed` received at a real receiver, the sandbox's decisions by test tax id, links
//! renewed and expired, a live merchant refused until an operator approves it, and the tax id
//! and account number in no response, page or database dump.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::{Answer, Api, Env, Receiver, Server, contains, on_both_backends};
use reqwest::StatusCode;
use serde_json::Value;

/// Deliveries to a local receiver, fast.
const FAST_WEBHOOKS: &[(&str, &str)] = &[
    ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
    ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
    ("HOLDFAST_WEBHOOK_TIMEOUT_MS", "400"),
    ("HOLDFAST_WEBHOOK_BACKOFF_BASE_MS", "10"),
    ("HOLDFAST_WORKER_POLL_MS", "20"),
    ("HOLDFAST_PUBLIC_URL", PUBLIC_URL),
];

const PUBLIC_URL: &str = "https://pay.example.test";

/// A tax id (EIN) and an account number nobody else uses: they must appear nowhere after.
const TAX_ID: &str = "45-8302716";
const ACCOUNT: &str = "73920184650";

/// Every answer a US form needs, with `tax_id` and [`ACCOUNT`].
fn complete(tax_id: &str) -> Vec<(&'static str, String)> {
    holdfast_e2e::BOARDING_ANSWERS
        .iter()
        .map(|&(field, value)| {
            let value = match field {
                "taxId" => tax_id,
                "accountNumber" => ACCOUNT,
                _ => value,
            };
            (field, value.to_owned())
        })
        .collect()
}

/// The hosted page as a browser without JavaScript uses it.
struct Page<'a> {
    server: &'a Server,
    path: String,
    http: reqwest::Client,
}

impl<'a> Page<'a> {
    /// The page of the form `issued` (an API answer carrying `url`).
    fn of(server: &'a Server, issued: &Value) -> Self {
        let url = issued["url"].as_str().unwrap();
        let path = url
            .strip_prefix(PUBLIC_URL)
            .expect("links start at the public URL");
        Self {
            server,
            path: path.to_owned(),
            http: reqwest::Client::new(),
        }
    }

    async fn get(&self) -> (StatusCode, String) {
        let r = self
            .http
            .get(self.server.url(&self.path))
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn post(&self, action: &str, fields: &[(&str, String)]) -> (StatusCode, String) {
        let mut form: Vec<(&str, String)> = fields.to_vec();
        form.push(("action", action.to_owned()));
        let r = self
            .http
            .post(self.server.url(&self.path))
            .form(&form)
            .send()
            .await
            .unwrap();
        (r.status(), r.text().await.unwrap())
    }

    async fn submit(&self, signer: &str) -> (StatusCode, String) {
        let fields = [
            ("signerName", signer.to_owned()),
            ("confirm", "yes".to_owned()),
        ];
        self.post("submit", &fields).await
    }
}

/// An auth of 1000 for `merchant`, whatever the answer.
async fn pay(api: &Api, key: &str, merchant: &str) -> holdfast_e2e::Reply {
    let body = holdfast_e2e::routes::AUTH_BODY.replace("{merchant}", merchant);
    api.post("/v1/transactions", key, &body).await
}

async fn new_form(api: &Api, key: &str, body: &str) -> Value {
    let made = api.post("/v1/boarding-forms", key, body).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    made.body
}

async fn merchant_status(api: &Api, key: &str, merchant: &str) -> String {
    let m = api.get(&format!("/v1/merchants/{merchant}"), key).await;
    m.body["onboardingStatus"].as_str().unwrap().to_owned()
}

/// A merchant boarded in test mode: the page saves over visits, refuses a bad answer naming it
/// without repeating it, reviews, submits; the sandbox approves; `form.created`,
/// `form.completed` and `merchant.updated` reach the receiver; the secrets show only as their
/// last four anywhere, and appear in no row of the database.
async fn a_merchant_boards_through_the_hosted_page(env: Env) {
    let platform = env.create_platform("Acme");
    let receiver = Receiver::start(Answer::status(200)).await;
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let hook = format!(
        r#"{{"endpointUrl": "{}", "events": ["form.created", "form.completed", "merchant.updated"]}}"#,
        receiver.url
    );
    let subscribed = api.post("/v1/webhooks", key, &hook).await;
    assert_eq!(subscribed.status, StatusCode::CREATED);
    let secret = subscribed.body["secret"].as_str().unwrap().to_owned();
    let issued = new_form(&api, key, r#"{"merchant": {"name": "Corner Shop"}}"#).await;
    assert_eq!(issued["status"], "open");
    let (form, merchant) = (
        issued["id"].as_str().unwrap(),
        issued["merchantId"].as_str().unwrap(),
    );
    assert_eq!(merchant_status(&api, key, merchant).await, "not_started");
    let page = Page::of(&server, &issued);
    let (status, html) = page.get().await;
    assert_eq!(
        (status, html.contains("Tell us about your business")),
        (StatusCode::OK, true)
    );

    let (status, _) = page
        .post("save", &[("legalName", "Corner Shop LLC".into())])
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(merchant_status(&api, key, merchant).await, "in_progress");
    let wrong = "98-765";
    let (status, html) = page
        .post("save", &[("country", "US".into()), ("taxId", wrong.into())])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        html.contains("Tax id</a>: must be an EIN") && !html.contains(wrong),
        "named, not repeated"
    );
    let (status, html) = page.post("review", &complete(TAX_ID)).await;
    assert_eq!(status, StatusCode::OK, "{html}");
    assert!(html.contains("ending in 2716") && html.contains("Corner Shop LLC"));
    let (status, html) = page.submit("Ada Lovelace").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("approved"), "{html}");

    let read = api.get(&format!("/v1/boarding-forms/{form}"), key).await;
    let f = &read.body;
    assert_eq!(
        (f["status"].as_str(), f["taxIdLast4"].as_str()),
        (Some("approved"), Some("2716"))
    );
    assert_eq!(f["bankAccountLast4"], "4650");
    assert_eq!(f["submittedBy"], "Ada Lovelace");
    assert!(f.get("url").is_none(), "the link is shown once");
    assert_eq!(merchant_status(&api, key, merchant).await, "approved");

    let got = receiver.wait_for(5, Duration::from_secs(20)).await;
    let types: Vec<String> = got
        .iter()
        .map(|r| r.json()["eventType"].as_str().unwrap().to_owned())
        .collect();
    let completed_request = got
        .iter()
        .find(|r| r.json()["eventType"] == "form.completed")
        .unwrap();
    holdfast_e2e::verify_signature(&secret, completed_request).expect("a valid signature");
    let completed = completed_request.json();
    assert_eq!(completed["data"]["id"], form, "{types:?}");
    assert_eq!(
        (
            completed["data"]["merchantId"].as_str(),
            completed["data"]["status"].as_str()
        ),
        (Some(merchant), Some("submitted"))
    );
    assert!(completed["data"]["submittedOn"].is_string());
    for t in ["form.created", "form.completed", "merchant.updated"] {
        assert!(types.iter().any(|x| x == t), "{t}: {types:?}");
    }
    let dump = env.dump().await;
    for secret in [TAX_ID, "458302716", ACCOUNT] {
        assert!(
            !contains(&dump, secret.as_bytes()),
            "{secret} is in the database"
        );
        assert!(!server.log().contains(secret), "{secret} is in the log");
    }
}

/// The sandbox declines and asks for more by its documented test tax ids; a form asked for more
/// opens again, names the field, and goes back to underwriting when submitted again.
async fn the_sandbox_decides_by_test_tax_id(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    for (tax_id, form_status, merchant) in [
        ("99-0000002", "declined", "declined"),
        ("99-0000003", "needs_information", "needs_information"),
    ] {
        let issued = new_form(&api, key, r#"{"merchant": {"name": "Shop"}}"#).await;
        let page = Page::of(&server, &issued);
        assert_eq!(page.post("save", &complete(tax_id)).await.0, StatusCode::OK);
        let (status, html) = page.submit("Ada Lovelace").await;
        assert_eq!(status, StatusCode::OK);
        let id = issued["id"].as_str().unwrap();
        let read = api.get(&format!("/v1/boarding-forms/{id}"), key).await;
        assert_eq!(read.body["status"], form_status, "{tax_id}");
        let mid = issued["merchantId"].as_str().unwrap();
        assert_eq!(merchant_status(&api, key, mid).await, merchant);
        if form_status == "needs_information" {
            assert_eq!(read.body["requestedFields"], serde_json::json!(["website"]));
            assert!(
                html.contains("Please check: Website."),
                "the page names the field: {html}"
            );
            let fixed = [
                ("website", "https://corner.example.org".to_owned()),
                ("taxId", "12-3456789".to_owned()),
            ];
            assert_eq!(page.post("save", &fixed).await.0, StatusCode::OK);
            assert_eq!(page.submit("Ada Lovelace").await.0, StatusCode::OK);
            let again = api.get(&format!("/v1/boarding-forms/{id}"), key).await;
            assert_eq!(again.body["status"], "approved");
        }
    }
}

/// A renewed link replaces the old one; an expired link is refused; a submitted form takes no
/// more answers.
async fn links_are_renewed_expire_and_close(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let shop = api.shop(key).await;
    let issued = new_form(&api, key, &format!(r#"{{"merchantId": "{shop}"}}"#)).await;
    let old = Page::of(&server, &issued);
    let id = issued["id"].as_str().unwrap();
    let renewed = api
        .post(&format!("/v1/boarding-forms/{id}/link"), key, "")
        .await;
    assert_eq!(renewed.status, StatusCode::OK, "{}", renewed.text);
    let new = Page::of(&server, &renewed.body);
    assert_eq!(old.get().await.0, StatusCode::NOT_FOUND, "the old link");
    assert_eq!(new.get().await.0, StatusCode::OK);
    let guessed = Page {
        path: "/onboarding/ABCDEFGHIJKLMNOPQRSTUVWXYZ".into(),
        ..Page::of(&server, &renewed.body)
    };
    assert_eq!(guessed.get().await.0, StatusCode::NOT_FOUND);

    env.execute_sql(&format!(
        "UPDATE boarding_forms SET expires_on = '2020-01-01T00:00:00Z' WHERE id = '{id}'"
    ))
    .await;
    assert_eq!(new.get().await.0, StatusCode::GONE, "expired");
    let fresh = api
        .post(&format!("/v1/boarding-forms/{id}/link"), key, "")
        .await;
    let page = Page::of(&server, &fresh.body);
    assert_eq!(
        page.post("save", &complete(TAX_ID)).await.0,
        StatusCode::OK,
        "kept over the renewal"
    );
    assert_eq!(page.submit("Ada Lovelace").await.0, StatusCode::OK);
    let (status, _) = page.post("save", &[("city", "Shelbyville".into())]).await;
    assert_eq!(
        status,
        StatusCode::CONFLICT,
        "a decided form takes no more answers"
    );
}

/// A live merchant is refused live payments until an operator approves its submitted form;
/// after approval the onboarding refusal is gone (live payments then need a live processor
/// connection, which this build has none of).
async fn a_live_merchant_is_paid_only_once_approved(env: Env) {
    let platform = env.create_platform("Acme");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let shop = api.shop(&live).await;
    let refused = pay(&api, &live, &shop).await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert_eq!(refused.error_param(), Some("merchantId"));
    assert!(
        refused.text.contains("onboarding status is not_started"),
        "{}",
        refused.text
    );

    let issued = new_form(&api, &live, &format!(r#"{{"merchantId": "{shop}"}}"#)).await;
    let page = Page::of(&server, &issued);
    assert_eq!(page.post("save", &complete(TAX_ID)).await.0, StatusCode::OK);
    let (status, html) = page.submit("Ada Lovelace").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("submitted and waiting"),
        "live forms wait for an operator"
    );
    let id = issued["id"].as_str().unwrap();
    let still = pay(&api, &live, &shop).await;
    assert!(
        still.text.contains("onboarding status is submitted"),
        "{}",
        still.text
    );

    let decided = env.cli_json(&["boarding", "approve", "--platform", &platform.id, id]);
    assert_eq!(decided["status"], "approved");
    assert_eq!(merchant_status(&api, &live, &shop).await, "approved");
    let after = pay(&api, &live, &shop).await;
    // Past the gate, the payment meets the next rule: no live plan or processor here.
    assert_eq!(
        (after.status, after.error_param()),
        (StatusCode::BAD_REQUEST, Some("merchantId"))
    );
    assert!(!after.text.contains("onboarding"), "{}", after.text);
    let again = env.cli(&[
        "boarding",
        "decline",
        "--platform",
        &platform.id,
        id,
        "--reason",
        "late",
    ]);
    assert!(
        !again.success && again.stderr.contains("only a submitted form"),
        "{}",
        again.stderr
    );
}

/// The hosted page in Debian's Chromium (`tests/browser/onboarding.mjs`): filled over two
/// visits, on a desktop and a phone, submitted; the API then reads it approved.
async fn the_hosted_page_in_a_browser(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let issued = new_form(&api, key, r#"{"merchant": {"name": "Corner Shop"}}"#).await;
    let page = Page::of(&server, &issued);
    holdfast_e2e::browser(
        &env,
        &server,
        "onboarding.mjs",
        &[("HOLDFAST_FORM_PATH", &page.path)],
    );
    let id = issued["id"].as_str().unwrap();
    let read = api.get(&format!("/v1/boarding-forms/{id}"), key).await;
    assert_eq!(read.body["status"], "approved");
    assert_eq!(read.body["submittedBy"], "Ada Lovelace");
}

/// SAQ A for a merchant whose cards came only through tokens, D once a payment carried a raw
/// card number; the attestation refused without agreement (naming `agreed`), recorded with its
/// signer once, printable, and not made twice; a pending form past its due date reads overdue.
async fn an_approved_merchant_attests_its_compliance(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let fresh = api.shop(key).await;
    let none = api
        .get(&format!("/v1/merchants/{fresh}/compliance"), key)
        .await;
    assert_eq!(none.status, StatusCode::NOT_FOUND, "not approved yet");

    let merchant = api.approved_merchant(key).await;
    let path = format!("/v1/merchants/{merchant}/compliance");
    let form = api.get(&path, key).await;
    assert_eq!(form.status, StatusCode::OK, "{}", form.text);
    assert_eq!(
        (form.body["saqType"].as_str(), form.body["status"].as_str()),
        (Some("A"), Some("pending"))
    );
    assert!(form.body["questions"].as_array().unwrap().len() >= 6);
    // A card tokenized with the public key (as the hosted fields do) keeps it SAQ A.
    let token = api
        .post(
            "/v1/tokens",
            &platform.public_key,
            holdfast_e2e::routes::TOKEN_BODY,
        )
        .await;
    assert_eq!(token.status, StatusCode::CREATED, "{}", token.text);
    let by_token = format!(
        r#"{{"merchantId": "{merchant}", "type": "sale", "amount": 500, "payment": {{"token": "{}"}}}}"#,
        token.body["id"].as_str().unwrap()
    );
    let paid = api.post("/v1/transactions", key, &by_token).await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(
        api.get(&path, key).await.body["saqType"],
        "A",
        "only a token"
    );
    let paid = pay(&api, key, &merchant).await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(
        api.get(&path, key).await.body["saqType"],
        "D",
        "a raw card number was sent"
    );

    let refused = api
        .post(
            &format!("{path}/attest"),
            key,
            r#"{"name": "Ada Lovelace", "title": "Director", "agreed": false}"#,
        )
        .await;
    assert_eq!(
        (refused.status, refused.error_param()),
        (StatusCode::BAD_REQUEST, Some("agreed"))
    );
    let attested = api
        .post(
            &format!("{path}/attest"),
            key,
            holdfast_e2e::routes::ATTEST_BODY,
        )
        .await;
    assert_eq!(attested.status, StatusCode::OK, "{}", attested.text);
    let a = &attested.body;
    assert_eq!(
        (a["status"].as_str(), a["attestation"]["name"].as_str()),
        (Some("attested"), Some("Ada Lovelace"))
    );
    assert_eq!(a["attestation"]["saqType"], "D");
    let again = api
        .post(
            &format!("{path}/attest"),
            key,
            holdfast_e2e::routes::ATTEST_BODY,
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT);
    let printable = api.get(&format!("{path}/attestation"), key).await;
    assert_eq!(printable.status, StatusCode::OK);
    assert!(printable.text.contains("Ada Lovelace, Director") && printable.text.contains("SAQ D"));

    let other = api.approved_merchant(key).await;
    env.execute_sql(&format!(
        "UPDATE compliance_forms SET due_on = '2020-01-01T00:00:00Z' WHERE merchant_id = '{other}'"
    ))
    .await;
    let late = api
        .get(&format!("/v1/merchants/{other}/compliance"), key)
        .await;
    assert_eq!(late.body["status"], "overdue");
}

/// The upkeep, by time travel through `--as-of`: 91 days on, the pending form is overdue (the
/// status is written, with `compliance.updated`); a year on, the merchant has a new pending
/// form with a new id, due 90 days later (`compliance.created`).
async fn compliance_forms_go_overdue_and_renew_each_year(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let merchant = api.approved_merchant(key).await;
    let path = format!("/v1/merchants/{merchant}/compliance");
    let first = api.get(&path, key).await.body;
    let later = |days: i64| {
        (time::OffsetDateTime::now_utc() + time::Duration::days(days))
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let done = env.cli_json(&["compliance", "maintain", "--as-of", &later(91)]);
    assert_eq!(
        (done["overdue"].as_u64(), done["renewed"].as_u64()),
        (Some(1), Some(0))
    );
    let stored = env
        .query_text(&format!(
            "SELECT status FROM compliance_forms WHERE merchant_id = '{merchant}'"
        ))
        .await;
    assert_eq!(
        stored,
        [[Some("overdue".to_owned())]],
        "written, not only read"
    );
    let done = env.cli_json(&["compliance", "maintain", "--as-of", &later(366)]);
    assert_eq!(done["renewed"], 1);
    let second = api.get(&path, key).await.body;
    assert_ne!(second["id"], first["id"]);
    assert_eq!(second["status"], "pending");
    let again = env.cli_json(&["compliance", "maintain", "--as-of", &later(366)]);
    assert_eq!(again["renewed"], 0, "one new form a year");
    let events = env
        .query_text(&format!(
            "SELECT event_type FROM events WHERE subject_id LIKE 'cf_%' AND platform_id = '{}' ORDER BY id",
            platform.id
        ))
        .await;
    let types: Vec<&str> = events.iter().filter_map(|r| r[0].as_deref()).collect();
    assert_eq!(
        types,
        [
            "compliance.created",
            "compliance.updated",
            "compliance.created"
        ]
    );
}

/// A live merchant's form, filled and submitted on its page: its id and the merchant's.
async fn submitted_live_form(api: &Api, server: &Server, live: &str) -> (String, String) {
    let shop = api.shop(live).await;
    let issued = new_form(api, live, &format!(r#"{{"merchantId": "{shop}"}}"#)).await;
    let page = Page::of(server, &issued);
    assert_eq!(page.post("save", &complete(TAX_ID)).await.0, StatusCode::OK);
    assert_eq!(page.submit("Ada Lovelace").await.0, StatusCode::OK);
    (issued["id"].as_str().unwrap().to_owned(), shop)
}

/// Submitted live forms decided in the dashboard by an admin in live mode: each kind of
/// decision, each refused in words without what makes it (a reason, a field), and none in
/// the test mode, where the live form does not exist.
async fn live_forms_are_decided_in_the_dashboard(env: Env) {
    use holdfast_e2e::dashboard::{ADMIN_PASSWORD, Pages, client, set_password, sign_in};
    let platform = env.create_platform("Acme");
    set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let token = pages.token(&admin).await;
    let decide = |id: &str, fields: &[(&'static str, &'static str)]| {
        let mut form = vec![("csrf", token.clone())];
        form.extend(fields.iter().map(|(k, v)| (*k, (*v).to_owned())));
        let (pages, admin, path) = (&pages, &admin, format!("/dashboard/boarding/{id}/decide"));
        async move {
            let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let answer = pages.send("POST", &path, Some(admin), &form).await;
            (answer.status(), answer.text().await.unwrap())
        }
    };
    let (first, shop) = submitted_live_form(&api, &server, &live).await;
    let (status, _) = decide(&first, &[("decision", "approve")]).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the test mode has no such form"
    );

    let to_live = [
        ("csrf", token.as_str()),
        ("mode", "live"),
        ("back", "/dashboard/boarding"),
    ];
    pages
        .send("POST", "/dashboard/mode", Some(&admin), &to_live)
        .await;
    let listed = pages
        .send("GET", "/dashboard/boarding", Some(&admin), &[])
        .await;
    let html = listed.text().await.unwrap();
    assert!(
        html.contains(&first) && html.contains("Record the decision"),
        "{html}"
    );
    for (fields, refusal) in [
        (
            &[("decision", "request_information"), ("reason", "More")][..],
            "Fields to answer again: must name",
        ),
        (
            &[("decision", "request_information"), ("ask_website", "yes")][..],
            "Reason: ",
        ),
        (&[("decision", "decline"), ("reason", " ")][..], "Reason: "),
    ] {
        let (status, html) = decide(&first, fields).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{fields:?}");
        assert!(html.contains(refusal), "{refusal}: {html}");
    }
    let (status, _) = decide(&first, &[("decision", "approve")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(merchant_status(&api, &live, &shop).await, "approved");
    let (status, html) = decide(&first, &[("decision", "approve")]).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        html.contains("only a submitted form can be decided"),
        "{html}"
    );

    let (second, declined) = submitted_live_form(&api, &server, &live).await;
    let no = [
        ("decision", "decline"),
        ("reason", "We cannot support this business."),
    ];
    assert_eq!(decide(&second, &no).await.0, StatusCode::SEE_OTHER);
    assert_eq!(merchant_status(&api, &live, &declined).await, "declined");
    let (third, asked) = submitted_live_form(&api, &server, &live).await;
    let more = [
        ("decision", "request_information"),
        ("reason", "The website does not load."),
        ("ask_website", "yes"),
    ];
    assert_eq!(decide(&third, &more).await.0, StatusCode::SEE_OTHER);
    assert_eq!(
        merchant_status(&api, &live, &asked).await,
        "needs_information"
    );
    let read = api.get(&format!("/v1/boarding-forms/{third}"), &live).await;
    assert_eq!(read.body["requestedFields"], serde_json::json!(["website"]));
}

/// Under an `Idempotency-Key`, the first answer carries the link and a replay the same form
/// without it: the link's secret is stored nowhere, not even for the replay.
async fn a_replayed_creation_carries_no_link(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let body = r#"{"merchant": {"name": "Corner Shop"}}"#;
    let first = api
        .post_once("/v1/boarding-forms", key, "board-1", body)
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    let url = first.body["url"].as_str().unwrap().to_owned();
    let again = api
        .post_once("/v1/boarding-forms", key, "board-1", body)
        .await;
    assert_eq!(again.status, StatusCode::CREATED);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.body["id"], first.body["id"]);
    assert!(again.body.get("url").is_none(), "{}", again.text);
    let secret = url.rsplit('/').next().unwrap();
    assert!(
        !contains(&env.dump().await, secret.as_bytes()),
        "the link is stored nowhere"
    );
}

/// An approved merchant takes no new form (it would stop its live payments); a country
/// changed after the tax id and bank account were saved drops them, so they are asked for
/// again under the new country's rules; a submission without the confirmation is refused
/// naming it, and the page keeps no refused answer.
async fn a_form_keeps_to_its_merchant_and_its_country(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve_with(FAST_WEBHOOKS);
    let api = Api::new(&server);
    let key = &platform.private_key;
    let approved = api.approved_merchant(key).await;
    let again = api
        .post(
            "/v1/boarding-forms",
            key,
            &format!(r#"{{"merchantId": "{approved}"}}"#),
        )
        .await;
    assert_eq!(
        (again.status, again.error_param()),
        (StatusCode::CONFLICT, Some("merchantId"))
    );

    let issued = new_form(&api, key, r#"{"merchant": {"name": "Shop"}}"#).await;
    let page = Page::of(&server, &issued);
    assert_eq!(page.post("save", &complete(TAX_ID)).await.0, StatusCode::OK);
    let (status, html) = page.post("review", &[("country", "DE".into())]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !html.contains("ending in 2716") && !html.contains("021000021"),
        "{html}"
    );
    let (status, html) = page.submit("Ada Lovelace").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    for needed in ["Tax id</a>: is needed", "IBAN</a>: is needed"] {
        assert!(html.contains(needed), "{needed}: {html}");
    }
    let unconfirmed = [("signerName", "Ada Lovelace".to_owned())];
    let (status, html) = page.post("submit", &unconfirmed).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(html.contains("Confirmation</a>: must be ticked"), "{html}");
    // A refused answer is put back beside its error, to be mended; one that may hold a card
    // number is not (a card pasted into the wrong field is never echoed).
    let refused_site = "http://corner.example.com";
    let (status, html) = page.post("save", &[("website", refused_site.into())]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        html.contains(&format!(r#"value="{refused_site}""#))
            && html.contains(r#"id="website-error""#),
        "a refused answer is kept beside its error: {html}"
    );
    let pasted_card = "4111 1111 1111 1111";
    let (status, html) = page.post("save", &[("website", pasted_card.into())]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        !html.contains("4111 1111") && !html.contains("4111111111111111"),
        "a card number is never put back"
    );
}

/// Guessing links from one address: after its budget the address is refused with 429 and
/// Retry-After, even on a real link, by GET as by POST; a POST from another site is 403.
async fn link_guessing_locks_out_an_address(env: Env) {
    let platform = env.create_platform("Acme");
    let mut vars = FAST_WEBHOOKS.to_vec();
    vars.push(("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3"));
    let server = env.serve_with(&vars);
    let api = Api::new(&server);
    let issued = new_form(
        &api,
        &platform.private_key,
        r#"{"merchant": {"name": "Shop"}}"#,
    )
    .await;
    let real = Page::of(&server, &issued);
    let forged = real
        .http
        .post(server.url(&real.path))
        .header("origin", "http://evil.example")
        .form(&[("action", "save"), ("city", "Nowhere")])
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    let guess = Page {
        path: "/onboarding/ABCDEFGHIJKLMNOPQRSTUVWXYZ".into(),
        ..Page::of(&server, &issued)
    };
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(guess.get().await.0.as_u16());
    }
    assert_eq!(answers, [404, 404, 404, 429]);
    let right = real.http.get(server.url(&real.path)).send().await.unwrap();
    assert_eq!(
        right.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "even a right link"
    );
    assert!(right.headers().contains_key("retry-after"));
    assert_eq!(
        real.post("save", &[("city", "Springfield".into())]).await.0,
        StatusCode::TOO_MANY_REQUESTS
    );
}

on_both_backends!(
    a_form_keeps_to_its_merchant_and_its_country,
    link_guessing_locks_out_an_address,
    a_replayed_creation_carries_no_link,
    live_forms_are_decided_in_the_dashboard,
    compliance_forms_go_overdue_and_renew_each_year,
    an_approved_merchant_attests_its_compliance,
    the_hosted_page_in_a_browser,
    a_merchant_boards_through_the_hosted_page,
    the_sandbox_decides_by_test_tax_id,
    links_are_renewed_expire_and_close,
    a_live_merchant_is_paid_only_once_approved,
);
