//! Adyen's answers in Holdfast's terms: the mapping table of docs/processors/adyen.md, from
//! Adyen's `resultCode`, `refusalReasonCode` and the `additionalData` AVS and CVC results to a
//! transaction's `status`, `processorCode`, `declineCode`, `avs`, `cvv` and `partial`; and
//! Adyen's HTTP errors to the processor errors the payment service knows.
//!
//! Each table below is Adyen's documented list (Checkout API v71's `resultCode` enum; the
//! refusal reasons, AVS and CVC results of Adyen's documentation), row for row; a value Adyen
//! adds later reads as the safe default of its table (a generic decline, `U`, `P`).

use crate::payment::decline::DeclineCode;
use crate::payment::transaction::{AvsCode, CvvCode};
use crate::ports::{ProcessorError, ProcessorReply};

mod tables;

pub use tables::{AVS_RESULTS, CVC_RESULTS, REFUSAL_REASONS, RESULT_CODES};

/// What the connector read of a `POST /payments` answer (HTTP 200).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaymentResult {
    /// `resultCode`.
    pub result_code: String,
    /// `pspReference`: Adyen's id of the payment, absent on some refusals.
    pub psp_reference: Option<String>,
    /// `refusalReasonCode`, on a refusal.
    pub refusal_reason_code: Option<String>,
    /// `refusalReason`, on a refusal.
    pub refusal_reason: Option<String>,
    /// `additionalData.avsResult`, such as `7 Both postal code and address match`.
    pub avs_result: Option<String>,
    /// `additionalData.cvcResult`, such as `1 Matches`.
    pub cvc_result: Option<String>,
    /// `additionalData.authorisedAmountValue`, else `amount.value`, in minor units.
    pub authorised_amount: Option<i64>,
}

/// How Holdfast reads a payment's `resultCode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// Approved in full: status `A`.
    Authorised,
    /// Approved for less: status `A`, `partial: true`.
    PartiallyAuthorised,
    /// Declined: status `D`, its reason from `refusalReasonCode`.
    Refused,
    /// Adyen failed to process it; final, nothing held: status `E` (another connection of
    /// the plan may be tried).
    Error,
    /// The shopper must act (3-D Secure, a redirect): not supported yet, so the payment is
    /// cancelled at Adyen and refused.
    NeedsShopper,
    /// Adyen has no final outcome yet: the payment is cancelled at Adyen by our reference and
    /// recorded as timed out (status `T`), so nothing is left held.
    Unsettled,
}

/// How a payment's answer is read, by its `resultCode`; an unknown code is `Unsettled` (the
/// payment is cancelled, never assumed approved).
pub fn result_kind(result_code: &str) -> ResultKind {
    RESULT_CODES
        .iter()
        .find(|(code, _)| *code == result_code)
        .map_or(ResultKind::Unsettled, |(_, kind)| *kind)
}

/// `result_code` as the table spells it, or `Unknown` for a code the table does not have: what
/// is stored as `processorCode` is never more than Adyen's documented words.
pub fn result_code_word(result_code: &str) -> &'static str {
    RESULT_CODES
        .iter()
        .find(|(code, _)| *code == result_code)
        .map_or("Unknown", |(code, _)| code)
}

/// The `declineCode` of a refusal reason code.
pub fn decline_code(refusal_reason_code: Option<&str>) -> DeclineCode {
    refusal_reason_code
        .and_then(|code| REFUSAL_REASONS.iter().find(|(c, _, _)| *c == code))
        .map_or(DeclineCode::GenericDecline, |(_, _, decline)| *decline)
}

/// The `avs` of an `avsResult` such as `7 Both postal code and address match`.
pub fn avs(avs_result: Option<&str>) -> AvsCode {
    leading_number(avs_result)
        .and_then(|n| AVS_RESULTS.iter().find(|(code, _, _)| *code == n))
        .map_or(AvsCode::Unavailable, |(_, _, avs)| *avs)
}

/// The `cvv` of a `cvcResult` such as `1 Matches`.
pub fn cvv(cvc_result: Option<&str>) -> CvvCode {
    leading_number(cvc_result)
        .and_then(|n| CVC_RESULTS.iter().find(|(code, _, _)| *code == n))
        .map_or(CvvCode::NotProcessed, |(_, _, cvv)| *cvv)
}

fn leading_number(text: Option<&str>) -> Option<u8> {
    let text = text?.trim_start();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .map_or(text, |end| text.get(..end).unwrap_or_default());
    digits.parse().ok()
}

