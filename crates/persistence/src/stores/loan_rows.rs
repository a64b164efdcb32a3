//! A loan's and a repayment's rows, both ways.

use diesel::prelude::*;
use holdfast_domain::ids::{
    LoanId, LoanRepaymentId, MerchantId, PayoutId, PlatformId, SettlementRunId,
};
use holdfast_domain::loan::{Acceptance, Loan, LoanRepayment, LoanTerms};
use holdfast_domain::merchant::Currency;
use holdfast_domain::ports::StoreError;
use time::OffsetDateTime;

use crate::rows::{corrupt, parse, stored_hash};
use crate::schema::{loan_repayments as lr, loans as l};
use crate::timestamp::Instant;

#[derive(Debug, Queryable)]
pub(super) struct LoanRow {
    id: String,
    platform_id: String,
    mode: String,
    merchant_id: String,
    currency: String,
    state: String,
    advance: i64,
    fee: i64,
    withhold_bps: i32,
    minimum_per_30_days: Option<i64>,
    repaid: i64,
    offer_expires_on: OffsetDateTime,
    link_hash: Option<Vec<u8>>,
    accepted_by: Option<String>,
    accepted_name: Option<String>,
    consent_reference: Option<String>,
    accepted_address: Option<String>,
    accepted_on: Option<OffsetDateTime>,
    payout_id: Option<String>,
    paid_out_on: Option<OffsetDateTime>,
    created_on: OffsetDateTime,
    updated_on: OffsetDateTime,
}

impl TryFrom<LoanRow> for Loan {
    type Error = StoreError;
    fn try_from(row: LoanRow) -> Result<Self, StoreError> {
        let terms = LoanTerms::new(
            row.advance,
            row.fee,
            u32::try_from(row.withhold_bps).map_err(|e| corrupt("withhold_bps", e))?,
            row.minimum_per_30_days,
        )
        .map_err(|e| corrupt("loan terms", e))?;
        let acceptance = match (row.accepted_by, row.accepted_on) {
            (Some(by), Some(accepted_on)) => Some(Acceptance {
                by: parse("accepted_by", &by)?,
                name: row.accepted_name.unwrap_or_default(),
                consent_reference: row.consent_reference,
                address: row.accepted_address.unwrap_or_default(),
                accepted_on,
            }),
            _ => None,
        };
        Ok(Self {
            id: LoanId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            currency: Currency::from_stored(&row.currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?,
            state: parse("loan state", &row.state)?,
            terms,
            repaid: row.repaid,
            offer_expires_on: row.offer_expires_on,
            link_hash: row
                .link_hash
                .map(|hash| stored_hash("link hash", hash))
                .transpose()?,
            acceptance,
            payout_id: row.payout_id.map(PayoutId::from_trusted),
            paid_out_on: row.paid_out_on,
            created_on: row.created_on,
            updated_on: row.updated_on,
        })
    }
}

#[derive(Insertable, AsChangeset)]
#[diesel(table_name = l, treat_none_as_null = true)]
pub(super) struct NewLoanRow<'a> {
    id: &'a str,
    platform_id: &'a str,
    mode: &'static str,
    merchant_id: &'a str,
    currency: &'a str,
    state: &'static str,
    advance: i64,
    fee: i64,
    withhold_bps: i32,
    minimum_per_30_days: Option<i64>,
    repaid: i64,
    #[diesel(serialize_as = Instant)]
    offer_expires_on: OffsetDateTime,
    link_hash: Option<&'a [u8]>,
    accepted_by: Option<&'static str>,
    accepted_name: Option<&'a str>,
    consent_reference: Option<&'a str>,
    accepted_address: Option<&'a str>,
    accepted_on: Option<Instant>,
    payout_id: Option<&'a str>,
    paid_out_on: Option<Instant>,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    updated_on: OffsetDateTime,
}

impl<'a> From<&'a Loan> for NewLoanRow<'a> {
    fn from(loan: &'a Loan) -> Self {
        let acceptance = loan.acceptance.as_ref();
        Self {
            id: loan.id.as_str(),
            platform_id: loan.platform_id.as_str(),
            mode: loan.mode.as_str(),
            merchant_id: loan.merchant_id.as_str(),
            currency: loan.currency.as_str(),
            state: loan.state.as_str(),
            advance: loan.terms.advance,
            fee: loan.terms.fee,
            withhold_bps: i32::try_from(loan.terms.withhold_bps).unwrap_or(i32::MAX),
            minimum_per_30_days: loan.terms.minimum_per_30_days,
            repaid: loan.repaid,
            offer_expires_on: loan.offer_expires_on,
            link_hash: loan.link_hash.as_ref().map(|h| h.as_bytes().as_slice()),
            accepted_by: acceptance.map(|a| a.by.as_str()),
            accepted_name: acceptance.map(|a| a.name.as_str()),
            consent_reference: acceptance.and_then(|a| a.consent_reference.as_deref()),
            accepted_address: acceptance.map(|a| a.address.as_str()),
            accepted_on: acceptance.map(|a| Instant(a.accepted_on)),
            payout_id: loan.payout_id.as_ref().map(PayoutId::as_str),
            paid_out_on: loan.paid_out_on.map(Instant),
            created_on: loan.created_on,
            updated_on: loan.updated_on,
        }
    }
}

#[derive(Debug, Queryable)]
pub(super) struct RepaymentRow {
    id: String,
    loan_id: String,
    kind: String,
    amount: i64,
    settlement_run_id: Option<String>,
    outstanding: i64,
    created_on: OffsetDateTime,
}

/// A repayment row with its loan's merchant and currency.
#[derive(Debug, Queryable)]
pub(super) struct RepaymentOfLoan {
    row: RepaymentRow,
    merchant_id: String,
    currency: String,
}

impl TryFrom<RepaymentOfLoan> for LoanRepayment {
    type Error = StoreError;
    fn try_from(r: RepaymentOfLoan) -> Result<Self, StoreError> {
        let RepaymentOfLoan {
            row,
            merchant_id,
            currency,
        } = r;
        Ok(Self {
            id: LoanRepaymentId::from_trusted(row.id),
            loan_id: LoanId::from_trusted(row.loan_id),
            merchant_id: MerchantId::from_trusted(merchant_id),
            kind: parse("repayment kind", &row.kind)?,
            amount: row.amount,
            currency: Currency::from_stored(&currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?,
            settlement_run_id: row.settlement_run_id.map(SettlementRunId::from_trusted),
            outstanding: row.outstanding,
            created_on: row.created_on,
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = lr)]
pub(super) struct NewRepaymentRow<'a> {
    id: &'a str,
    loan_id: &'a str,
    kind: &'static str,
    amount: i64,
    settlement_run_id: Option<&'a str>,
    outstanding: i64,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
}

impl<'a> From<&'a LoanRepayment> for NewRepaymentRow<'a> {
    fn from(r: &'a LoanRepayment) -> Self {
        Self {
            id: r.id.as_str(),
            loan_id: r.loan_id.as_str(),
            kind: r.kind.as_str(),
            amount: r.amount,
            settlement_run_id: r.settlement_run_id.as_ref().map(SettlementRunId::as_str),
            outstanding: r.outstanding,
            created_on: r.created_on,
        }
    }
}
