//! Merchant loans (issue 42, docs/loans.md): a platform advances money to a merchant and is
//! repaid by a share of each of the merchant's settlements, before the rest becomes available.

mod acceptance;
mod news;
mod record;
mod repayment;
#[cfg(feature = "openapi")]
mod schema;
mod state;
mod terms;

pub use acceptance::{Acceptance, AcceptedBy, MAX_TEXT, accepted_text};
pub use news::{LoanEvent, LoanNews};
pub use record::Loan;
pub use repayment::{LoanRepayment, RepaymentEvent, RepaymentKind};
pub use state::{LoanState, Transition};
pub use terms::{BASIS_POINTS, LoanTerms, MAX_ADVANCE, MINIMUM_PERIOD, UNDERWRITING_WINDOW};
