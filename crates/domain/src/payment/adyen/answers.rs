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

/// `resultCode` → how it is read (the whole enum of Checkout API v71).
pub const RESULT_CODES: &[(&str, ResultKind)] = &[
    ("Authorised", ResultKind::Authorised),
    ("PartiallyAuthorised", ResultKind::PartiallyAuthorised),
    ("Refused", ResultKind::Refused),
    ("Cancelled", ResultKind::Refused),
    ("Error", ResultKind::Error),
    ("RedirectShopper", ResultKind::NeedsShopper),
    ("IdentifyShopper", ResultKind::NeedsShopper),
    ("ChallengeShopper", ResultKind::NeedsShopper),
    ("PresentToShopper", ResultKind::NeedsShopper),
    ("AuthenticationFinished", ResultKind::NeedsShopper),
    ("AuthenticationNotRequired", ResultKind::NeedsShopper),
    ("Pending", ResultKind::Unsettled),
    ("Received", ResultKind::Unsettled),
    ("Success", ResultKind::Unsettled),
];

/// `refusalReasonCode` → `declineCode` (Adyen's refusal reasons; any other is
/// `generic_decline`).
pub const REFUSAL_REASONS: &[(&str, &str, DeclineCode)] = &[
    ("2", "Refused", DeclineCode::GenericDecline),
    ("3", "Referral", DeclineCode::CallIssuer),
    ("4", "Acquirer Error", DeclineCode::ProcessingError),
    ("5", "Blocked Card", DeclineCode::RestrictedCard),
    ("6", "Expired Card", DeclineCode::ExpiredCard),
    ("7", "Invalid Amount", DeclineCode::InvalidAmount),
    ("8", "Invalid Card Number", DeclineCode::IncorrectNumber),
    ("9", "Issuer Unavailable", DeclineCode::IssuerNotAvailable),
    ("10", "Not supported", DeclineCode::CardNotSupported),
    (
        "11",
        "3D Not Authenticated",
        DeclineCode::AuthenticationRequired,
    ),
    ("12", "Not enough balance", DeclineCode::InsufficientFunds),
    ("14", "Acquirer Fraud", DeclineCode::Fraudulent),
    ("15", "Cancelled", DeclineCode::GenericDecline),
    ("16", "Shopper Cancelled", DeclineCode::GenericDecline),
    ("17", "Invalid Pin", DeclineCode::IncorrectPin),
    ("18", "Pin tries exceeded", DeclineCode::PinTryExceeded),
    (
        "19",
        "Pin validation not possible",
        DeclineCode::ProcessingError,
    ),
    ("20", "FRAUD", DeclineCode::Fraudulent),
    ("21", "Not Submitted", DeclineCode::ProcessingError),
    ("22", "FRAUD-CANCELLED", DeclineCode::Fraudulent),
    (
        "23",
        "Transaction Not Permitted",
        DeclineCode::TransactionNotAllowed,
    ),
    ("24", "CVC Declined", DeclineCode::IncorrectCvc),
    ("25", "Restricted Card", DeclineCode::RestrictedCard),
    (
        "26",
        "Revocation Of Auth",
        DeclineCode::RevocationOfAuthorization,
    ),
    ("27", "Declined Non Generic", DeclineCode::DoNotHonor),
    (
        "28",
        "Withdrawal amount exceeded",
        DeclineCode::CardVelocityExceeded,
    ),
    (
        "29",
        "Withdrawal count exceeded",
        DeclineCode::CardVelocityExceeded,
    ),
    ("31", "Issuer Suspected Fraud", DeclineCode::Fraudulent),
    ("32", "AVS Declined", DeclineCode::IncorrectAddress),
    (
        "33",
        "Card requires online pin",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "34",
        "No checking account available on Card",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "35",
        "No savings account available on Card",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "36",
        "Mobile pin required",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "37",
        "Contactless fallback",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "38",
        "Authentication required",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "39",
        "RReq not received from DS",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "40",
        "Current AID is in Penalty Box",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "41",
        "CVM Required Restart Payment",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "42",
        "3DS Authentication Error",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "43",
        "Online PIN required",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "44",
        "Try another interface",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "45",
        "Transaction Blocked by Adyen to prevent excessive retry fees",
        DeclineCode::CardVelocityExceeded,
    ),
    (
        "46",
        "Chip downgrade mode",
        DeclineCode::TransactionNotAllowed,
    ),
];

