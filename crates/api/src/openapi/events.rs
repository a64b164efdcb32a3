//! The document's `webhooks` section: one entry per event type of the catalogue, the POST a
//! subscriber receives, with the event's `data` as a JSON Schema (Standard Webhooks recommends a
//! schema per event type).

use holdfast_domain::webhook::EventType;
use serde_json::{Value, json};

/// The schema of an event's `data`. Exhaustive, so a new event type cannot go undocumented.
fn data_schema(event: EventType) -> Value {
    let reference = |name: &str| json!({ "$ref": format!("#/components/schemas/{name}") });
    match event {
        EventType::TransactionCreated | EventType::TransactionUpdated => reference("Transaction"),
        EventType::MerchantCreated | EventType::MerchantUpdated => reference("Merchant"),
        EventType::MerchantDeleted => reference("Deleted"),
        EventType::FormCreated | EventType::FormCompleted => json!({
            "type": "object",
            "required": ["id", "merchantId", "status", "submittedOn"],
            "properties": {
                "id": { "$ref": "#/components/schemas/BoardingFormId" },
                "merchantId": { "$ref": "#/components/schemas/MerchantId" },
                "status": { "type": "string", "enum": ["open", "submitted", "approved", "declined", "needs_information"] },
                "submittedOn": { "type": ["string", "null"], "format": "date-time" }
            }
        }),
        EventType::ComplianceCreated | EventType::ComplianceUpdated => json!({
            "type": "object",
            "required": ["id", "merchantId", "status", "dueOn", "attestedOn"],
            "properties": {
                "id": { "$ref": "#/components/schemas/ComplianceFormId" },
                "merchantId": { "$ref": "#/components/schemas/MerchantId" },
                "status": { "type": "string", "enum": ["pending", "attested", "overdue"] },
                "dueOn": { "type": "string", "format": "date-time" },
                "attestedOn": { "type": ["string", "null"], "format": "date-time" }
            }
        }),
        EventType::BalanceAvailable => json!({
            "type": "object",
            "required": ["merchantId", "settlementRunId", "settled"],
            "properties": {
                "merchantId": { "$ref": "#/components/schemas/MerchantId" },
                "settlementRunId": { "type": "string", "pattern": "^srun_[A-Za-z0-9]{1,64}$" },
                "settled": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "required": ["currency", "amount", "transactions"],
                        "properties": {
                            "currency": { "type": "string", "pattern": "^[A-Z]{3}$" },
                            "amount": { "type": "integer", "description": "Minor units moved from pending to available." },
                            "transactions": { "type": "integer", "minimum": 1 }
                        }
                    }
                }
            }
        }),
        EventType::PayoutCreated
        | EventType::PayoutPaid
        | EventType::PayoutFailed
        | EventType::PayoutCanceled => reference("Payout"),
        EventType::WebhookTest => json!({
            "type": "object",
            "required": ["webhookId", "message"],
            "properties": {
                "webhookId": { "$ref": "#/components/schemas/WebhookId" },
                "message": { "type": "string" }
            }
        }),
        EventType::LoanCreated
        | EventType::LoanUpdated
        | EventType::LoanAccepted
        | EventType::LoanPaidOut
        | EventType::LoanRepaid
        | EventType::LoanPastDue
        | EventType::LoanExpired
        | EventType::LoanCanceled
        | EventType::LoanChargedOff => reference("Loan"),
        EventType::LoanRepayment => json!({
            "type": "object",
            "required": ["repayment", "loan"],
            "properties": {
                "repayment": { "$ref": "#/components/schemas/LoanRepayment" },
                "loan": { "$ref": "#/components/schemas/Loan" }
            }
        }),
    }
}

fn header(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "in": "header",
        "required": true,
        "description": description,
        "schema": { "type": "string" }
    })
}

/// The security scheme of a delivery: its Standard Webhooks signature.
const SIGNATURE: &str = "webhookSignature";

/// Adds `webhooks` to the document, and the signature they carry to its security schemes.
pub fn add_webhooks(doc: &mut Value) {
    let scheme = json!({
        "type": "apiKey",
        "in": "header",
        "name": "webhook-signature",
        "description": "Standard Webhooks: `v1,<base64 HMAC-SHA256>` of `webhook-id.webhook-timestamp.body` under the subscription's signing secret (`whsec_…`). A receiver verifies it, and refuses a timestamp more than five minutes away from its clock."
    });
    // The gate's modifier made the schemes: the API keys.
    if let Some(schemes) = doc
        .pointer_mut("/components/securitySchemes")
        .and_then(Value::as_object_mut)
    {
        schemes.insert(SIGNATURE.to_owned(), scheme);
    }
    let mut hooks = serde_json::Map::new();
    for &event in EventType::ALL {
        let body = json!({
            "type": "object",
            "required": ["id", "eventId", "eventType", "createdOn", "data"],
            "properties": {
                "id": { "$ref": "#/components/schemas/NotificationId", "description": "The notification's id, also `webhook-id`; the same on every retry." },
                "eventId": { "$ref": "#/components/schemas/EventId", "description": "The event's id: the same in every notification of it, a resend's included (which has an `id` of its own), so a receiver can tell one it has seen." },
                "eventType": { "const": event.as_str() },
                "createdOn": { "type": "string", "format": "date-time" },
                "data": data_schema(event),
            }
        });
        hooks.insert(
            event.as_str().to_owned(),
            json!({
                "post": {
                    "operationId": format!("on_{}", event.as_str().replace('.', "_")),
                    "summary": event.as_str(),
                    "description": event.description(),
                    "tags": ["webhooks"],
                    // The receiver authenticates us: by the signature, under the subscription's secret.
                    "security": [{ SIGNATURE: [] }],
                    "parameters": [
                        header("webhook-id", "The notification's id: deduplicate on it."),
                        header("webhook-timestamp", "Unix seconds when this attempt was signed."),
                        header("webhook-signature", "`v1,<base64 HMAC-SHA256>` of `id.timestamp.body` under the subscription's secret; two, space-separated, during a secret's rotation overlap."),
                    ],
                    "requestBody": {
                        "required": true,
                        "content": { "application/json": { "schema": body } }
                    },
                    "responses": {
                        "2XX": { "description": "Received. Anything else, or no answer in time, is retried (spec 6.2)." }
                    }
                }
            }),
        );
    }
    doc["webhooks"] = Value::Object(hooks);
}
