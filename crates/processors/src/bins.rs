//! The BIN table: brand, funding type, issuer and country by the card's first six digits.

use std::collections::HashMap;

use holdfast_domain::payment::brand::{CardBrand, FundingType};
use holdfast_domain::ports::{BinInfo, BinLookup};

/// The table shipped with Holdfast.
pub const DEFAULT_TABLE: &str = include_str!("../data/bins.csv");

#[derive(Debug, Clone)]
pub struct BinTable {
    entries: HashMap<String, BinInfo>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("BIN table line {line}: {message}")]
pub struct BinTableError {
    pub line: usize,
    pub message: String,
}

impl BinTable {
    #[expect(
        clippy::expect_used,
        reason = "the table is embedded in the binary, and a test parses it"
    )]
    pub fn shipped() -> Self {
        Self::from_csv(DEFAULT_TABLE).expect("the shipped BIN table is valid")
    }

    /// Parses `bin,brand,funding,issuer,country` lines after a header line. Issuer and country
    /// may be empty. Every line is checked; the first bad one is reported with its number.
    pub fn from_csv(text: &str) -> Result<Self, BinTableError> {
        let mut entries = HashMap::new();
        for (index, line) in text.lines().enumerate().skip(1) {
            let line_no = index.saturating_add(1);
            let bad = |message: String| BinTableError {
                line: line_no,
                message,
            };
            if line.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let [bin, brand, funding, issuer, country] = fields[..] else {
                return Err(bad(format!("expected 5 fields, found {}", fields.len())));
            };
            if bin.len() != 6 || !bin.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("bin {bin:?} is not six digits")));
            }
            let brand: CardBrand = brand
                .parse()
                .map_err(|_| bad(format!("unknown brand {brand:?}")))?;
            let funding: FundingType = funding
                .parse()
                .map_err(|_| bad(format!("unknown funding type {funding:?}")))?;
            let text = |s: &str| (!s.is_empty()).then(|| s.to_owned());
            let info = BinInfo {
                bin: bin.to_owned(),
                brand,
                funding,
                issuer: text(issuer),
                country: text(country),
            };
            if entries.insert(bin.to_owned(), info).is_some() {
                return Err(bad(format!("bin {bin} is listed twice")));
            }
        }
        Ok(Self { entries })
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl BinLookup for BinTable {
    fn lookup(&self, bin: &str) -> BinInfo {
        self.entries.get(bin).cloned().unwrap_or_else(|| BinInfo {
            bin: bin.to_owned(),
            brand: CardBrand::from_iin(bin),
            funding: FundingType::Unknown,
            issuer: None,
            country: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_table_parses_and_answers() {
        let table = BinTable::shipped();
        assert!(table.len() >= 10);
        let debit = table.lookup("400005");
        assert_eq!(
            (debit.brand, debit.funding),
            (CardBrand::Visa, FundingType::Debit)
        );
        assert_eq!(
            table.lookup("378282").issuer.as_deref(),
            Some("Holdfast Test Amex")
        );
    }

    #[test]
    fn unlisted_cards_get_their_brand_from_the_iin_ranges() {
        let info = BinTable::shipped().lookup("510510");
        assert_eq!(
            (info.brand, info.funding, info.issuer),
            (CardBrand::Mastercard, FundingType::Unknown, None)
        );
    }

    #[test]
    fn bad_lines_are_reported_with_their_number() {
        let cases = [
            (
                "bin,brand,funding,issuer,country\n41111,visa,credit,,\n",
                2,
                "six digits",
            ),
            (
                "h\n411111,visa,credit,,\n411111,visa,debit,,\n",
                3,
                "listed twice",
            ),
            ("h\n411111,venus,credit,,\n", 2, "unknown brand"),
            ("h\n411111,visa,gold,,\n", 2, "unknown funding"),
            ("h\n411111,visa\n", 2, "expected 5 fields"),
        ];
        for (text, line, message) in cases {
            let err = BinTable::from_csv(text).unwrap_err();
            assert_eq!(err.line, line, "{text:?}");
            assert!(err.message.contains(message), "{err}");
        }
    }
}
