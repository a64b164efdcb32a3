//! Card brand and funding type, and brand detection by IIN range for cards no BIN table lists.

crate::words! {
    /// The card network a card belongs to, shown as `payment.brand` (spec 2.2) and used to route.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum CardBrand {
        /// Visa (IIN starting with 4).
        Visa,
        /// Mastercard (IIN 51-55 or 2221-2720).
        Mastercard,
        /// American Express (IIN 34 or 37).
        Amex,
        /// Discover (IIN 6011, 644-649, 65 or 622126-622925).
        Discover,
        /// JCB (IIN 3528-3589).
        Jcb,
        /// Diners Club (IIN 300-305, 36, 38 or 39).
        Diners,
        /// China Union Pay (other IINs starting with 62).
        UnionPay,
        /// No BIN table entry and no known IIN range matched the card.
        Unknown,
    }
}

crate::words! {
    /// Where a card's money comes from, shown as `payment.type` (spec 2.2).
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum FundingType {
        /// A credit card, drawing on a line of credit.
        Credit,
        /// A debit card, drawing on the holder's bank account.
        Debit,
        /// A prepaid card, drawing on a loaded balance.
        Prepaid,
        /// Not known, as for a card the BIN table does not list.
        Unknown,
    }
}

/// One published IIN range: card numbers whose first `digits` digits, read as a number, lie in
/// `low..=high` belong to `brand`. The server and the hosted fields' script read this one table
/// (the script receives it as JSON), so the browser and the API never disagree on a brand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IinRange {
    /// How many leading digits the range reads.
    pub digits: usize,
    /// The lowest prefix in the range.
    pub low: u32,
    /// The highest prefix in the range, included.
    pub high: u32,
    /// The brand of the cards in the range.
    pub brand: CardBrand,
}

const fn range(digits: usize, low: u32, high: u32, brand: CardBrand) -> IinRange {
    IinRange {
        digits,
        low,
        high,
        brand,
    }
}

/// The IIN ranges, in the order they are tried: the first match wins, so Discover's
/// 622126-622925 comes before Union Pay's other 62s.
pub const IIN_RANGES: &[IinRange] = &[
    range(1, 4, 4, CardBrand::Visa),
    range(2, 51, 55, CardBrand::Mastercard),
    range(4, 2221, 2720, CardBrand::Mastercard),
    range(2, 34, 34, CardBrand::Amex),
    range(2, 37, 37, CardBrand::Amex),
    range(4, 6011, 6011, CardBrand::Discover),
    range(3, 644, 649, CardBrand::Discover),
    range(2, 65, 65, CardBrand::Discover),
    range(6, 622_126, 622_925, CardBrand::Discover),
    range(4, 3528, 3589, CardBrand::Jcb),
    range(3, 300, 305, CardBrand::Diners),
    range(2, 36, 36, CardBrand::Diners),
    range(2, 38, 39, CardBrand::Diners),
    range(2, 62, 62, CardBrand::UnionPay),
];

impl IinRange {
    /// Whether a number starting with `prefix` (digits only) falls in this range.
    pub fn matches(&self, prefix: &str) -> bool {
        prefix
            .get(..self.digits)
            .and_then(|p| p.parse::<u32>().ok())
            .is_some_and(|p| (self.low..=self.high).contains(&p))
    }
}

impl CardBrand {
    /// The brand by the published IIN ranges, from the first six digits.
    pub fn from_iin(bin: &str) -> Self {
        IIN_RANGES
            .iter()
            .find(|range| range.matches(bin))
            .map_or(Self::Unknown, |range| range.brand)
    }

    /// How many digits the brand's security code has: four on the front of an American
    /// Express card, three on the back of every other.
    pub fn cvv_length(self) -> usize {
        match self {
            Self::Amex => 4,
            _ => 3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iin_ranges() {
        let cases = [
            ("411111", CardBrand::Visa),
            ("555555", CardBrand::Mastercard),
            ("222100", CardBrand::Mastercard),
            ("272099", CardBrand::Mastercard),
            ("272100", CardBrand::Unknown),
            ("378282", CardBrand::Amex),
            ("341111", CardBrand::Amex),
            ("601111", CardBrand::Discover),
            ("644000", CardBrand::Discover),
            ("622126", CardBrand::Discover),
            ("622125", CardBrand::UnionPay),
            ("353011", CardBrand::Jcb),
            ("305693", CardBrand::Diners),
            ("361234", CardBrand::Diners),
            ("999999", CardBrand::Unknown),
        ];
        for (bin, brand) in cases {
            assert_eq!(CardBrand::from_iin(bin), brand, "{bin}");
        }
    }

    #[test]
    fn the_words_stored_and_shown() {
        assert_eq!(
            CardBrand::ALL
                .iter()
                .copied()
                .map(CardBrand::as_str)
                .collect::<Vec<_>>(),
            [
                "visa",
                "mastercard",
                "amex",
                "discover",
                "jcb",
                "diners",
                "unionpay",
                "unknown"
            ]
        );
        assert_eq!(
            FundingType::ALL
                .iter()
                .copied()
                .map(FundingType::as_str)
                .collect::<Vec<_>>(),
            ["credit", "debit", "prepaid", "unknown"]
        );
        for &brand in CardBrand::ALL {
            assert_eq!(brand.as_str().parse::<CardBrand>(), Ok(brand));
        }
    }
}