/// A payment's answer for `asked` minor units, read by the tables: a reply (approved or
/// declined), or the processor error a payment records for it. `NeedsShopper` and `Unsettled`
/// are the caller's to act on first (a cancel), so they come back as such.
pub fn payment_reply(result: &PaymentResult, asked: i64) -> Result<ProcessorReply, ResultKind> {
    let kind = result_kind(&result.result_code);
    let psp_reference = result.psp_reference.clone().unwrap_or_default();
    let psp_reference = clean_reference(psp_reference);
    let avs = avs(result.avs_result.as_deref());
    let cvv = cvv(result.cvc_result.as_deref());
    match kind {
        ResultKind::Authorised | ResultKind::PartiallyAuthorised => {
            // Never more than asked; a partial answer without its amount is taken as the
            // whole (Adyen states it on every partial authorisation).
            let approved = result
                .authorised_amount
                .filter(|amount| (1..=asked).contains(amount))
                .unwrap_or(asked);
            let approved = if kind == ResultKind::Authorised {
                asked
            } else {
                approved
            };
            Ok(ProcessorReply {
                approved: true,
                approved_amount: approved,
                avs,
                cvv,
                code: result_code_word(&result.result_code).to_owned(),
                decline: None,
                message: result_code_word(&result.result_code).to_owned(),
                processor_transaction_id: psp_reference,
                submitted: false,
            })
        }
        ResultKind::Refused => {
            let code = result.refusal_reason_code.as_deref().map(clean);
            let word = result_code_word(&result.result_code);
            Ok(ProcessorReply {
                approved: false,
                approved_amount: 0,
                avs,
                cvv,
                decline: Some(decline_code(code.as_deref())),
                code: code
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| word.to_owned()),
                message: result
                    .refusal_reason
                    .as_deref()
                    .map(readable)
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| word.to_owned()),
                processor_transaction_id: clean_reference(psp_reference),
                submitted: false,
            })
        }
        ResultKind::Error | ResultKind::NeedsShopper | ResultKind::Unsettled => Err(kind),
    }
}

/// Adyen's answer to a capture, cancel or refund (HTTP 201, `status: received`): it took the
/// request; the outcome comes later in a notification. The transaction keeps the payment's PSP
/// reference (`paymentPspReference`), which a later refund names; the modification's own is
/// in the message.
pub fn modification_received(
    payment_psp: String,
    modification_psp: &str,
    amount: i64,
) -> ProcessorReply {
    ProcessorReply {
        approved: true,
        approved_amount: amount,
        avs: AvsCode::Unavailable,
        cvv: CvvCode::NotProcessed,
        code: "received".to_owned(),
        decline: None,
        message: format!(
            "received by Adyen as {}; the outcome follows in a notification",
            clean_reference(modification_psp.to_owned())
        ),
        processor_transaction_id: clean_reference(payment_psp),
        submitted: true,
    }
}

/// What an HTTP status other than 200/201 from Adyen means for the payment: every one is a
/// request Adyen did not act on, so the plan's next connection may be tried. `error_code` and
/// `error_type` are the `ServiceError`'s, when the body was one.
pub fn http_error(
    status: u16,
    error_code: Option<&str>,
    error_type: Option<&str>,
) -> ProcessorError {
    let what = match status {
        401 => "Adyen refused the connection's API key (401): check it in the Customer Area",
        403 => "Adyen refused the API key's permissions for this call (403)",
        400 | 422 => "Adyen refused the request as invalid",
        500..=599 => "Adyen failed to process the request",
        _ => "Adyen answered with an unexpected status",
    };
    let detail = match (error_code, error_type) {
        (Some(code), Some(kind)) => format!(" (errorCode {}, {})", clean(code), clean(kind)),
        (Some(code), None) => format!(" (errorCode {})", clean(code)),
        _ => String::new(),
    };
    ProcessorError::Unavailable(format!("{what}{detail}; HTTP {status}"))
}

/// A PSP reference is letters and digits (16 of them today); anything else is not kept.
fn clean_reference(psp: String) -> String {
    if psp.len() <= 64 && psp.bytes().all(|b| b.is_ascii_alphanumeric()) {
        psp
    } else {
        String::new()
    }
}

/// Adyen's words for a refusal, kept as a message: printable characters only, at most 200.
fn readable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect::<String>()
        .trim()
        .to_owned()
}

/// At most 40 characters of letters, digits, `_` and `-` of what Adyen sent, so a stored
/// message never carries anything else.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        .take(40)
        .collect()
}

#[cfg(test)]
mod tests;
