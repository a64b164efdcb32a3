//! A small typed HTTP client for the API.

use reqwest::header::HeaderMap;
use reqwest::{Client, Method, StatusCode};
use serde_json::Value;

use crate::Server;

#[derive(Debug, Clone)]
pub struct Api {
    client: Client,
    base_url: String,
}

/// A response: status, headers and the body as JSON (`Value::Null` when empty or not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Reply {
    /// The error body without its per-request id, for comparing two refusals.
    pub fn error_without_request_id(&self) -> Value {
        let mut body = self.body.clone();
        if let Some(error) = body.get_mut("error").and_then(Value::as_object_mut) {
            error.remove("requestId");
        }
        body
    }

    pub fn error_param(&self) -> Option<&str> {
        self.body["error"]["param"].as_str()
    }
}

impl Api {
    pub fn new(server: &Server) -> Self {
        Self {
            client: Client::new(),
            base_url: server.base_url.clone(),
        }
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<&str>,
    ) -> Reply {
        self.send_with(method, path, key, body, &[]).await
    }

    /// `send` with these headers too.
    pub async fn send_with(
        &self,
        method: Method,
        path: &str,
        key: Option<&str>,
        body: Option<&str>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut request = self
            .client
            .request(method, format!("{}{path}", self.base_url));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(key) = key {
            request = request.header("x-api-key", key);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        let response = request.send().await.expect("request sent");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            text,
        }
    }

    /// Posts `fields` as a browser's form to `path` (a hosted page, no key); the status.
    pub async fn post_form(&self, path: &str, fields: &[(&str, &str)]) -> StatusCode {
        self.client
            .post(format!("{}{path}", self.base_url))
            .form(fields)
            .send()
            .await
            .expect("request sent")
            .status()
    }

    /// A test-mode merchant boarded through its hosted form, which the sandbox approves: its
    /// id. Its cards have only ever come through tokens (none yet): SAQ A.
    pub async fn approved_merchant(&self, key: &str) -> String {
        self.approved_merchant_paid_to(key, "000123456789").await
    }

    /// A merchant the sandbox approved through its boarding form, whose payouts go to bank
    /// account `account` (the sandbox bank answers by it, docs/money.md).
    pub async fn approved_merchant_paid_to(&self, key: &str, account: &str) -> String {
        let made = self
            .post(
                "/v1/boarding-forms",
                key,
                r#"{"merchant": {"name": "Boarded"}}"#,
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
        let url = made.body["url"].as_str().expect("a url");
        let path = &url[url.find("/onboarding/").expect("a hosted page")..];
        let mut answers: Vec<(&str, &str)> = crate::BOARDING_ANSWERS
            .iter()
            .map(|&(name, value)| {
                (
                    name,
                    if name == "accountNumber" {
                        account
                    } else {
                        value
                    },
                )
            })
            .collect();
        answers.push(("action", "save"));
        assert_eq!(self.post_form(path, &answers).await, StatusCode::OK);
        let submit = [
            ("action", "submit"),
            ("signerName", "Ada Lovelace"),
            ("confirm", "yes"),
        ];
        assert_eq!(self.post_form(path, &submit).await, StatusCode::OK);
        made.body["merchantId"].as_str().expect("an id").to_owned()
    }

    pub async fn get(&self, path: &str, key: &str) -> Reply {
        self.send(Method::GET, path, Some(key), None).await
    }

    pub async fn post(&self, path: &str, key: &str, body: &str) -> Reply {
        self.send(Method::POST, path, Some(key), Some(body)).await
    }

    pub async fn put(&self, path: &str, key: &str, body: &str) -> Reply {
        self.send(Method::PUT, path, Some(key), Some(body)).await
    }

    pub async fn patch(&self, path: &str, key: &str, body: &str) -> Reply {
        self.send(Method::PATCH, path, Some(key), Some(body)).await
    }

    pub async fn delete(&self, path: &str, key: &str) -> Reply {
        self.send(Method::DELETE, path, Some(key), None).await
    }

    /// Merchant "Shop", created with `key`; its id.
    pub async fn shop(&self, key: &str) -> String {
        let made = self.post("/v1/merchants", key, r#"{"name": "Shop"}"#).await;
        assert_eq!(made.status, reqwest::StatusCode::CREATED, "{}", made.text);
        made.body["id"].as_str().expect("an id").to_owned()
    }

    /// An auth of 1000 with the sandbox's approving Visa for `merchant`: the transaction, as
    /// answered (201).
    pub async fn auth(&self, key: &str, merchant: &str) -> Value {
        let body = format!(
            r#"{{"merchantId": "{merchant}", "type": "auth", "amount": 1000, "payment": {{"number": "4111111111111111", "cvv": "123", "expiration": "1230"}}}}"#
        );
        let paid = self.post("/v1/transactions", key, &body).await;
        assert_eq!(paid.status, reqwest::StatusCode::CREATED, "{}", paid.text);
        paid.body
    }

    /// A POST with an `Idempotency-Key`.
    pub async fn post_once(
        &self,
        path: &str,
        key: &str,
        idempotency_key: &str,
        body: &str,
    ) -> Reply {
        let response = self
            .client
            .post(format!("{}{path}", self.base_url))
            .header("x-api-key", key)
            .header("idempotency-key", idempotency_key)
            .header("content-type", "application/json")
            .body(body.to_owned())
            .send()
            .await
            .expect("request sent");
        let status = response.status();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body read");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
            text,
        }
    }
}
