//! A loan as it is kept and shown: its terms, where it stands, and what was repaid.

use serde::Serialize;
use time::OffsetDateTime;

use super::{LoanState, LoanTerms};
use crate::ids::{LoanId, MerchantId, PlatformId};
use crate::merchant::Currency;
use crate::mode::Mode;

/// A loan to a merchant. Its `Serialize` is the API's JSON shape.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Loan {
    /// `loan_…`.
    pub id: LoanId,
    /// The platform that offered it.
    #[serde(skip)]
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
    #[serde(flatten)]
    pub terms: LoanTerms,
    /// What was repaid so far.
    pub repaid: i64,
    /// When the offer ends, unaccepted.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    pub offer_expires_on: OffsetDateTime,
    /// When its advance was paid out, once it was.
    #[serde(serialize_with = "serialize_optional_timestamp")]
    pub paid_out_on: Option<OffsetDateTime>,
    /// When it was offered.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    pub created_on: OffsetDateTime,
    /// When it last changed.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    pub updated_on: OffsetDateTime,
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
    /// What is still owed: the total less what was repaid.
    pub fn outstanding(&self) -> i64 {
        (self.terms.total() - self.repaid).max(0)
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
    fn its_json_is_the_apis() {
        let json = serde_json::to_value(loan(LoanState::PaidOut, 5_000)).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "id": "loan_1", "mode": "test", "merchantId": "mid_M", "currency": "USD",
                "state": "paid_out", "advance": 100_000, "fee": 10_000, "withholdRateBps": 1_000,
                "minimumPer30Days": 20_000, "repaid": 5_000,
                "offerExpiresOn": "2026-12-01T10:00:00.000000Z",
                "paidOutOn": "2026-12-01T10:00:00.000000Z",
                "createdOn": "2026-12-01T10:00:00.000000Z", "updatedOn": "2026-12-01T10:00:00.000000Z",
            })
        );
    }
}
