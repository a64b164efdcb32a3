//! A stand-in for Adyen's Checkout API, answering in the shapes of `CheckoutService-v71.json`
//! (the contract test holds the connector to the document itself), and signing notifications
//! as Adyen does. It records every request, so what Holdfast sent is counted where it arrived.
//!
//! What a payment gets, by card number (and for refusals by amount):
//!
//! | card | answer |
//! |---|---|
//! | 4111111111111111 | `Authorised`, AVS 7 (both match), CVC 1 (match) |
//! | 4000000000000176 | `PartiallyAuthorised` for half the amount |
//! | 4000000000003220 | `RedirectShopper` (3-D Secure) |
//! | 5555555555554444 | HTTP 500, `ServiceError` (the sandbox approves it: a fallback shows) |
//! | 378282246310005 | HTTP 422, `ServiceError` errorCode 101 (the sandbox approves it too) |
//! | 4000000000000168 | `Authorised`, after the fake's `slow` delay |
//! | 4000000000000440 | no answer: the connection is closed once the request is read |
//! | 4000000000000002 | `Refused`, `refusalReasonCode` = the amount minus 20000 (amount 20012 → 12) |

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use holdfast_domain::payment::adyen::notifications::{NotificationAmount, NotificationItem};
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response};
use serde_json::{Value, json};
use tokio::net::TcpListener;

pub const API_KEY: &str = "AQEyhmfxK4PNbhZGw0m/n3Q5qf3VYp5eHZJTfEA0SnT87bnhmUuNnMR1xGVMzlp";
pub const HMAC_KEY: &str = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";
pub const MERCHANT_ACCOUNT: &str = "HoldfastECOM";
pub const NOTIFICATION_USER: &str = "adyen-notifications";
pub const NOTIFICATION_PASSWORD: &str = "notification-password";

/// A request as it reached the fake.
#[derive(Debug, Clone)]
pub struct AdyenRequest {
    pub path: String,
    pub api_key: String,
    pub idempotency_key: String,
    /// The W3C trace context sent, or empty.
    pub traceparent: String,
    pub body: Value,
}

#[derive(Debug, Default)]
struct State {
    seen: Vec<AdyenRequest>,
    next_psp: u64,
    slow: Duration,
    /// Every payment answered after this long.
    latency: Duration,
    /// Whether requests are kept for `seen` (a bench turns it off).
    forgetful: bool,
    /// Payments answered, kept or not.
    payments: u64,
}

#[derive(Debug, Clone)]
pub struct FakeAdyen {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl FakeAdyen {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/v71", listener.local_addr().expect("address"));
        let state = Arc::new(Mutex::new(State {
            next_psp: 8_815_000_000_000_000,
            slow: Duration::from_secs(5),
            ..State::default()
        }));
        let shared = state.clone();
        crate::http_server::serve(listener, move |req| respond(shared.clone(), req));
        Self { url, state }
    }

    /// How long the slow card waits.
    pub fn set_slow(&self, wait: Duration) {
        self.state.lock().unwrap().slow = wait;
    }

    /// How long every payment waits before its answer (a real processor's hundreds of ms).
    pub fn set_latency(&self, wait: Duration) {
        self.state.lock().unwrap().latency = wait;
    }

    /// Stops keeping requests (a bench's millions would fill memory); `payments` still counts.
    pub fn forget(&self) {
        self.state.lock().unwrap().forgetful = true;
    }

    /// Payments answered so far.
    pub fn payments(&self) -> u64 {
        self.state.lock().unwrap().payments
    }

    pub fn seen(&self) -> Vec<AdyenRequest> {
        self.state.lock().unwrap().seen.clone()
    }

    /// The paths requested, in order.
    pub fn paths(&self) -> Vec<String> {
        self.seen().into_iter().map(|r| r.path).collect()
    }

    /// Waits until `n` requests arrived (or `limit` passed).
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<AdyenRequest> {
        let deadline = std::time::Instant::now() + limit;
        while self.seen().len() < n && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.seen()
    }

