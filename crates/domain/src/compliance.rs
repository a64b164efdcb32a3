//! PCI DSS compliance of a merchant: the self-assessment questionnaire (SAQ) it attests each
//! year. Which questionnaire follows from its own traffic: a merchant whose cards reach Holdfast
//! only through the hosted fields or wallets never handles card numbers (SAQ A); one that sends
//! raw card numbers to the API does (SAQ D).

use std::net::IpAddr;

use time::{Duration, OffsetDateTime};

use crate::ids::{ComplianceFormId, MerchantId, PlatformId};
use crate::mode::Mode;

/// A form is due this long after it is issued (at approval, then each year).
pub const DUE_AFTER: Duration = Duration::days(90);
/// A new form is issued this long after the last one.
pub const RENEWED_AFTER: Duration = Duration::days(365);

crate::words! {
    /// The questionnaire a merchant attests.
    pub enum SaqType {
        /// Card-not-present merchants that outsource all card handling (hosted fields, wallets).
        #[strum(serialize = "A")]
        A,
        /// Merchants whose systems see card numbers (raw numbers sent to the API).
        #[strum(serialize = "D")]
        D,
    }
}

impl SaqType {
    /// The questionnaire of a merchant that has (`true`) or has not sent raw card numbers.
    pub fn for_traffic(sent_raw_cards: bool) -> Self {
        if sent_raw_cards { Self::D } else { Self::A }
    }

    /// What the questionnaire asks, in brief, for a platform to show its merchant.
    pub fn questions(self) -> &'static [Question] {
        match self {
            Self::A => SAQ_A,
            Self::D => SAQ_D,
        }
    }
}

/// One requirement the merchant attests it meets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Question {
    /// The PCI DSS requirement it comes from.
    pub requirement: &'static str,
    /// What the merchant attests, in plain words.
    pub text: &'static str,
}

const SAQ_A: &[Question] = &[
    Question {
        requirement: "2",
        text: "Default passwords on systems that serve your payment pages are changed.",
    },
    Question {
        requirement: "6",
        text: "Scripts on your payment pages are authorised, their integrity assured, and inventoried.",
    },
    Question {
        requirement: "8",
        text: "Every person with access to your payment-page systems has a unique id and strong authentication.",
    },
    Question {
        requirement: "9",
        text: "Paper and electronic media with cardholder data, if any, are kept secure and destroyed when no longer needed.",
    },
    Question {
        requirement: "11",
        text: "Changes to your payment pages are detected and alerted on.",
    },
    Question {
        requirement: "12",
        text: "You keep a list of your service providers and written agreements that they protect cardholder data.",
    },
];

const SAQ_D: &[Question] = &[
    Question {
        requirement: "1",
        text: "Network security controls protect the systems that handle card numbers.",
    },
    Question {
        requirement: "2",
        text: "Secure configurations are applied to all system components.",
    },
    Question {
        requirement: "3",
        text: "Stored account data is protected, kept only as long as needed, and never includes sensitive authentication data after authorisation.",
    },
    Question {
        requirement: "4",
        text: "Card numbers are protected with strong cryptography when sent over open networks.",
    },
    Question {
        requirement: "5",
        text: "Systems are protected from malicious software.",
    },
    Question {
        requirement: "6",
        text: "Systems and software are developed and maintained securely.",
    },
    Question {
        requirement: "7",
        text: "Access to card data is restricted by business need to know.",
    },
    Question {
        requirement: "8",
        text: "Users are identified and authenticated.",
    },
    Question {
        requirement: "9",
        text: "Physical access to card data is restricted.",
    },
    Question {
        requirement: "10",
        text: "Access to systems and card data is logged and monitored.",
    },
    Question {
        requirement: "11",
        text: "Security of systems and networks is tested regularly.",
    },
    Question {
        requirement: "12",
        text: "Information security is supported by organisational policies and programmes.",
    },
];

