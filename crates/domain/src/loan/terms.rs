//! A loan's terms (docs/loans.md): the advance, the flat fee, the share of each settlement
//! withheld to repay it, and an optional minimum per 30 days; and the withholding rule.

use time::{Duration, OffsetDateTime};

use crate::Invalid;

/// The period a minimum repayment is counted over.
pub const MINIMUM_PERIOD: Duration = Duration::days(30);

/// Basis points in one: 10,000 is all of it.
pub const BASIS_POINTS: u32 = 10_000;

/// The largest advance: a billion in minor units (ten million dollars).
pub const MAX_ADVANCE: i64 = 1_000_000_000;

/// How far back the sandbox underwriter reads a merchant's processed volume.
pub const UNDERWRITING_WINDOW: Duration = Duration::days(90);

/// What a loan is: all amounts in minor units of the merchant's currency. Its `Serialize` is
/// the API's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoanTerms {
    /// What the merchant receives: 1 to `MAX_ADVANCE`.
    pub advance: i64,
    /// The flat fee, repaid with the advance: 0 to the advance.
    pub fee: i64,
    /// The share of each settlement's net withheld, in basis points: 1 to 10,000.
    #[serde(rename = "withholdRateBps")]
    pub withhold_bps: u32,
    /// What must be repaid in each 30 days from the payout, if anything: 1 to the total.
    pub minimum_per_30_days: Option<i64>,
}

impl LoanTerms {
    /// The terms, or refused naming the field whose rule they break.
    pub fn new(
        advance: i64,
        fee: i64,
        withhold_bps: u32,
        minimum_per_30_days: Option<i64>,
    ) -> Result<Self, Invalid> {
        if !(1..=MAX_ADVANCE).contains(&advance) {
            return Err(Invalid::new(
                "advance",
                format!("must be 1 to {MAX_ADVANCE}"),
            ));
        }
        if !(0..=advance).contains(&fee) {
            return Err(Invalid::new("fee", "must be 0 to the advance"));
        }
        if !(1..=BASIS_POINTS).contains(&withhold_bps) {
            return Err(Invalid::new(
                "withholdRateBps",
                "must be 1 to 10000 basis points",
            ));
        }
        let total = advance + fee;
        if let Some(minimum) = minimum_per_30_days
            && !(1..=total).contains(&minimum)
        {
            return Err(Invalid::new(
                "minimumPer30Days",
                "must be 1 to the total to repay (the advance and the fee)",
            ));
        }
        Ok(Self {
            advance,
            fee,
            withhold_bps,
            minimum_per_30_days,
        })
    }

    /// What test mode's sandbox underwriter offers a merchant that processed `volume` (minor
    /// units) in the last `UNDERWRITING_WINDOW`: an advance of a third of it (about a month's
    /// sales), rounded down to a hundred minor units and at most `MAX_ADVANCE`; a fee of a
    /// tenth of the advance; 10 % of each settlement withheld; and a sixth of the total due in
    /// each 30 days (rounded up), so it is repaid within six months at the least. `None` when
    /// the volume gives no advance.
    pub fn underwritten(volume: i64) -> Option<Self> {
        let advance = (volume.max(0) / 3 / 100 * 100).min(MAX_ADVANCE);
        let fee = advance / 10;
        let total = advance.checked_add(fee)?;
        let minimum = total.checked_add(5)? / 6;
        Self::new(advance, fee, 1_000, Some(minimum.max(1))).ok()
    }

    /// The withhold rate as people read it: `10.00 %` for 1,000 basis points.
    pub fn rate_percent(&self) -> String {
        format!(
            "{}.{:02} %",
            self.withhold_bps / 100,
            self.withhold_bps % 100
        )
    }

    /// What is repaid in all: the advance and the fee.
    pub fn total(&self) -> i64 {
        self.advance + self.fee
    }

    /// What a settlement of `net` withholds while `outstanding` is owed: the rate's share of
    /// the net, rounded down to the minor unit (the merchant keeps the fraction), never more
    /// than is outstanding; nothing from a net of zero or less.
    pub fn withholding(&self, net: i64, outstanding: i64) -> i64 {
        if net <= 0 || outstanding <= 0 {
            return 0;
        }
        let share = i128::from(net) * i128::from(self.withhold_bps) / i128::from(BASIS_POINTS);
        i64::try_from(share).unwrap_or(i64::MAX).min(outstanding)
    }

    /// What must have been repaid by `now` of a loan paid out at `paid_out_on`: the minimum
    /// for each whole 30 days since, never more than the total; nothing without a minimum.
    /// Counted whole from the payout, so a period that repaid more makes up for one after.
    pub fn due_by(&self, paid_out_on: OffsetDateTime, now: OffsetDateTime) -> i64 {
        let Some(minimum) = self.minimum_per_30_days else {
            return 0;
        };
        let periods = ((now - paid_out_on).whole_seconds() / MINIMUM_PERIOD.whole_seconds()).max(0);
        minimum.saturating_mul(periods).min(self.total())
    }

