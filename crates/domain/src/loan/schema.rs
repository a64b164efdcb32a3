//! The loan's JSON Schema (feature `openapi`): its JSON is written by hand (`Loan`'s
//! `Serialize`, which adds what is outstanding), so its schema is too, beside it; a test
//! checks one against the other.

use serde_json::json;
use utoipa::openapi::{RefOr, Schema};

use super::{Acceptance, Loan};

/// The schema of `Loan`'s JSON.
fn loan() -> RefOr<Schema> {
    let amount = |description: &str| json!({ "type": "integer", "description": description });
    let timestamp = json!({ "type": "string", "format": "date-time", "examples": ["2026-11-24T12:00:00.000000Z"] });
    let value = json!({
        "type": "object",
        "description": "A loan to a merchant (docs/loans.md): every amount in minor units of its currency.",
        "required": ["id", "mode", "merchantId", "currency", "state", "advance", "fee",
                     "withholdRateBps", "minimumPer30Days", "total", "repaid", "outstanding",
                     "offerExpiresOn", "acceptance", "payoutId", "paidOutOn", "createdOn",
                     "updatedOn"],
        "properties": {
            "id": { "$ref": "#/components/schemas/LoanId" },
            "mode": { "type": "string", "enum": ["test", "live"] },
            "merchantId": { "$ref": "#/components/schemas/MerchantId" },
            "currency": { "type": "string", "pattern": "^[A-Z]{3}$" },
            "state": { "$ref": "#/components/schemas/LoanState" },
            "advance": { "type": "integer", "minimum": 1, "maximum": super::MAX_ADVANCE, "description": "What the merchant receives." },
            "fee": { "type": "integer", "minimum": 0, "description": "The flat fee, repaid with the advance." },
            "withholdRateBps": { "type": "integer", "minimum": 1, "maximum": super::BASIS_POINTS, "description": "The share of each settlement's net withheld, in basis points." },
            "minimumPer30Days": { "type": ["integer", "null"], "minimum": 1, "description": "What must be repaid in each 30 days from the payout; null for none." },
            "total": amount("The advance and the fee: what is repaid in all."),
            "repaid": amount("What was repaid so far."),
            "outstanding": amount("What is still owed (0 once repaid or charged off)."),
            "offerExpiresOn": timestamp,
            "acceptance": { "oneOf": [{ "$ref": "#/components/schemas/Acceptance" }, { "type": "null" }] },
            "payoutId": { "oneOf": [{ "$ref": "#/components/schemas/PayoutId" }, { "type": "null" }], "description": "The payout (method loan) of its advance, once paid out." },
            "paidOutOn": { "type": ["string", "null"], "format": "date-time" },
            "createdOn": timestamp,
            "updatedOn": timestamp,
        }
    });
    crate::schema::from_json(value)
}

impl utoipa::PartialSchema for Loan {
    fn schema() -> RefOr<Schema> {
        loan()
    }
}

impl utoipa::ToSchema for Loan {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        use utoipa::PartialSchema as _;
        schemas.extend([
            ("LoanId".to_owned(), crate::ids::LoanId::schema()),
            ("MerchantId".to_owned(), crate::ids::MerchantId::schema()),
            ("PayoutId".to_owned(), crate::ids::PayoutId::schema()),
            ("LoanState".to_owned(), super::LoanState::schema()),
            ("Acceptance".to_owned(), Acceptance::schema()),
        ]);
        <Acceptance as utoipa::ToSchema>::schemas(schemas);
    }
}
