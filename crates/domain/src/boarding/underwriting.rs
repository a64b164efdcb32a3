//! What underwriting decides of a submitted boarding form. In test mode the sandbox decides at
//! once, from documented test tax ids (docs/testing.md); in live mode an operator decides.

use super::OnboardingStatus;
use super::form::FormStatus;

/// Underwriting's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The merchant may take payments.
    Approve,
    /// The merchant is turned down, for `reason`.
    Decline {
        /// Why, in words the merchant will read.
        reason: String,
    },
    /// The form opens again for `fields`, for `reason`.
    RequestInformation {
        /// The fields to answer again, by their names.
        fields: Vec<String>,
        /// What is needed, in words the merchant will read.
        reason: String,
    },
}

impl Decision {
    /// The decision as an underwriter may make it: a decline says why (1 to 500 characters);
    /// a request for information says why and names one or more of the form's fields.
    pub fn checked(self) -> Result<Self, crate::Invalid> {
        let reason = |raw: &str| crate::text::bounded_text("reason", raw, 1, 500);
        Ok(match self {
            Self::Approve => Self::Approve,
            Self::Decline { reason: why } => Self::Decline {
                reason: reason(&why)?,
            },
            Self::RequestInformation {
                fields,
                reason: why,
            } => {
                if fields.is_empty()
                    || fields
                        .iter()
                        .any(|f| super::answers::field_label(f).is_none())
                {
                    return Err(crate::Invalid::new(
                        "fields",
                        "must name one or more of the boarding form's fields",
                    ));
                }
                Self::RequestInformation {
                    fields,
                    reason: reason(&why)?,
                }
            }
        })
    }

    /// The form's status after the decision.
    pub fn form_status(&self) -> FormStatus {
        match self {
            Self::Approve => FormStatus::Approved,
            Self::Decline { .. } => FormStatus::Declined,
            Self::RequestInformation { .. } => FormStatus::NeedsInformation,
        }
    }

    /// The merchant's onboarding status after the decision.
    pub fn merchant_status(&self) -> OnboardingStatus {
        match self {
            Self::Approve => OnboardingStatus::Approved,
            Self::Decline { .. } => OnboardingStatus::Declined,
            Self::RequestInformation { .. } => OnboardingStatus::NeedsInformation,
        }
    }
}

/// The test tax id (a US EIN) the sandbox declines.
pub const DECLINED_TAX_ID: &str = "990000002";
/// The test tax id the sandbox asks more information for (the website).
pub const NEEDS_INFORMATION_TAX_ID: &str = "990000003";

/// The sandbox underwriter: deterministic by the (compact) tax id; everything else approved.
pub fn sandbox(tax_id: &str) -> Decision {
    match tax_id {
        DECLINED_TAX_ID => Decision::Decline {
            reason: "The sandbox underwriter declines this test tax id.".into(),
        },
        NEEDS_INFORMATION_TAX_ID => Decision::RequestInformation {
            fields: vec!["website".into()],
            reason: "The sandbox underwriter asks for the website again for this test tax id."
                .into(),
        },
        _ => Decision::Approve,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_says_why_and_names_real_fields() {
        let ask = |fields: &[&str], reason: &str| Decision::RequestInformation {
            fields: fields.iter().map(|f| (*f).to_owned()).collect(),
            reason: reason.into(),
        };
        for (decision, refused) in [
            (Decision::Approve, None),
            (
                Decision::Decline {
                    reason: "No".into(),
                },
                None,
            ),
            (
                Decision::Decline {
                    reason: "  ".into(),
                },
                Some("reason"),
            ),
            (ask(&["website"], "Check it"), None),
            (ask(&[], "Check it"), Some("fields")),
            (ask(&["website", "password"], "Check it"), Some("fields")),
            (ask(&["website"], ""), Some("reason")),
        ] {
            let got = decision.clone().checked();
            assert_eq!(got.as_ref().err().map(|e| e.field), refused, "{decision:?}");
        }
    }

    #[test]
    fn the_sandbox_decides_by_its_test_tax_ids() {
        for (tax_id, form, merchant) in [
            (
                "990000002",
                FormStatus::Declined,
                OnboardingStatus::Declined,
            ),
            (
                "990000003",
                FormStatus::NeedsInformation,
                OnboardingStatus::NeedsInformation,
            ),
            (
                "123456789",
                FormStatus::Approved,
                OnboardingStatus::Approved,
            ),
            (
                "DE123456789",
                FormStatus::Approved,
                OnboardingStatus::Approved,
            ),
        ] {
            let decision = sandbox(tax_id);
            assert_eq!(
                (decision.form_status(), decision.merchant_status()),
                (form, merchant),
                "{tax_id}"
            );
        }
    }
}
