//! A loan as it is kept and shown: its terms, where it stands, and what was repaid.

use serde::Serialize;
use time::OffsetDateTime;

use super::{Acceptance, LoanRepayment, LoanState, LoanTerms, RepaymentKind};
use crate::api_key::KeyHash;
use crate::ids::{LoanId, MerchantId, PayoutId, PlatformId};
use crate::ledger::{Entry, Heading, Journal, JournalKind, Purpose};
use crate::merchant::Currency;
use crate::mode::Mode;

/// A loan to a merchant. Its JSON (`Serialize`) is the API's shape, with what is outstanding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loan {
    /// `loan_…`.
    pub id: LoanId,
    /// The platform that offered it.
    pub platform_id: PlatformId,
    /// Its mode: a test loan moves test money only.
    pub mode: Mode,
    /// The merchant it is for.
    pub merchant_id: MerchantId,
    /// The merchant's currency: every amount is in its minor units.
    pub currency: Currency,
    /// Where it stands.
    pub state: LoanState,
    /// The advance, the fee, the rate and the minimum.
    pub terms: LoanTerms,
    /// What was repaid so far.
    pub repaid: i64,
    /// When the offer ends, unaccepted.
    pub offer_expires_on: OffsetDateTime,
    /// The hash of its acceptance page's link (the link itself is shown once, when offered);
    /// `None` once the offer is decided.
    pub link_hash: Option<KeyHash>,
    /// Who accepted it, when and from where, once accepted.
    pub acceptance: Option<Acceptance>,
    /// The payout that took its advance to the merchant's bank, once paid out.
    pub payout_id: Option<PayoutId>,
    /// When its advance was paid out, once it was.
    pub paid_out_on: Option<OffsetDateTime>,
    /// When it was offered.
    pub created_on: OffsetDateTime,
    /// When it last changed.
    pub updated_on: OffsetDateTime,
}

/// The loan's JSON: its fields, the terms flattened, and what is outstanding.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Shown<'a> {
    id: &'a LoanId,
    mode: Mode,
    merchant_id: &'a MerchantId,
    currency: Currency,
    state: LoanState,
    #[serde(flatten)]
    terms: &'a LoanTerms,
    total: i64,
    repaid: i64,
    outstanding: i64,
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    offer_expires_on: &'a OffsetDateTime,
    acceptance: Option<&'a Acceptance>,
    payout_id: Option<&'a PayoutId>,
    #[serde(serialize_with = "serialize_optional_timestamp")]
    paid_out_on: &'a Option<OffsetDateTime>,
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    created_on: &'a OffsetDateTime,
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    updated_on: &'a OffsetDateTime,
}

impl Serialize for Loan {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Shown {
            id: &self.id,
            mode: self.mode,
            merchant_id: &self.merchant_id,
            currency: self.currency,
            state: self.state,
            terms: &self.terms,
            total: self.terms.total(),
            repaid: self.repaid,
            outstanding: self.outstanding(),
            offer_expires_on: &self.offer_expires_on,
            acceptance: self.acceptance.as_ref(),
            payout_id: self.payout_id.as_ref(),
            paid_out_on: &self.paid_out_on,
            created_on: &self.created_on,
            updated_on: &self.updated_on,
        }
        .serialize(s)
    }
}

#[expect(
    clippy::ref_option,
    reason = "serde's serialize_with hands the field over by reference"
)]
fn serialize_optional_timestamp<S: serde::Serializer>(
    at: &Option<OffsetDateTime>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match at {
        Some(at) => s.serialize_str(&crate::payment::transaction::format_timestamp(*at)),
        None => s.serialize_none(),
    }
}

impl Loan {
    /// What is still owed: the total less what was repaid; nothing once charged off.
    pub fn outstanding(&self) -> i64 {
        if self.state == LoanState::ChargedOff {
            return 0;
        }
        self.terms.total().saturating_sub(self.repaid).max(0)
    }

