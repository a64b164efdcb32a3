//! Merchant loans (issue 42, docs/loans.md): a platform advances money to a merchant and is
//! repaid by a share of each of the merchant's settlements, before the rest becomes available.

mod record;
mod state;
mod terms;

pub use record::Loan;
pub use state::{LoanState, Transition};
pub use terms::{BASIS_POINTS, LoanTerms, MAX_ADVANCE, MINIMUM_PERIOD};
