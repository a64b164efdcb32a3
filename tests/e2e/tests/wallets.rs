//! Wallet tokens from outside: a Google Pay token, made the way Google makes it with keys the
//! test configures as Google's, becomes a single-use token bound to its client session and pays
//! that checkout; every wrong token is a 400 that names the field and repeats nothing.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_e2e::{Api, Env, on_both_backends};
use holdfast_wallets::apple_pay::testing as apple_pay;
use holdfast_wallets::google_pay::testing::{Issuer, Twist};
use reqwest::StatusCode;
use serde_json::json;

async fn new_merchant(api: &Api, key: &str) -> String {
    let made = api.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
    made.body["id"].as_str().unwrap().to_owned()
}

fn wallet_body(kind: &str, token: &str, secret: Option<&str>) -> String {
    let mut body = json!({"wallet": {"type": kind, "token": token}});
    if let Some(secret) = secret {
        body["clientSecret"] = json!(secret);
    }
    body.to_string()
}

async fn a_google_pay_token_pays_its_checkout(env: Env) {
    let google = Issuer::at(time::OffsetDateTime::now_utc());
    let platform = env.create_platform("Shop");
    let (_, live_public) = env.create_key(&platform.id, "public", "live");
    let server = env.serve_trusting_wallets(&google, None);
    let api = Api::new(&server);
    let (private, public) = (&platform.private_key, &platform.public_key);
    let merchant = new_merchant(&api, private).await;
    let session = api
        .post(
            "/v1/client-sessions",
            private,
            &format!(r#"{{"merchantId": "{merchant}", "amount": 1999, "paymentMethods": ["google_pay"]}}"#),
        )
        .await;
    let secret = session.body["clientSecret"].as_str().unwrap();
    // The session takes Google Pay only: typed card fields are refused under it.
    let typed = api
        .post(
            "/v1/tokens",
            public,
            &json!({"clientSecret": secret, "payment": {"number": "4111111111111111", "expiration": "1230"}}).to_string(),
        )
        .await;
    assert_eq!(typed.status, StatusCode::BAD_REQUEST, "{}", typed.text);
    assert_eq!(typed.error_param(), Some("clientSecret"));

    let made = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("google_pay", &google.token_for(&merchant), Some(secret)),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    assert_eq!(made.body["wallet"], "google_pay");
    assert_eq!(made.body["type"], "single_use");
    assert_eq!(made.body["card"]["last4"], "1111");
    let token = made.body["id"].as_str().unwrap();
    let paid = api
        .post(
            "/v1/transactions",
            private,
            &format!(r#"{{"merchantId": "{merchant}", "type": "sale", "amount": 1999, "payment": {{"token": "{token}"}}}}"#),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    assert_eq!(paid.body["state"], "settled");
    let session = api
        .get(
            &format!(
                "/v1/client-sessions/{}",
                session.body["id"].as_str().unwrap()
            ),
            private,
        )
        .await;
    assert_eq!(session.body["status"], "completed");

    one_wallet_payment_one_token_for_its_merchant(&api, &google, private, public, &merchant).await;

    // Without a session a wallet token is a plain single-use token.
    let plain = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("google_pay", &google.token_for(&merchant), None),
        )
        .await;
    assert_eq!(plain.status, StatusCode::CREATED, "{}", plain.text);

    every_wrong_wallet_token_is_refused(&api, &google, public, &live_public, &merchant).await;
    assert!(
        !server.log().contains("4111111111111111"),
        "the card reached the log"
    );
}

/// A wallet payment makes one token, and the token pays only the merchant the page asked the
/// wallet for.
async fn one_wallet_payment_one_token_for_its_merchant(
    api: &Api,
    google: &Issuer,
    private: &str,
    public: &str,
    merchant: &str,
) {
    // One wallet payment makes one token.
    let twice = google.token_for(merchant);
    let first = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("google_pay", &twice, None),
        )
        .await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.text);
    let again = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("google_pay", &twice, None),
        )
        .await;
    assert_eq!(again.error_param(), Some("wallet.token"), "{}", again.text);
    // It pays only the merchant the page asked Google Pay for.
    let other = new_merchant(api, private).await;
    let elsewhere = api
        .post(
            "/v1/transactions",
            private,
            &format!(
                r#"{{"merchantId": "{other}", "type": "sale", "amount": 1999, "payment": {{"token": "{}"}}}}"#,
                first.body["id"].as_str().unwrap()
            ),
        )
        .await;
    assert_eq!(
        elsewhere.status,
        StatusCode::BAD_REQUEST,
        "{}",
        elsewhere.text
    );
    assert_eq!(elsewhere.error_param(), Some("merchantId"));
}