    /// What a settlement of `net` withholds from the merchant for it: nothing unless it is
    /// being repaid (`LoanTerms::withholding` otherwise).
    pub fn withholding(&self, net: i64) -> i64 {
        if self.state.is_repaying() {
            self.terms.withholding(net, self.outstanding())
        } else {
            0
        }
    }

    /// Where a loan being repaid stands at `now`: repaid once nothing is outstanding, past due
    /// while less was repaid than the minimums due, paid out otherwise. Any other state stays.
    pub fn standing(&self, now: OffsetDateTime) -> LoanState {
        match (self.state.is_repaying(), self.paid_out_on) {
            (true, _) if self.outstanding() == 0 => LoanState::Repaid,
            (true, Some(paid_out)) if self.terms.is_past_due(paid_out, now, self.repaid) => {
                LoanState::PastDue
            }
            (true, _) => LoanState::PaidOut,
            (false, _) => self.state,
        }
    }

    /// The loan after `amount` more was repaid at `now`, standing where that leaves it.
    #[must_use]
    pub fn after_repaying(&self, amount: i64, now: OffsetDateTime) -> Self {
        let mut after = Self {
            repaid: self.repaid.saturating_add(amount),
            updated_on: now,
            ..self.clone()
        };
        after.state = after.standing(now);
        after
    }

    /// The journal that lends its advance, at `now`: what the merchant owes (the total) against
    /// its available balance (the advance) and the platform's loan fees (the fee).
    pub fn advance_journal(&self, now: OffsetDateTime) -> Option<Journal> {
        self.journal(
            JournalKind::LoanAdvance,
            self.id.to_string(),
            now,
            &[
                (Purpose::LoanReceivable, self.terms.total()),
                (
                    Purpose::MerchantAvailable,
                    self.terms.advance.checked_neg()?,
                ),
                (Purpose::LoanFees, self.terms.fee.checked_neg()?),
            ],
        )
    }

    /// The journal of `repayment`: its amount from the merchant's available balance off what
    /// the merchant owes.
    pub fn repayment_journal(&self, repayment: &LoanRepayment) -> Option<Journal> {
        let kind = match repayment.kind {
            RepaymentKind::Withholding => JournalKind::LoanWithholding,
            RepaymentKind::Early => JournalKind::LoanRepayment,
        };
        self.journal(
            kind,
            repayment.id.to_string(),
            repayment.created_on,
            &[
                (Purpose::MerchantAvailable, repayment.amount),
                (Purpose::LoanReceivable, repayment.amount.checked_neg()?),
            ],
        )
    }

    /// The journal that writes off what it still owes, at `now`: the fee is counted as repaid
    /// last, so the part of it still owed was never earned and comes back off the loan fees; the
    /// rest of what is owed is the platform's own money, lost. `None` when nothing is owed.
    pub fn charge_off_journal(&self, now: OffsetDateTime) -> Option<Journal> {
        let owed = self.outstanding();
        let unearned_fee = self.terms.fee.min(owed);
        self.journal(
            JournalKind::LoanChargeOff,
            self.id.to_string(),
            now,
            &[
                (Purpose::PlatformFunding, owed.checked_sub(unearned_fee)?),
                (Purpose::LoanFees, unearned_fee),
                (Purpose::LoanReceivable, owed.checked_neg()?),
            ],
        )
    }

    fn journal(
        &self,
        kind: JournalKind,
        source: String,
        posted_on: OffsetDateTime,
        entries: &[(Purpose, i64)],
    ) -> Option<Journal> {
        let heading = Heading {
            platform_id: self.platform_id.clone(),
            mode: self.mode,
            merchant_id: self.merchant_id.clone(),
            currency: self.currency,
            kind,
            source,
            posted_on,
        };
        let entries: Vec<Entry> = entries
            .iter()
            .map(|&(purpose, amount)| Entry { purpose, amount })
            .collect();
        Journal::new(heading, &entries).ok()
    }
}

