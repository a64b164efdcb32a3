//! Merchant onboarding: the boarding form a merchant fills on a hosted page, the checks its
//! fields must pass, and what underwriting decides.

pub mod answers;
pub mod checks;
pub mod form;
pub mod underwriting;

crate::words! {
    /// Where a merchant stands in onboarding. A live merchant takes live payments only once
    /// `approved`; test merchants are never held back.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum OnboardingStatus {
        /// No boarding form has been filled in yet.
        NotStarted,
        /// A boarding form is being filled in.
        InProgress,
        /// The form is submitted and awaits underwriting.
        Submitted,
        /// Underwriting approved the merchant.
        Approved,
        /// Underwriting declined the merchant.
        Declined,
        /// Underwriting asks for more information: the form is open again for the named fields.
        NeedsInformation,
    }
}
