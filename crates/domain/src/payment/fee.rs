//! What a plan charges the merchant, in integer minor units.
//!
//! A plan's fee is `basis_points` of the amount plus `fixed`. Where the money moves decides
//! which part a transaction carries, so an auth later captured costs what a sale costs (each
//! part capped at its own transaction's amount):
//!
//! | transaction | fee |
//! |---|---|
//! | auth (approved) | `fixed` |
//! | capture | `basis_points` × captured amount |
//! | sale (approved) | `basis_points` × amount + `fixed` |
//! | void, refund, any declined or failed attempt | 0 |
//!
//! The percentage is rounded half up to the minor unit. A transaction's fee never exceeds the
//! amount approved on it (a fixed fee above a small amount is cut to that amount).

use crate::Invalid;

use super::lifecycle::TxnType;

/// A plan's fee: `basis_points` of the amount plus `fixed` minor units, split between
/// transaction types as the module docs' table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeeRule {
    basis_points: u32,
    fixed: i64,
}

impl FeeRule {
    /// Validates a fee: `basis_points` from 0 to 10000 (0 to 100 %), `fixed` from 0 to 1,000,000
    /// minor units.
    pub fn new(basis_points: i64, fixed: i64) -> Result<Self, Invalid> {
        let basis_points = u32::try_from(basis_points)
            .ok()
            .filter(|bp| *bp <= 10_000)
            .ok_or_else(|| Invalid::new("fee.basisPoints", "must be 0 to 10000"))?;
        if !(0..=1_000_000).contains(&fixed) {
            return Err(Invalid::new(
                "fee.fixed",
                "must be 0 to 1000000 minor units",
            ));
        }
        Ok(Self {
            basis_points,
            fixed,
        })
    }

    /// The percentage part, in hundredths of a percent (290 is 2.9 %).
    pub fn basis_points(self) -> u32 {
        self.basis_points
    }

    /// The fixed part, in minor units, charged once per payment: on the auth or on the sale.
    pub fn fixed(self) -> i64 {
        self.fixed
    }

    /// The fee of an approved transaction of type `kind` that moved `approved` minor units
    /// (the table above), never more than `approved`: a 50-cent fixed fee on a 30-cent sale is
    /// 30 cents, never a merchant paying to be paid.
    pub fn charged_on(self, kind: TxnType, approved: i64) -> i64 {
        let fee = match kind {
            TxnType::Auth => self.fixed,
            TxnType::Sale => self.percentage_of(approved) + self.fixed,
            TxnType::Capture => self.percentage_of(approved),
            TxnType::Void | TxnType::Refund => 0,
        };
        fee.min(approved)
    }

    /// `basis_points` of `amount`, rounded half up.
    pub fn percentage_of(self, amount: i64) -> i64 {
        let scaled = i128::from(amount) * i128::from(self.basis_points);
        i64::try_from((scaled + 5_000) / 10_000).expect("bounded by amount")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_half_up() {
        let rule = FeeRule::new(290, 30).unwrap();
        let cases = [
            (1000, 29),
            (1, 0),
            (18, 1),
            (17, 0),
            (10_000, 290),
            (99_999_999, 2_900_000),
        ];
        for (amount, fee) in cases {
            assert_eq!(rule.percentage_of(amount), fee, "{amount}");
        }
    }

    /// Every row of the table in the module's docs, and the cap at the amount approved.
    #[test]
    fn each_type_carries_its_part_of_the_fee_never_more_than_it_moved() {
        let rule = FeeRule::new(290, 30).unwrap();
        let cases = [
            (TxnType::Auth, 1000, 30),
            (TxnType::Capture, 1000, 29),
            (TxnType::Sale, 1000, 59),
            (TxnType::Void, 1000, 0),
            (TxnType::Refund, 1000, 0),
            (TxnType::Auth, 20, 20),
            (TxnType::Sale, 30, 30),
            (TxnType::Capture, 0, 0),
        ];
        for (kind, approved, fee) in cases {
            assert_eq!(
                rule.charged_on(kind, approved),
                fee,
                "{kind:?} of {approved}"
            );
        }
    }

    #[test]
    fn bounds_name_the_field() {
        assert_eq!(
            FeeRule::new(10_001, 0).unwrap_err().field,
            "fee.basisPoints"
        );
        assert_eq!(FeeRule::new(-1, 0).unwrap_err().field, "fee.basisPoints");
        assert_eq!(FeeRule::new(0, -1).unwrap_err().field, "fee.fixed");
        assert!(FeeRule::new(10_000, 0).is_ok());
    }
}
