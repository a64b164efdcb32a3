//! Adyen's Checkout API v71 on the wire: the bodies Holdfast sends, in the shapes of
//! `CheckoutService-v71.json`, and the parts of its answers Holdfast reads. Fields a card
//! payment does not need are left out; an answer's unknown fields are ignored (Adyen adds
//! fields within a version).

use std::collections::BTreeMap;

use holdfast_domain::payment::adyen::AdyenAccount;
use holdfast_domain::payment::adyen::answers::PaymentResult;
use holdfast_domain::payment::card::{CardholderName, Cvv};
use holdfast_domain::ports::{CardData, ProcessorOp, ProcessorRequest};
use serde::{Deserialize, Serialize};

/// One HTTP call to Adyen: where, under which idempotency key, with what body.
#[derive(Clone)]
pub struct Call {
    /// The path below the connection's Checkout URL, such as `/payments`.
    pub path: String,
    /// Adyen's `Idempotency-Key`.
    pub idempotency_key: String,
    /// The JSON body.
    pub body: String,
    /// Whether Adyen answers it as a payment (200) rather than a modification (201).
    pub is_payment: bool,
}

impl std::fmt::Debug for Call {
    /// Never the body: it carries card data.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("path", &self.path)
            .field("idempotency_key", &self.idempotency_key)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize)]
struct Amount<'a> {
    currency: &'a str,
    value: i64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PaymentRequest<'a> {
    amount: Amount<'a>,
    merchant_account: &'a str,
    reference: &'a str,
    return_url: &'a str,
    payment_method: CardDetails<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mpi_data: Option<ThreeDSecureData<'a>>,
    shopper_interaction: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    capture_delay_hours: Option<i32>,
    additional_data: BTreeMap<&'static str, &'static str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CardDetails<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    number: &'a str,
    expiry_month: String,
    expiry_year: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cvc: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    holder_name: Option<&'a str>,
}

/// A wallet's device token: its cryptogram as the token authentication verification value.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ThreeDSecureData<'a> {
    token_authentication_verification_value: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    eci: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ModificationRequest<'a> {
    merchant_account: &'a str,
    reference: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    amount: Option<Amount<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CancelByReference<'a> {
    merchant_account: &'a str,
    payment_reference: &'a str,
    reference: &'a str,
}

/// The call that carries out `request` for `account`. `return_url` is where a shopper would
/// come back after a redirect, which Adyen requires on every payment (no redirect is followed
/// yet: 3-D Secure is refused). `None` when the original's PSP reference cannot be put in a
/// path (it is Adyen's own: letters and digits).
pub fn call_for(
    account: &AdyenAccount,
    request: &ProcessorRequest,
    return_url: &str,
) -> Option<Call> {
    let reference = request.reference.as_str();
    let amount = || Amount {
        currency: request.currency.as_str(),
        value: request.amount,
    };
    let modification = |path: String, amount: Option<Amount<'_>>| {
        let body = ModificationRequest {
            merchant_account: &account.merchant_account,
            reference,
            amount,
        };
        Some(Call {
            path,
            idempotency_key: reference.to_owned(),
            body: serde_json::to_string(&body).ok()?,
            is_payment: false,
        })
    };
    match &request.op {
        ProcessorOp::Authorize(card) | ProcessorOp::Sale(card) => {
            let sale = matches!(request.op, ProcessorOp::Sale(_));
            let body = payment(account, card, reference, amount(), return_url, sale);
            Some(Call {
                path: "/payments".to_owned(),
                idempotency_key: reference.to_owned(),
                body: serde_json::to_string(&body).ok()?,
                is_payment: true,
            })
        }
        ProcessorOp::Capture {
            processor_transaction_id: psp,
        } => modification(
            format!("/payments/{}/captures", path_safe(psp)?),
            Some(amount()),
        ),
        ProcessorOp::Void {
            processor_transaction_id: psp,
        } => modification(format!("/payments/{}/cancels", path_safe(psp)?), None),
        ProcessorOp::Refund {
            processor_transaction_id: psp,
        } => modification(
            format!("/payments/{}/refunds", path_safe(psp)?),
            Some(amount()),
        ),
        ProcessorOp::Reverse => Some(cancel_by_reference(account, reference)),
    }
}

