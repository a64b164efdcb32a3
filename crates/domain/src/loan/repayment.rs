//! A loan's repayments: a share of a settlement withheld, or an early repayment from the
//! merchant's available balance. Each is one journal, its id the journal's source.

use serde::Serialize;
use time::OffsetDateTime;

use crate::ids::{LoanId, LoanRepaymentId, MerchantId, SettlementRunId};
use crate::merchant::Currency;

crate::words! {
    /// How a repayment was made.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum RepaymentKind {
        /// Withheld from a settlement run's net, before the rest became available.
        Withholding,
        /// Repaid early from the merchant's available balance (`POST /v1/loans/{id}/repay`).
        Early,
    }
}

/// One repayment of a loan. Its `Serialize` is the API's shape, and the `repayment` of a
/// `loan.repayment` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LoanRepayment {
    /// `lrp_…`.
    pub id: LoanRepaymentId,
    /// The loan repaid.
    pub loan_id: LoanId,
    /// Its merchant.
    pub merchant_id: MerchantId,
    /// How it was made.
    pub kind: RepaymentKind,
    /// Minor units of the loan's currency, above zero.
    pub amount: i64,
    /// The loan's currency.
    pub currency: Currency,
    /// The settlement run that withheld it; `None` for an early repayment.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<SettlementRunId>))]
    pub settlement_run_id: Option<SettlementRunId>,
    /// What the loan still owed after it.
    pub outstanding: i64,
    /// When it was made.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub created_on: OffsetDateTime,
}

/// The data of a `loan.repayment` event: the repayment, and the loan as it left it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepaymentEvent {
    /// The repayment.
    pub repayment: LoanRepayment,
    /// The loan after it.
    pub loan: super::Loan,
}