/// Each refusal names its field and repeats no card.
async fn every_wrong_wallet_token_is_refused(
    api: &Api,
    google: &Issuer,
    public: &str,
    live_public: &str,
    merchant: &str,
) {
    let refusals = [
        (
            public,
            wallet_body("google_pay", &google.token(&Twist { flip_tag: true, ..Twist::default() }), None),
            "wallet.token",
        ),
        (
            public,
            wallet_body("google_pay", &Issuer::at(time::OffsetDateTime::now_utc()).token_for(merchant), None),
            "wallet.token",
        ),
        (public, wallet_body("apple_pay", "{}", None), "wallet.type"),
        (public, wallet_body("paypal", "{}", None), "wallet.type"),
        // Live mode has no Google Pay keys here: not set up.
        (live_public, wallet_body("google_pay", &google.token_for(merchant), None), "wallet.type"),
        (
            public,
            json!({"wallet": {"type": "google_pay", "token": "x"}, "payment": {"number": "4111111111111111", "expiration": "1230"}}).to_string(),
            "wallet",
        ),
    ];
    for (key, body, field) in refusals {
        let reply = api.post("/v1/tokens", key, &body).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{field}: {}",
            reply.text
        );
        assert_eq!(reply.error_param(), Some(field), "{}", reply.text);
        assert!(!reply.text.contains("4111111111111111"));
    }
    // A vault token from a public key is the wrong key type, from a wallet as from card fields
    // (spec 5.3).
    let vault = json!({"type": "vault", "wallet": {"type": "google_pay", "token": "x"}});
    let refused = api.post("/v1/tokens", public, &vault.to_string()).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.text);
    assert_eq!(refused.body["error"]["code"], "wrong_key_type");
}

/// An Apple Pay token, made the way Apple makes it with a chain the test configures as Apple's,
/// becomes a single-use token holding the device account number and its cryptogram, and pays;
/// a tampered one, or one without Apple Pay set up, is refused by name.
async fn an_apple_pay_token_pays(env: Env) {
    let apple = apple_pay::Issuer::at(time::OffsetDateTime::now_utc());
    let platform = env.create_platform("Shop");
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        (
            "HOLDFAST_APPLE_PAY_PROCESSING_KEY",
            &apple.processing_key_base64(),
        ),
        ("HOLDFAST_APPLE_PAY_MERCHANT_ID", apple_pay::MERCHANT_ID),
        ("HOLDFAST_APPLE_PAY_ROOT_CERT", &apple.root_base64()),
    ]);
    let api = Api::new(&server);
    let (private, public) = (&platform.private_key, &platform.public_key);
    let merchant = new_merchant(&api, private).await;
    let made = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("apple_pay", &apple.good_token(), None),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    assert_eq!(made.body["wallet"], "apple_pay");
    let token = made.body["id"].as_str().unwrap();
    let paid = api
        .post(
            "/v1/transactions",
            private,
            &format!(r#"{{"merchantId": "{merchant}", "type": "auth", "amount": 2500, "payment": {{"token": "{token}"}}}}"#),
        )
        .await;
    assert_eq!(paid.status, StatusCode::CREATED, "{}", paid.text);
    let tampered = apple.token(&apple_pay::Twist {
        flip_data: true,
        ..apple_pay::Twist::default()
    });
    let refused = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("apple_pay", &tampered, None),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
    assert_eq!(refused.error_param(), Some("wallet.token"));
    // Google Pay is not set up on this server.
    let google = Issuer::at(time::OffsetDateTime::now_utc());
    let not_set_up = api
        .post(
            "/v1/tokens",
            public,
            &wallet_body("google_pay", &google.token_for(&merchant), None),
        )
        .await;
    assert_eq!(not_set_up.error_param(), Some("wallet.type"));
    assert!(!server.log().contains(apple_pay::DPAN));
}

/// The domain association file Apple fetches is served exactly as configured, and is a 404
/// when none is.
async fn the_apple_pay_domain_file_is_served_as_configured(env: Env) {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), b"7B2270737049...association").unwrap();
    let path = "/.well-known/apple-developer-merchantid-domain-association";
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        (
            "HOLDFAST_APPLE_PAY_DOMAIN_ASSOCIATION",
            file.path().to_str().unwrap(),
        ),
    ]);
    let answer = reqwest::get(server.url(path)).await.unwrap();
    assert_eq!(answer.status(), StatusCode::OK);
    assert_eq!(
        answer.bytes().await.unwrap().as_ref(),
        b"7B2270737049...association"
    );
    let without = env.serve();
    let missing = reqwest::get(without.url(path)).await.unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

/// A merchant identity certificate and its key, as PEM files, issued by a CA of the test's own
/// (Apple would not take it, which is the point of the 502 below).
fn merchant_identity() -> (tempfile::NamedTempFile, tempfile::NamedTempFile) {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, apple_pay::MERCHANT_ID);
    let cert = params.self_signed(&key).unwrap();
    let (cert_file, key_file) = (
        tempfile::NamedTempFile::new().unwrap(),
        tempfile::NamedTempFile::new().unwrap(),
    );
    std::fs::write(cert_file.path(), cert.pem()).unwrap();
    std::fs::write(key_file.path(), key.serialize_pem()).unwrap();
    (cert_file, key_file)
}