/// `POST /cancels` for the payment whose reference is our transaction id `reference`: what
/// undoes a payment whose answer never came (or that waits on the shopper).
pub fn cancel_by_reference(account: &AdyenAccount, reference: &str) -> Call {
    let body = CancelByReference {
        merchant_account: &account.merchant_account,
        payment_reference: reference,
        reference,
    };
    Call {
        path: "/cancels".to_owned(),
        idempotency_key: format!("{reference}-cancel"),
        body: serde_json::to_string(&body).unwrap_or_default(),
        is_payment: false,
    }
}

fn payment<'a>(
    account: &'a AdyenAccount,
    card: &'a CardData,
    reference: &'a str,
    amount: Amount<'a>,
    return_url: &'a str,
    sale: bool,
) -> PaymentRequest<'a> {
    let (expiry_month, expiry_year) = card.expiration.month_and_year();
    let token = card
        .wallet
        .as_ref()
        .and_then(|wallet| Some((wallet.cryptogram.as_deref()?, wallet.eci.as_deref())));
    let mut additional_data = BTreeMap::from([("allowPartialAuth", "true")]);
    if !sale {
        additional_data.insert("manualCapture", "true");
    }
    PaymentRequest {
        amount,
        merchant_account: &account.merchant_account,
        reference,
        return_url,
        payment_method: CardDetails {
            // A device token with its cryptogram is a network token to Adyen; a card a wallet
            // keeps in the account (Google Pay's PAN_ONLY) is an ordinary card.
            kind: if token.is_some() {
                "networkToken"
            } else {
                "scheme"
            },
            number: card.number.expose(),
            expiry_month,
            expiry_year,
            cvc: card.cvv.as_ref().map(Cvv::expose),
            holder_name: card.name.as_ref().map(CardholderName::expose),
        },
        mpi_data: token.map(|(cryptogram, eci)| ThreeDSecureData {
            token_authentication_verification_value: cryptogram,
            eci,
        }),
        shopper_interaction: "Ecommerce",
        capture_delay_hours: sale.then_some(0),
        additional_data,
    }
}

/// Adyen's PSP references are letters and digits; anything else is not put in a path.
fn path_safe(psp: &str) -> Option<&str> {
    (!psp.is_empty() && psp.len() <= 64 && psp.bytes().all(|b| b.is_ascii_alphanumeric()))
        .then_some(psp)
}

/// What Holdfast reads of `PaymentResponse`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PaymentResponse {
    result_code: Option<String>,
    psp_reference: Option<String>,
    refusal_reason: Option<String>,
    refusal_reason_code: Option<String>,
    #[serde(default)]
    additional_data: BTreeMap<String, serde_json::Value>,
    amount: Option<AnswerAmount>,
}

#[derive(Deserialize)]
struct AnswerAmount {
    value: Option<i64>,
}

/// A 200 answer to `POST /payments`, read; `None` when it is not one (no `resultCode`).
pub fn payment_result(body: &str) -> Option<PaymentResult> {
    let answer: PaymentResponse = serde_json::from_str(body).ok()?;
    let text = |key: &str| {
        answer
            .additional_data
            .get(key)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let authorised_amount = text("authorisedAmountValue")
        .and_then(|value| value.parse().ok())
        .or_else(|| answer.amount.as_ref().and_then(|amount| amount.value));
    Some(PaymentResult {
        result_code: answer.result_code.clone()?,
        psp_reference: answer.psp_reference.clone(),
        refusal_reason_code: answer.refusal_reason_code.clone(),
        refusal_reason: answer.refusal_reason.clone(),
        avs_result: text("avsResult"),
        cvc_result: text("cvcResult"),
        authorised_amount,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModificationResponse {
    psp_reference: Option<String>,
    payment_psp_reference: Option<String>,
    status: Option<String>,
}

/// A modification Adyen took (`status: received`): its own PSP reference, and the payment's
/// (the same for a cancel by our reference, which names no payment of Adyen's).
pub fn received(body: &str) -> Option<(String, String)> {
    let answer: ModificationResponse = serde_json::from_str(body).ok()?;
    if answer.status.as_deref() != Some("received") {
        return None;
    }
    let own = answer.psp_reference?;
    Some((
        answer.payment_psp_reference.unwrap_or_else(|| own.clone()),
        own,
    ))
}

/// Adyen's `ServiceError` object, as far as Holdfast reads it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdyenServiceError {
    pub error_code: Option<String>,
    pub error_type: Option<String>,
    pub message: Option<String>,
}

/// An error answer's `ServiceError` object, empty when the body is not one.
pub fn service_error(body: &str) -> AdyenServiceError {
    serde_json::from_str(body).unwrap_or_default()
}