    /// Whether a loan paid out at `paid_out_on` that has had `repaid` is past due at `now`:
    /// less was repaid than `due_by`. It is back in good standing once it has not.
    pub fn is_past_due(
        &self,
        paid_out_on: OffsetDateTime,
        now: OffsetDateTime,
        repaid: i64,
    ) -> bool {
        repaid < self.due_by(paid_out_on, now)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_rate_reads_as_a_percentage_to_the_basis_point() {
        for (bps, shown) in [
            (1, "0.01 %"),
            (1_000, "10.00 %"),
            (1_234, "12.34 %"),
            (10_000, "100.00 %"),
        ] {
            assert_eq!(
                LoanTerms::new(100, 0, bps, None).unwrap().rate_percent(),
                shown
            );
        }
    }

    #[test]
    fn the_sandbox_underwriter_sizes_an_offer_by_volume() {
        let offer = |volume| {
            LoanTerms::underwritten(volume)
                .map(|t| (t.advance, t.fee, t.withhold_bps, t.minimum_per_30_days))
        };
        // $3,000.00 processed: a $1,000.00 advance, a $100.00 fee, $183.34 a 30 days.
        assert_eq!(offer(300_000), Some((100_000, 10_000, 1_000, Some(18_334))));
        assert_eq!(offer(300_299), Some((100_000, 10_000, 1_000, Some(18_334))));
        assert_eq!(offer(300), Some((100, 10, 1_000, Some(19))));
        for nothing in [0, 299, -5_000] {
            assert_eq!(offer(nothing), None, "{nothing}");
        }
        assert_eq!(offer(i64::MAX).map(|t| t.0), Some(MAX_ADVANCE));
    }

    #[test]
    fn terms_are_refused_by_the_field_they_break() {
        let cases = [
            ((100_000, 10_000, 1_000, None), None),
            (
                (100_000, 0, 10_000, Some(110_000)),
                Some("minimumPer30Days"),
            ),
            ((100_000, 0, 10_000, Some(100_000)), None),
            ((0, 0, 1_000, None), Some("advance")),
            ((MAX_ADVANCE + 1, 0, 1_000, None), Some("advance")),
            ((100_000, -1, 1_000, None), Some("fee")),
            ((100_000, 100_001, 1_000, None), Some("fee")),
            ((100_000, 0, 0, None), Some("withholdRateBps")),
            ((100_000, 0, 10_001, None), Some("withholdRateBps")),
            ((100_000, 0, 1_000, Some(0)), Some("minimumPer30Days")),
        ];
        for ((advance, fee, bps, minimum), refused) in cases {
            let got = LoanTerms::new(advance, fee, bps, minimum)
                .err()
                .map(|e| e.field);
            assert_eq!(got, refused, "{advance} {fee} {bps} {minimum:?}");
        }
    }

    /// The rule, row by row: the rate's share rounded down, capped by what is outstanding.
    #[test]
    fn a_settlement_withholds_the_rates_share_rounded_down_and_never_more_than_owed() {
        let terms = LoanTerms::new(100_000, 10_000, 1_000, None).unwrap();
        let cases = [
            (10_000, 110_000, 1_000),
            (10_009, 110_000, 1_000), // 1,000.9 rounds down: the merchant keeps the fraction
            (9, 110_000, 0),
            (10_000, 400, 400), // capped by what is owed
            (0, 110_000, 0),
            (-5_000, 110_000, 0), // refunds outran sales: nothing withheld
            (10_000, 0, 0),
            (i64::MAX, 110_000, 110_000),
        ];
        for (net, outstanding, withheld) in cases {
            assert_eq!(
                terms.withholding(net, outstanding),
                withheld,
                "{net} {outstanding}"
            );
        }
    }

    /// The minimum is counted per whole 30 days from the payout, cumulatively, up to the total.
    #[test]
    fn a_loan_is_past_due_when_less_was_repaid_than_the_minimums_due() {
        use time::macros::datetime;
        let paid_out = datetime!(2026-12-01 10:00 UTC);
        let terms = LoanTerms::new(100_000, 10_000, 1_000, Some(20_000)).unwrap();
        let day = Duration::days(1);
        let cases = [
            (29 * day, 0, 0, false),
            (30 * day - Duration::seconds(1), 0, 0, false),
            (30 * day, 0, 20_000, true),
            (30 * day, 19_999, 20_000, true),
            (30 * day, 20_000, 20_000, false),
            (59 * day, 20_000, 20_000, false),
            (60 * day, 25_000, 40_000, true),
            (60 * day, 40_000, 40_000, false),
            (60 * day, 45_000, 40_000, false), // more in the first period counts for the second
            (300 * day, 110_000, 110_000, false), // never more than the total
            (-day, 0, 0, false),
        ];
        for (since, repaid, due, past_due) in cases {
            let now = paid_out + since;
            assert_eq!(terms.due_by(paid_out, now), due, "{since}");
            assert_eq!(
                terms.is_past_due(paid_out, now, repaid),
                past_due,
                "{since} {repaid}"
            );
        }
        let no_minimum = LoanTerms::new(100_000, 0, 1_000, None).unwrap();
        assert!(!no_minimum.is_past_due(paid_out, paid_out + 300 * day, 0));
    }

    proptest! {
        /// Over any settlements, each withholds `min(rate × net, outstanding)` rounded down,
        /// the total withheld never passes the advance and the fee, and nothing is
        /// outstanding exactly when the total was withheld.
        #[test]
        fn withholdings_never_pass_the_total(
            advance in 1_i64..1_000_000,
            fee_share in 0_i64..=100,
            bps in 1_u32..=BASIS_POINTS,
            nets in proptest::collection::vec(-50_000_i64..500_000, 0..60),
        ) {
            let terms = LoanTerms::new(advance, advance * fee_share / 100, bps, None).unwrap();
            let mut outstanding = terms.total();
            let mut withheld = 0;
            for net in nets {
                let w = terms.withholding(net, outstanding);
                let share = if net > 0 { net * i64::from(bps) / 10_000 } else { 0 };
                prop_assert_eq!(w, share.min(outstanding));
                prop_assert!(w >= 0);
                withheld += w;
                outstanding -= w;
                prop_assert!(withheld <= terms.total());
                prop_assert_eq!(outstanding == 0, withheld == terms.total());
            }
        }
    }
}
