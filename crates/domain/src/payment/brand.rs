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

impl CardBrand {
    /// The brand by the published IIN ranges, from the first six digits.
    pub fn from_iin(bin: &str) -> Self {
        let prefix = |n: usize| bin.get(..n).and_then(|p| p.parse::<u32>().ok());
        let in_range =
            |n: usize, lo: u32, hi: u32| prefix(n).is_some_and(|p| (lo..=hi).contains(&p));
        if in_range(1, 4, 4) {
            Self::Visa
        } else if in_range(2, 51, 55) || in_range(4, 2221, 2720) {
            Self::Mastercard
        } else if in_range(2, 34, 34) || in_range(2, 37, 37) {
            Self::Amex
        } else if in_range(4, 6011, 6011)
            || in_range(3, 644, 649)
            || in_range(2, 65, 65)
            || in_range(6, 622_126, 622_925)
        {
            Self::Discover
        } else if in_range(4, 3528, 3589) {
            Self::Jcb
        } else if in_range(3, 300, 305) || in_range(2, 36, 36) || in_range(2, 38, 39) {
            Self::Diners
        } else if in_range(2, 62, 62) {
            Self::UnionPay
        } else {
            Self::Unknown
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