const APPLE_URL: &str = "https://apple-pay-gateway-cert.apple.com/paymentservices/startSession";
const MERCHANT_SESSIONS: &str = "/v1/apple-pay/merchant-sessions";

fn validate(display: Option<&str>, url: &str) -> String {
    let mut body = json!({"validationUrl": url, "domainName": "shop.example"});
    if let Some(name) = display {
        body["displayName"] = json!(name);
    }
    body.to_string()
}

/// Merchant validation without a merchant identity certificate: a sandbox session in test mode,
/// a 400 in live mode, and every malformed request a 400 naming its field.
async fn apple_pay_merchant_validation_without_a_certificate(env: Env) {
    let platform = env.create_platform("Shop");
    let (_, live_public) = env.create_key(&platform.id, "public", "live");
    let (apple_url, path) = (APPLE_URL, MERCHANT_SESSIONS);
    let server = env.serve();
    let api = Api::new(&server);
    let sandbox = api
        .post(path, &platform.public_key, &validate(None, apple_url))
        .await;
    assert_eq!(sandbox.status, StatusCode::OK, "{}", sandbox.text);
    assert!(
        sandbox.body["merchantSessionIdentifier"]
            .as_str()
            .unwrap()
            .starts_with("SANDBOX_")
    );
    assert_eq!(sandbox.body["signature"], "sandbox");
    assert_eq!(sandbox.body["displayName"], "shop.example");
    let named = api
        .post(
            path,
            &platform.private_key,
            &validate(Some("Example Shop"), apple_url),
        )
        .await;
    assert_eq!(named.body["displayName"], "Example Shop", "{}", named.text);
    let refusals = [
        (
            &platform.public_key,
            validate(Some(""), apple_url),
            "displayName",
        ),
        (
            &platform.public_key,
            validate(Some(&"n".repeat(65)), apple_url),
            "displayName",
        ),
        (
            &platform.public_key,
            validate(None, "https://169.254.169.254/paymentservices/x"),
            "validationUrl",
        ),
        (
            &platform.public_key,
            json!({"validationUrl": apple_url}).to_string(),
            "domainName",
        ),
        (&live_public, validate(None, apple_url), "validationUrl"),
    ];
    for (key, body, field) in &refusals {
        let refused = api.post(path, key, body).await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            refused.text
        );
        assert_eq!(
            refused.error_param(),
            Some(*field),
            "{body}: {}",
            refused.text
        );
    }
}

/// With a merchant identity certificate, Apple's gateway is asked in both modes, and a gateway
/// that gives no session (here: unreachable, or refusing a certificate Apple never issued) is a
/// 502 in our words. A certificate without its key stops start-up.
async fn apple_pay_merchant_validation_with_a_certificate(env: Env) {
    let platform = env.create_platform("Shop");
    let (_, live_public) = env.create_key(&platform.id, "public", "live");
    let (apple_url, path) = (APPLE_URL, MERCHANT_SESSIONS);
    let (cert, key) = merchant_identity();
    let (cert_path, key_path) = (cert.path().to_str().unwrap(), key.path().to_str().unwrap());
    let apple = apple_pay::Issuer::at(time::OffsetDateTime::now_utc());
    let with_certificate = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        (
            "HOLDFAST_APPLE_PAY_PROCESSING_KEY",
            &apple.processing_key_base64(),
        ),
        ("HOLDFAST_APPLE_PAY_MERCHANT_ID", apple_pay::MERCHANT_ID),
        ("HOLDFAST_APPLE_PAY_ROOT_CERT", &apple.root_base64()),
        ("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT", cert_path),
        ("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY", key_path),
    ]);
    let api = Api::new(&with_certificate);
    for key in [&platform.public_key, &live_public] {
        let failed = api.post(path, key, &validate(None, apple_url)).await;
        assert_eq!(failed.status, StatusCode::BAD_GATEWAY, "{}", failed.text);
        assert_eq!(failed.body["error"]["code"], "upstream_failed");
        assert!(
            failed.body["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Apple Pay's gateway")
        );
    }
    drop(with_certificate);

    let half = env.cli(&["serve", "--apple-pay-merchant-identity-cert", cert_path]);
    assert!(!half.success);
    assert!(
        half.stderr
            .contains("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY"),
        "{}",
        half.stderr
    );
}

on_both_backends!(
    a_google_pay_token_pays_its_checkout,
    an_apple_pay_token_pays,
    the_apple_pay_domain_file_is_served_as_configured,
    apple_pay_merchant_validation_without_a_certificate,
    apple_pay_merchant_validation_with_a_certificate
);