    /// The connection body for this fake, in `mode`.
    pub fn connection_body(&self, name: &str) -> String {
        json!({
            "name": name,
            "kind": "adyen",
            "adyen": {
                "merchantAccount": MERCHANT_ACCOUNT,
                "checkoutUrl": self.url,
                "apiKey": API_KEY,
                "hmacKey": HMAC_KEY,
                "notificationUsername": NOTIFICATION_USER,
                "notificationPassword": NOTIFICATION_PASSWORD,
            }
        })
        .to_string()
    }
}

/// A notification item as Adyen sends it, signed with `key` (hex) unless `key` is `None`.
pub fn notification_item(
    event_code: &str,
    success: bool,
    psp_reference: &str,
    original_reference: Option<&str>,
    merchant_reference: &str,
    amount: i64,
    key: Option<&str>,
) -> Value {
    let item = NotificationItem {
        event_code: event_code.to_owned(),
        success: success.to_string(),
        psp_reference: psp_reference.to_owned(),
        original_reference: original_reference.map(str::to_owned),
        merchant_reference: Some(merchant_reference.to_owned()),
        merchant_account_code: MERCHANT_ACCOUNT.to_owned(),
        amount: Some(NotificationAmount {
            value: Some(amount),
            currency: Some("USD".to_owned()),
        }),
        reason: None,
        additional_data: None,
    };
    let signature = key.map(|hex| {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        item.signature(&bytes).unwrap()
    });
    let mut value = json!({
        "eventCode": item.event_code,
        "success": item.success,
        "pspReference": item.psp_reference,
        "merchantReference": merchant_reference,
        "merchantAccountCode": MERCHANT_ACCOUNT,
        "eventDate": "2026-12-05T12:00:00+01:00",
        "amount": {"value": amount, "currency": "USD"},
        "paymentMethod": "visa",
    });
    if let Some(original) = original_reference {
        value["originalReference"] = json!(original);
    }
    if let Some(signature) = signature {
        value["additionalData"] = json!({"hmacSignature": signature});
    }
    value
}

/// A notification body of `items`, from the `live` or test environment, checked against
/// Adyen's `Webhooks-v1.json` (the schema of the first item's event code) before it is sent.
pub fn notification_body(live: bool, items: &[Value]) -> String {
    let body = unchecked_body(live, items);
    if let Some(code) = items.first().and_then(|item| item["eventCode"].as_str()) {
        conforms(code, &body).unwrap_or_else(|why| panic!("not Adyen's shape for {code}: {why}"));
    }
    body
}

/// `notification_body` without the check, for bodies meant to be wrong.
pub fn unchecked_body(live: bool, items: &[Value]) -> String {
    json!({
        "live": live.to_string(),
        "notificationItems": items
            .iter()
            .map(|item| json!({"NotificationRequestItem": item}))
            .collect::<Vec<_>>(),
    })
    .to_string()
}

/// Whether `body` fits the request schema Adyen's `Webhooks-v1.json` gives event `code`, as an
/// independent validator (Python's `jsonschema`, JSON Schema 2020-12) reads it.
pub fn conforms(code: &str, body: &str) -> Result<(), String> {
    let document = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../processors/adyen/Webhooks-v1.json"
    );
    let script = "import json, sys\n\
from jsonschema import Draft202012Validator\n\
from referencing import Registry, Resource\n\
from referencing.jsonschema import DRAFT202012\n\
doc = json.load(open(sys.argv[1]))\n\
ref = doc['webhooks']['/' + sys.argv[2]]['post']['requestBody']['content']['application/json']['schema']['$ref']\n\
registry = Registry().with_resource('urn:adyen', Resource.from_contents(doc, default_specification=DRAFT202012))\n\
errors = [e.message for e in Draft202012Validator({'$ref': 'urn:adyen' + ref}, registry=registry).iter_errors(json.loads(sys.argv[3]))]\n\
print('\\n'.join(errors) if errors else 'conforms')";
    let out = std::process::Command::new("python3")
        .args(["-c", script, document, code, body])
        .output()
        .expect("python3 with jsonschema (tests/e2e/requirements.txt)");
    let said = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if said == "conforms" {
        Ok(())
    } else {
        Err(format!("{said}{}", String::from_utf8_lossy(&out.stderr)))
    }
}

type Answer = Result<Response<Full<Bytes>>, std::io::Error>;