#[cfg(test)]
mod tests {
    use time::Duration;
    use time::macros::datetime;

    use super::*;

    const T: OffsetDateTime = datetime!(2026-12-01 10:00 UTC);

    fn loan(state: LoanState, repaid: i64) -> Loan {
        Loan {
            id: LoanId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("P"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("M"),
            currency: Currency::USD,
            state,
            terms: LoanTerms::new(100_000, 10_000, 1_000, Some(20_000)).unwrap(),
            repaid,
            offer_expires_on: T,
            link_hash: None,
            acceptance: None,
            payout_id: None,
            paid_out_on: state.is_repaying().then_some(T),
            created_on: T,
            updated_on: T,
        }
    }

    #[test]
    fn only_a_loan_being_repaid_withholds_and_moves_by_its_repayments() {
        let day = Duration::days(1);
        let cases = [
            (
                LoanState::Offered,
                0,
                10_000,
                0,
                40 * day,
                LoanState::Offered,
            ),
            (
                LoanState::Accepted,
                0,
                10_000,
                0,
                40 * day,
                LoanState::Accepted,
            ),
            (
                LoanState::PaidOut,
                0,
                10_000,
                1_000,
                day,
                LoanState::PaidOut,
            ),
            (
                LoanState::PaidOut,
                0,
                10_000,
                1_000,
                30 * day,
                LoanState::PastDue,
            ),
            (
                LoanState::PastDue,
                20_000,
                10_000,
                1_000,
                30 * day,
                LoanState::PaidOut,
            ),
            (
                LoanState::PaidOut,
                109_500,
                10_000,
                500,
                day,
                LoanState::PaidOut,
            ),
            (
                LoanState::PaidOut,
                110_000,
                10_000,
                0,
                day,
                LoanState::Repaid,
            ),
            (
                LoanState::PastDue,
                110_000,
                10_000,
                0,
                90 * day,
                LoanState::Repaid,
            ),
            (
                LoanState::ChargedOff,
                0,
                10_000,
                0,
                day,
                LoanState::ChargedOff,
            ),
        ];
        for (state, repaid, net, withheld, since, standing) in cases {
            let l = loan(state, repaid);
            assert_eq!(l.withholding(net), withheld, "{state} {repaid}");
            assert_eq!(l.standing(T + since), standing, "{state} {repaid} {since}");
        }
    }

    #[test]
    fn a_charge_off_takes_back_the_fee_not_earned_and_loses_the_rest() {
        let at = |repaid| {
            let j = loan(LoanState::PastDue, repaid).charge_off_journal(T)?;
            Some((
                j.amount_to(Purpose::LoanReceivable),
                j.amount_to(Purpose::LoanFees),
                j.amount_to(Purpose::PlatformFunding),
            ))
        };
        // Advance 100,000 and fee 10,000: the fee is repaid last.
        assert_eq!(at(0), Some((-110_000, 10_000, 100_000)));
        assert_eq!(at(60_000), Some((-50_000, 10_000, 40_000)));
        assert_eq!(at(104_000), Some((-6_000, 6_000, 0)));
        assert_eq!(at(110_000), None, "nothing owed, nothing written off");
    }

    #[test]
    fn its_json_is_the_apis() {
        let json = serde_json::to_value(loan(LoanState::PaidOut, 5_000)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "id": "loan_1", "mode": "test", "merchantId": "mid_M", "currency": "USD",
                "state": "paid_out", "advance": 100_000, "fee": 10_000, "withholdRateBps": 1_000,
                "minimumPer30Days": 20_000, "total": 110_000, "repaid": 5_000,
                "outstanding": 105_000,
                "offerExpiresOn": "2026-12-01T10:00:00.000000Z",
                "acceptance": null, "payoutId": null,
                "paidOutOn": "2026-12-01T10:00:00.000000Z",
                "createdOn": "2026-12-01T10:00:00.000000Z", "updatedOn": "2026-12-01T10:00:00.000000Z",
            })
        );
    }
}