/// The number that starts `avsResult` → `avs` (Adyen's AVS results; any other is `U`).
pub const AVS_RESULTS: &[(u8, &str, AvsCode)] = &[
    (0, "Unknown", AvsCode::Unavailable),
    (
        1,
        "Address matches, postal code doesn't",
        AvsCode::AddressOnly,
    ),
    (2, "Neither postal code nor address match", AvsCode::NoMatch),
    (3, "AVS unavailable", AvsCode::Retry),
    (
        4,
        "AVS not supported for this card type",
        AvsCode::Unavailable,
    ),
    (5, "No AVS data provided", AvsCode::Unavailable),
    (
        6,
        "Postal code matches, address doesn't match",
        AvsCode::PostalOnly,
    ),
    (7, "Both postal code and address match", AvsCode::FullMatch),
    (
        8,
        "Address not checked, postal code unknown",
        AvsCode::Unavailable,
    ),
    (
        9,
        "Address matches, postal code unknown",
        AvsCode::AddressOnly,
    ),
    (
        10,
        "Address doesn't match, postal code unknown",
        AvsCode::NoMatch,
    ),
    (
        11,
        "Postal code not checked, address unknown",
        AvsCode::Unavailable,
    ),
    (
        12,
        "Address matches, postal code not checked",
        AvsCode::AddressOnly,
    ),
    (
        13,
        "Address doesn't match, postal code not checked",
        AvsCode::NoMatch,
    ),
    (
        14,
        "Postal code matches, address unknown",
        AvsCode::PostalOnly,
    ),
    (
        15,
        "Postal code matches, address not checked",
        AvsCode::PostalOnly,
    ),
    (
        16,
        "Postal code doesn't match, address unknown",
        AvsCode::NoMatch,
    ),
    (
        17,
        "Postal code doesn't match, address not checked",
        AvsCode::NoMatch,
    ),
    (
        18,
        "Neither postal code nor address were checked",
        AvsCode::Unavailable,
    ),
    (19, "Name and postal code matches", AvsCode::PostalOnly),
    (
        20,
        "Name, address and postal code matches",
        AvsCode::FullMatch,
    ),
    (21, "Name and address matches", AvsCode::AddressOnly),
    (22, "Name matches", AvsCode::Unavailable),
    (
        23,
        "Postal code matches, name doesn't match",
        AvsCode::PostalOnly,
    ),
    (
        24,
        "Both postal code and address matches, name doesn't match",
        AvsCode::FullMatch,
    ),
    (
        25,
        "Address matches, name doesn't match",
        AvsCode::AddressOnly,
    ),
    (
        26,
        "Neither postal code, address nor name matches",
        AvsCode::NoMatch,
    ),
];

/// The number that starts `cvcResult` → `cvv` (Adyen's CVC results; any other is `P`).
pub const CVC_RESULTS: &[(u8, &str, CvvCode)] = &[
    (0, "Unknown", CvvCode::NotProcessed),
    (1, "Matches", CvvCode::Match),
    (2, "Doesn't match", CvvCode::NoMatch),
    (3, "Not checked", CvvCode::NotProcessed),
    (4, "No CVC/CVV provided, but was required", CvvCode::NoMatch),
    (5, "Issuer not certified for CVC/CVV", CvvCode::Unsupported),
    (6, "No CVC/CVV provided", CvvCode::NotProcessed),
];

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
mod tests {
    use super::*;

    fn refused(code: &str) -> PaymentResult {
        PaymentResult {
            result_code: "Refused".into(),
            psp_reference: Some("PSP1".into()),
            refusal_reason_code: Some(code.into()),
            refusal_reason: Some("reason".into()),
            ..PaymentResult::default()
        }
    }

    #[test]
    fn every_refusal_reason_declines_with_its_word() {
        for (code, _, decline) in REFUSAL_REASONS {
            let reply = payment_reply(&refused(code), 1000).unwrap();
            assert!(!reply.approved);
            assert_eq!(reply.code, *code, "processorCode is Adyen's code");
            assert_eq!(reply.decline, Some(*decline), "refusal {code}");
            assert_eq!(reply.approved_amount, 0);
        }
        let unknown = payment_reply(&refused("99"), 1000).unwrap();
        assert_eq!(unknown.decline, Some(DeclineCode::GenericDecline));
        let bare = PaymentResult {
            result_code: "Refused".into(),
            ..PaymentResult::default()
        };
        assert_eq!(payment_reply(&bare, 1).unwrap().code, "Refused");
    }