crate::words! {
    /// Where a compliance form stands.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum ComplianceStatus {
        /// Issued, not yet attested, not yet due.
        Pending,
        /// Attested by a named signer.
        Attested,
        /// Past its due date without an attestation.
        Overdue,
    }
}

/// Who attested, in what role, when, and from where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attestation {
    /// The signer's name, as typed.
    pub name: String,
    /// The signer's title, as typed.
    pub title: String,
    /// When.
    pub on: OffsetDateTime,
    /// The address the attestation came from (the TCP peer, or the client a trusted proxy forwards for).
    pub address: Option<IpAddr>,
    /// The questionnaire attested.
    pub saq_type: SaqType,
}

/// A merchant's compliance form for one year.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComplianceForm {
    /// `cf_…`.
    pub id: ComplianceFormId,
    /// The merchant's platform.
    pub platform_id: PlatformId,
    /// The merchant's mode.
    pub mode: Mode,
    /// The merchant.
    pub merchant_id: MerchantId,
    /// Where it stands.
    pub status: ComplianceStatus,
    /// When it was issued: at approval, then each year.
    pub issued_on: OffsetDateTime,
    /// When the attestation is due.
    pub due_on: OffsetDateTime,
    /// The attestation, once made.
    pub attestation: Option<Attestation>,
}

impl ComplianceForm {
    /// A pending form issued at `at`, due 90 days later.
    pub fn issue(
        id: ComplianceFormId,
        platform_id: PlatformId,
        mode: Mode,
        merchant_id: MerchantId,
        at: OffsetDateTime,
    ) -> Self {
        Self {
            id,
            platform_id,
            mode,
            merchant_id,
            status: ComplianceStatus::Pending,
            issued_on: at,
            due_on: at + DUE_AFTER,
            attestation: None,
        }
    }

    /// Whether, at `now`, the form is past due without an attestation.
    pub fn is_overdue_at(&self, now: OffsetDateTime) -> bool {
        self.status == ComplianceStatus::Pending && now >= self.due_on
    }
}

/// The `data` of `compliance.created` and `compliance.updated`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComplianceEvent {
    /// The form's id.
    pub id: ComplianceFormId,
    /// The merchant it is for.
    pub merchant_id: MerchantId,
    /// `pending`, `attested` or `overdue`.
    pub status: ComplianceStatus,
    /// When it is due, RFC 3339.
    pub due_on: String,
    /// When it was attested, RFC 3339; `null` before.
    pub attested_on: Option<String>,
}

impl ComplianceForm {
    /// The data its events carry.
    pub fn event(&self) -> ComplianceEvent {
        use crate::payment::transaction::format_timestamp;
        ComplianceEvent {
            id: self.id.clone(),
            merchant_id: self.merchant_id.clone(),
            status: self.status,
            due_on: format_timestamp(self.due_on),
            attested_on: self.attestation.as_ref().map(|a| format_timestamp(a.on)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn the_questionnaire_follows_the_traffic() {
        assert_eq!(SaqType::for_traffic(false), SaqType::A);
        assert_eq!(SaqType::for_traffic(true), SaqType::D);
        assert!(SaqType::D.questions().len() > SaqType::A.questions().len());
    }

    #[test]
    fn a_form_is_due_in_ninety_days() {
        let issued = datetime!(2026-01-01 0:00 UTC);
        let form = ComplianceForm::issue(
            ComplianceFormId::from_suffix("1"),
            PlatformId::from_suffix("1"),
            Mode::Live,
            MerchantId::from_suffix("1"),
            issued,
        );
        for (now, overdue) in [
            (datetime!(2026-03-31 23:59 UTC), false),
            (datetime!(2026-04-01 0:00 UTC), true),
            (datetime!(2027-01-01 0:00 UTC), true),
        ] {
            assert_eq!(form.is_overdue_at(now), overdue, "{now}");
        }
        let attested = ComplianceForm {
            status: ComplianceStatus::Attested,
            ..form
        };
        assert!(!attested.is_overdue_at(datetime!(2026-06-01 0:00 UTC)));
    }
}
