//! Amounts: positive integers in the currency's minor unit (cents for USD).

use crate::Invalid;

/// An amount of money in the currency's minor units: a positive integer, at most `MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Amount(i64);

impl Amount {
    /// The largest amount one transaction may carry: 999,999.99 in a two-decimal currency.
    pub const MAX: i64 = 99_999_999;

    /// Validates `minor_units`; a refusal names `field`, the request field it came from.
    pub fn new(field: &'static str, minor_units: i64) -> Result<Self, Invalid> {
        if (1..=Self::MAX).contains(&minor_units) {
            Ok(Self(minor_units))
        } else {
            Err(Invalid::new(
                field,
                format!(
                    "must be a positive integer in minor units, at most {}",
                    Self::MAX
                ),
            ))
        }
    }

    /// The amount in minor units, as stored and sent over the API.
    pub fn minor_units(self) -> i64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds() {
        for (value, ok) in [
            (0, false),
            (-1, false),
            (1, true),
            (Amount::MAX, true),
            (Amount::MAX + 1, false),
        ] {
            assert_eq!(Amount::new("amount", value).is_ok(), ok, "{value}");
        }
        assert_eq!(Amount::new("amount", 0).unwrap_err().field, "amount");
    }
}
