//! Merchant onboarding: the boarding form a merchant fills on a hosted page, the checks its
//! fields must pass, and what underwriting decides.

pub mod checks;