async fn respond(state: Arc<Mutex<State>>, req: Request<hyper::body::Incoming>) -> Answer {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (api_key, idempotency_key) = (header("x-api-key"), header("idempotency-key"));
    let traceparent = header("traceparent");
    let path = req.uri().path().trim_start_matches("/v71").to_owned();
    let bytes = req.into_body().collect().await.unwrap().to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let (psp, slow, latency) = {
        let mut state = state.lock().unwrap();
        if !state.forgetful {
            state.seen.push(AdyenRequest {
                path: path.clone(),
                api_key: api_key.clone(),
                idempotency_key,
                traceparent,
                body: body.clone(),
            });
        }
        if path == "/payments" {
            state.payments += 1;
        }
        state.next_psp += 1;
        (state.next_psp.to_string(), state.slow, state.latency)
    };
    if api_key != API_KEY {
        return json_answer(
            401,
            &service_error(
                401,
                "000",
                "security",
                "HTTP Status Response - Unauthorized",
            ),
        );
    }
    if path == "/payments" {
        tokio::time::sleep(latency).await;
        return payment(&body, &psp, slow).await;
    }
    let reference = body["reference"].clone();
    let mut answer = json!({
        "merchantAccount": body["merchantAccount"],
        "pspReference": psp,
        "reference": reference,
        "status": "received",
    });
    if let Some(payment) = path
        .strip_prefix("/payments/")
        .and_then(|p| p.split('/').next())
    {
        answer["paymentPspReference"] = json!(payment);
        if !body["amount"].is_null() {
            answer["amount"] = body["amount"].clone();
        }
    } else {
        answer["paymentReference"] = body["paymentReference"].clone();
    }
    json_answer(201, &answer)
}

async fn payment(body: &Value, psp: &str, slow: Duration) -> Answer {
    let number = body["paymentMethod"]["number"].as_str().unwrap_or_default();
    let amount = body["amount"]["value"].as_i64().unwrap_or_default();
    let authorised = |extra: Value| {
        let mut answer = json!({
            "pspReference": psp,
            "resultCode": "Authorised",
            "merchantReference": body["reference"],
            "additionalData": {"avsResult": "7 Both postal code and address match", "cvcResult": "1 Matches"},
        });
        if let (Some(answer), Some(extra)) = (answer.as_object_mut(), extra.as_object()) {
            answer.extend(extra.clone());
        }
        answer
    };
    match number {
        "4000000000000176" => json_answer(
            200,
            &authorised(json!({
                "resultCode": "PartiallyAuthorised",
                "additionalData": {"authorisedAmountValue": (amount / 2).to_string(), "cvcResult": "1 Matches"},
            })),
        ),
        "4000000000003220" => json_answer(
            200,
            &json!({
                "pspReference": psp,
                "resultCode": "RedirectShopper",
                "action": {"type": "redirect", "url": "https://checkoutshopper-test.adyen.com/threeds", "method": "GET", "paymentMethodType": "scheme"},
            }),
        ),
        "5555555555554444" => json_answer(
            500,
            &service_error(500, "905", "internal", "Payment details are not supported"),
        ),
        "378282246310005" => json_answer(
            422,
            &service_error(422, "101", "validation", "Invalid card number"),
        ),
        "4000000000000168" => {
            tokio::time::sleep(slow).await;
            json_answer(200, &authorised(json!({})))
        }
        "4000000000000440" => Err(std::io::Error::other("hung up after the request")),
        "4000000000000002" => {
            let code = (amount - 20_000).to_string();
            json_answer(
                200,
                &json!({
                    "pspReference": psp,
                    "resultCode": "Refused",
                    "refusalReason": format!("refusal {code}"),
                    "refusalReasonCode": code,
                    "merchantReference": body["reference"],
                }),
            )
        }
        _ => json_answer(200, &authorised(json!({}))),
    }
}

fn service_error(status: u16, code: &str, kind: &str, message: &str) -> Value {
    json!({"status": status, "errorCode": code, "errorType": kind, "message": message})
}

#[expect(
    clippy::unnecessary_wraps,
    reason = "every answer of the service is a Result: `Err` closes the connection unanswered"
)]
fn json_answer(status: u16, body: &Value) -> Answer {
    Ok(Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap())
}