    #[test]
    fn every_result_code_is_read_as_its_row() {
        for (code, kind) in RESULT_CODES {
            let result = PaymentResult {
                result_code: (*code).into(),
                authorised_amount: Some(400),
                ..PaymentResult::default()
            };
            match (payment_reply(&result, 1000), kind) {
                (Ok(reply), ResultKind::Authorised) => {
                    assert!(reply.approved && reply.approved_amount == 1000);
                }
                (Ok(reply), ResultKind::PartiallyAuthorised) => {
                    assert!(reply.approved && reply.approved_amount == 400);
                }
                (Ok(reply), ResultKind::Refused) => assert!(!reply.approved),
                (Err(got), expected) => assert_eq!(got, *expected),
                (Ok(reply), expected) => panic!("{code}: {reply:?} for {expected:?}"),
            }
        }
        assert_eq!(result_kind("SomethingNew"), ResultKind::Unsettled);
    }

    #[test]
    fn a_partial_amount_is_never_more_than_asked() {
        let partial = |amount| PaymentResult {
            result_code: "PartiallyAuthorised".into(),
            authorised_amount: amount,
            ..PaymentResult::default()
        };
        for (amount, approved) in [
            (Some(1), 1),
            (Some(999), 999),
            (Some(1000), 1000),
            (Some(5000), 1000),
            (Some(0), 1000),
            (Some(-3), 1000),
            (None, 1000),
        ] {
            assert_eq!(
                payment_reply(&partial(amount), 1000)
                    .unwrap()
                    .approved_amount,
                approved,
                "{amount:?}"
            );
        }
    }

    #[test]
    fn avs_and_cvc_results_by_their_leading_number() {
        for (n, text, code) in AVS_RESULTS {
            assert_eq!(avs(Some(&format!("{n} {text}"))), *code);
        }
        for (n, text, code) in CVC_RESULTS {
            assert_eq!(cvv(Some(&format!("{n} {text}"))), *code);
        }
        assert_eq!(avs(None), AvsCode::Unavailable);
        assert_eq!(avs(Some("99 New")), AvsCode::Unavailable);
        assert_eq!(avs(Some("7")), AvsCode::FullMatch);
        assert_eq!(cvv(Some("x")), CvvCode::NotProcessed);
        assert_eq!(cvv(Some("")), CvvCode::NotProcessed);
    }

    /// The connector guide's tables are these tables, row for row.
    #[test]
    fn the_guide_states_every_row() {
        const GUIDE: &str = include_str!("../../../../../docs/processors/adyen.md");
        for (code, reason, decline) in REFUSAL_REASONS {
            let row = format!("| {code} | {reason} | `{}` |", decline.as_str());
            assert!(GUIDE.contains(&row), "docs/processors/adyen.md lacks {row}");
        }
        for (n, text, avs) in AVS_RESULTS {
            let row = format!("| {n} | {text} | `{}` |", avs.as_str());
            assert!(GUIDE.contains(&row), "docs/processors/adyen.md lacks {row}");
        }
        for (n, text, cvv) in CVC_RESULTS {
            let row = format!("| {n} | {text} | `{}` |", cvv.as_str());
            assert!(GUIDE.contains(&row), "docs/processors/adyen.md lacks {row}");
        }
        for (code, _) in RESULT_CODES {
            assert!(GUIDE.contains(&format!("| `{code}` |")), "docs lack {code}");
        }
    }

    #[test]
    fn http_errors_are_unavailable_with_adyens_code_cleaned() {
        let ProcessorError::Unavailable(why) =
            http_error(422, Some("101 <script>"), Some("validation"))
        else {
            panic!("unavailable");
        };
        assert_eq!(
            why,
            "Adyen refused the request as invalid (errorCode 101script, validation); HTTP 422"
        );
        for status in [400, 401, 403, 404, 422, 500, 503] {
            assert!(matches!(
                http_error(status, None, None),
                ProcessorError::Unavailable(_)
            ));
        }
    }
}
