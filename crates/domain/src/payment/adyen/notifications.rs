//! Adyen's standard notifications (`Webhooks-v1.json`): the item Adyen POSTs, its HMAC
//! signature (Adyen's documented scheme), and what each event code says of a transaction.
//!
//! The signature is HMAC-SHA256, keyed with the hexadecimal key of the Customer Area, over
//! `pspReference:originalReference:merchantAccountCode:merchantReference:value:currency:eventCode:success`
//! (an absent field is empty), sent in base64 as `additionalData.hmacSignature`.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;

use crate::payment::follow_up::LaterOutcome;
use crate::payment::lifecycle::TxnType;

/// One `NotificationRequestItem`, as far as Holdfast reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationItem {
    /// What happened: `CAPTURE`, `REFUND_FAILED`, …
    pub event_code: String,
    /// `"true"` or `"false"`.
    pub success: String,
    /// Adyen's reference of what the item is about (the modification, for a capture's).
    pub psp_reference: String,
    /// The payment's PSP reference, for a modification.
    pub original_reference: Option<String>,
    /// Our reference: the id of the transaction that asked for it.
    pub merchant_reference: Option<String>,
    /// The merchant account the event belongs to.
    pub merchant_account_code: String,
    /// The amount concerned.
    pub amount: Option<NotificationAmount>,
    /// Adyen's reason, on a failure.
    pub reason: Option<String>,
    /// Where the signature is.
    pub additional_data: Option<NotificationData>,
}

/// `amount` of an item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct NotificationAmount {
    /// Minor units.
    pub value: Option<i64>,
    /// ISO 4217.
    pub currency: Option<String>,
}

/// The part of `additionalData` Holdfast reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotificationData {
    /// The item's HMAC signature, base64.
    pub hmac_signature: Option<String>,
}

impl NotificationItem {
    /// Whether Adyen reports success.
    pub fn succeeded(&self) -> bool {
        self.success == "true"
    }

    /// The text Adyen signs for this item.
    pub fn signed_text(&self) -> String {
        let (value, currency) = self.amount.as_ref().map_or((String::new(), ""), |a| {
            (
                a.value.map(|v| v.to_string()).unwrap_or_default(),
                a.currency.as_deref().unwrap_or_default(),
            )
        });
        [
            self.psp_reference.as_str(),
            self.original_reference.as_deref().unwrap_or_default(),
            &self.merchant_account_code,
            self.merchant_reference.as_deref().unwrap_or_default(),
            &value,
            currency,
            &self.event_code,
            &self.success,
        ]
        .join(":")
    }

