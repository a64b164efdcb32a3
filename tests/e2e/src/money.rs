//! What the money tests share (payouts, loans): a merchant on a plan that settles at once and
//! takes no fee, a sale settled by `holdfast ledger settle`, its balances read through the
//! API, and the books checked by `holdfast ledger verify`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::{Api, Env};

const CARD: &str = r#"{"number": "4111111111111111", "cvv": "123", "expiration": "1230"}"#;

/// A plan settling at once, free of fees, and `merchant` moved onto it.
pub async fn settle_at_once(api: &Api, key: &str, merchant: &str) {
    let connections = api.get("/v1/processor-connections", key).await;
    let plan = api
        .post(
            "/v1/plans",
            key,
            &json!({"name": "At once", "fee": {"basisPoints": 0, "fixed": 0},
                    "defaultConnectionId": connections.body["data"][0]["id"],
                    "settlementDelayDays": 0})
            .to_string(),
        )
        .await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    put_on_plan(api, key, merchant, &plan.body["id"]).await;
}

/// `merchant` moved onto plan `plan` (its id).
pub async fn put_on_plan(api: &Api, key: &str, merchant: &str, plan: &Value) {
    let moved = api
        .patch(
            &format!("/v1/merchants/{merchant}"),
            key,
            &json!({"planId": plan}).to_string(),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.text);
}

/// A new merchant of `key`'s platform on a plan that settles at once (`settle_at_once`).
pub async fn merchant_settling_at_once(api: &Api, key: &str) -> String {
    let merchant = api.shop(key).await;
    settle_at_once(api, key, &merchant).await;
    merchant
}

/// A sale of `amount` for `merchant`, settled by `holdfast ledger settle` (its plan must settle
/// at once).
pub async fn settled_sale(env: &Env, api: &Api, key: &str, merchant: &str, amount: i64) {
    let sale = api
        .post(
            "/v1/transactions",
            key,
            &format!(
                r#"{{"merchantId": "{merchant}", "type": "sale", "amount": {amount}, "payment": {CARD}}}"#
            ),
        )
        .await;
    assert_eq!(sale.status, StatusCode::CREATED, "{}", sale.text);
    assert_eq!(env.cli_json(&["ledger", "settle"])["transactions"], 1);
}

/// `merchant`'s balance in its one currency as `[available, pending, inTransit]`.
pub async fn balance(api: &Api, key: &str, merchant: &str) -> Value {
    let read = api
        .get(&format!("/v1/balances?merchantId={merchant}"), key)
        .await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.text);
    let b = &read.body["balances"][0];
    json!([b["available"], b["pending"], b["inTransit"]])
}

/// `holdfast ledger verify` finds nothing.
pub fn verify_clean(env: &Env) {
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));
}