    /// Whether the item carries a valid signature under `key` (the HMAC key's bytes), checked in
    /// constant time.
    pub fn signed_with(&self, key: &[u8]) -> bool {
        let Some(sent) = self
            .additional_data
            .as_ref()
            .and_then(|data| data.hmac_signature.as_deref())
            .and_then(|text| STANDARD.decode(text).ok())
        else {
            return false;
        };
        let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
            return false;
        };
        mac.update(self.signed_text().as_bytes());
        mac.verify_slice(&sent).is_ok()
    }

    /// The signature Adyen would send for this item under `key`: what a test's stand-in Adyen
    /// signs with (`None` only if HMAC refused the key, which it never does).
    pub fn signature(&self, key: &[u8]) -> Option<String> {
        let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
        mac.update(self.signed_text().as_bytes());
        Some(STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// What an event code says of the transaction Holdfast made for it: the follow-up type it
/// concerns and how it ended. `None` for codes that change nothing Holdfast records (an
/// `AUTHORISATION` is known at once, or cancelled by our reference when it was not).
pub fn later_outcome(event_code: &str, success: bool, kind: TxnType) -> Option<LaterOutcome> {
    let outcome = |ok: bool| {
        if ok {
            LaterOutcome::Confirmed
        } else {
            LaterOutcome::Refused
        }
    };
    match (event_code, kind) {
        ("CAPTURE", TxnType::Capture)
        | ("CANCELLATION" | "CANCEL_OR_REFUND", TxnType::Void)
        | ("REFUND" | "CANCEL_OR_REFUND", TxnType::Refund) => Some(outcome(success)),
        ("CAPTURE_FAILED", TxnType::Capture) | ("REFUND_FAILED", TxnType::Refund) => {
            Some(LaterOutcome::FailedAfterwards)
        }
        _ => None,
    }
}

/// The event codes Holdfast applies, and those it keeps for inspection only.
pub const APPLIED_EVENT_CODES: &[&str] = &[
    "CAPTURE",
    "CAPTURE_FAILED",
    "CANCELLATION",
    "REFUND",
    "REFUND_FAILED",
    "CANCEL_OR_REFUND",
];

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056";

    fn key() -> Vec<u8> {
        (0..KEY.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&KEY[i..i + 2], 16).unwrap())
            .collect()
    }

    /// Adyen's own worked example (its API libraries' HMAC validator tests):
    /// this item under this key is signed `coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=`.
    #[test]
    fn adyens_documented_example_verifies() {
        let item = NotificationItem {
            event_code: "AUTHORISATION".into(),
            success: "true".into(),
            psp_reference: "7914073381342284".into(),
            original_reference: None,
            merchant_reference: Some("TestPayment-1407325143704".into()),
            merchant_account_code: "TestMerchant".into(),
            amount: Some(NotificationAmount {
                value: Some(1130),
                currency: Some("EUR".into()),
            }),
            reason: None,
            additional_data: Some(NotificationData {
                hmac_signature: Some("coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=".into()),
            }),
        };
        assert_eq!(
            item.signed_text(),
            "7914073381342284::TestMerchant:TestPayment-1407325143704:1130:EUR:AUTHORISATION:true"
        );
        assert!(item.signed_with(&key()));
        assert_eq!(
            item.signature(&key()).as_deref(),
            Some("coqCmt/IZ4E3CzPvMY8zTjQVL5hYJUiBRg8UU+iCWo0=")
        );

        let mut forged = item.clone();
        forged.amount = Some(NotificationAmount {
            value: Some(1),
            currency: Some("EUR".into()),
        });
        assert!(!forged.signed_with(&key()), "another amount");
        let mut unsigned = item.clone();
        unsigned.additional_data = None;
        assert!(!unsigned.signed_with(&key()));
        let mut garbled = item;
        garbled.additional_data = Some(NotificationData {
            hmac_signature: Some("not base64!".into()),
        });
        assert!(!garbled.signed_with(&key()));
        assert!(!garbled.signed_with(b"another key"));
    }

    #[test]
    fn each_applied_code_names_its_follow_up() {
        use LaterOutcome::{Confirmed, FailedAfterwards, Refused};
        let rows = [
            ("CAPTURE", true, TxnType::Capture, Some(Confirmed)),
            ("CAPTURE", false, TxnType::Capture, Some(Refused)),
            (
                "CAPTURE_FAILED",
                true,
                TxnType::Capture,
                Some(FailedAfterwards),
            ),
            ("CANCELLATION", true, TxnType::Void, Some(Confirmed)),
            ("CANCELLATION", false, TxnType::Void, Some(Refused)),
            ("CANCEL_OR_REFUND", true, TxnType::Void, Some(Confirmed)),
            ("CANCEL_OR_REFUND", true, TxnType::Refund, Some(Confirmed)),
            ("REFUND", true, TxnType::Refund, Some(Confirmed)),
            ("REFUND", false, TxnType::Refund, Some(Refused)),
            (
                "REFUND_FAILED",
                true,
                TxnType::Refund,
                Some(FailedAfterwards),
            ),
            ("CAPTURE", true, TxnType::Refund, None),
            ("REFUND", true, TxnType::Capture, None),
            ("AUTHORISATION", true, TxnType::Auth, None),
            ("CANCELLATION", true, TxnType::Auth, None),
            ("CHARGEBACK", true, TxnType::Sale, None),
        ];
        for (code, success, kind, expected) in rows {
            assert_eq!(
                later_outcome(code, success, kind),
                expected,
                "{code} {success} {kind}"
            );
        }
        for code in APPLIED_EVENT_CODES {
            assert!(rows.iter().any(|(c, _, _, o)| c == code && o.is_some()));
        }
    }
}
