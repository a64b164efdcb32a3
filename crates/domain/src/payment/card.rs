//! Raw card data as it arrives. Every type here redacts itself in `Debug`, so card data cannot
//! reach a log through `{:?}`; none of them is ever stored in clear.

use std::fmt;

use time::{Month, OffsetDateTime};

use crate::Invalid;

/// A primary account number: 12 to 19 digits passing the Luhn check.
#[derive(Clone, PartialEq, Eq)]
pub struct CardNumber(String);

impl CardNumber {
    /// Checks a number as a client sent it; a failure names the `payment.number` field.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        let field = "payment.number";
        if !(12..=19).contains(&raw.len()) || !raw.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Invalid::new(field, "must be 12 to 19 digits"));
        }
        if !luhn_valid(raw) {
            return Err(Invalid::new(
                field,
                "is not a valid card number (Luhn check failed)",
            ));
        }
        Ok(Self(raw.to_owned()))
    }

    /// The first six digits: the issuer identification number.
    pub fn bin(&self) -> &str {
        &self.0[..6]
    }

    /// The last four digits, the only part of the number that may be shown or kept in clear.
    pub fn last4(&self) -> &str {
        &self.0[self.0.len() - 4..]
    }

    /// The full number, for the processor call and the vault's encryption only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CardNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CardNumber({}…{})", self.bin(), self.last4())
    }
}

/// Whether `text` may hold a card number: 12 digits or more in all, whatever separates them
/// (spaces, dashes, dots, a CVV typed after it). A page that puts back what was typed leaves such
/// text out, so a card number pasted into the wrong field is never echoed; no name, address or
/// website a merchant types holds that many digits.
pub fn could_hold_card_number(text: &str) -> bool {
    text.chars().filter(char::is_ascii_digit).count() >= 12
}

/// Whether `text` holds what could be a card number: 12 to 19 digits, in a row or split by
/// spaces, `-`, `.` or `_`, that pass the Luhn check. Text a client sends that is stored in
/// clear or echoed (a transaction's reference, metadata, a request id) is refused when it does;
/// a long order number almost never passes Luhn by chance and the same digits twice do not.
pub fn could_be_card_number(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_digit() || matches!(c, ' ' | '-' | '.' | '_')))
        .any(|chunk| {
            let digits: String = chunk.chars().filter(char::is_ascii_digit).collect();
            (12..=19).contains(&digits.len()) && luhn_valid(&digits)
        })
}

/// Whether `digits` passes the Luhn checksum; every byte must already be an ASCII digit.
pub fn luhn_valid(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 {
                let doubled = d * 2;
                if doubled > 9 { doubled - 9 } else { doubled }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The card security code: 3 or 4 digits. Never stored, not even encrypted.
#[derive(Clone, PartialEq, Eq)]
pub struct Cvv(String);

impl Cvv {
    /// Checks a code as a client sent it; a failure names the `payment.cvv` field.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        if (3..=4).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Self(raw.to_owned()))
        } else {
            Err(Invalid::new("payment.cvv", "must be 3 or 4 digits"))
        }
    }

    /// The code itself, for the processor call only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Cvv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Cvv(***)")
    }
}

/// Card expiration, given as `MMYY`. A card is valid through the last day of its month (UTC).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Expiration {
    month: Month,
    year: i32,
}

impl Expiration {
    /// A card expiration as sent: `MMYY`, not in the past.
    pub fn parse(raw: &str, now: OffsetDateTime) -> Result<Self, Invalid> {
        let expiration = Self::parse_mmyy(raw)?;
        if expiration.is_past(now) {
            return Err(Invalid::new("payment.expiration", "the card has expired"));
        }
        Ok(expiration)
    }

    /// The `MMYY` form alone, past or not (a stored card is checked when it is used).
    pub fn parse_mmyy(raw: &str) -> Result<Self, Invalid> {
        let field = "payment.expiration";
        if raw.len() != 4 || !raw.bytes().all(|b| b.is_ascii_digit()) {
            return Err(Invalid::new(field, "must be four digits, MMYY"));
        }
        let month: u8 = raw[..2].parse().expect("two digits");
        let yy: i32 = raw[2..].parse().expect("two digits");
        let month =
            Month::try_from(month).map_err(|_| Invalid::new(field, "month must be 01 to 12"))?;
        Ok(Self {
            month,
            year: 2000 + yy,
        })
    }

    /// `MMYY`, the form `parse_mmyy` reads.
    pub fn to_mmyy(self) -> String {
        format!("{:02}{:02}", u8::from(self.month), self.year % 100)
    }

    /// The month, `01` to `12`, and the four-digit year, as processors such as Adyen take them.
    pub fn month_and_year(self) -> (String, String) {
        (
            format!("{:02}", u8::from(self.month)),
            format!("{:04}", self.year),
        )
    }

    /// Whether the card has expired at `now`: its month is over.
    pub fn is_past(self, now: OffsetDateTime) -> bool {
        (self.year, u8::from(self.month)) < (now.year(), u8::from(now.month()))
    }
}

impl fmt::Debug for Expiration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Expiration(**/**)")
    }
}

/// Card data for a processor call. The CVV is absent when the card came from a token.
#[derive(Debug, Clone)]
pub struct CardData {
    /// The card's primary account number.
    pub number: CardNumber,
    /// The security code, when the client sent one.
    pub cvv: Option<Cvv>,
    /// The month through which the card is valid.
    pub expiration: Expiration,
    /// For a card from a wallet: the wallet and its cryptogram.
    pub wallet: Option<super::wallet::WalletProof>,
    /// The name on the card, when the client sent one.
    pub name: Option<CardholderName>,
}

/// The name on a card (`payment.name`): 1 to 100 characters a person can read (the rule of
/// every free-text name), kept sealed with the card and sent to the processor with it, never
/// shown or logged.
#[derive(Clone, PartialEq, Eq)]
pub struct CardholderName(String);

impl CardholderName {
    /// The longest name on a card we take.
    pub const MAX_CHARS: usize = 100;

    /// The name, normalised; a name that is empty, too long or not plain text is refused on
    /// `payment.name`.
    pub fn parse(raw: &str) -> Result<Self, Invalid> {
        crate::text::bounded_text("payment.name", raw, 1, Self::MAX_CHARS).map(Self)
    }

    /// The name itself, for the vault and the processor.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for CardholderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CardholderName(…)")
    }
}

/// Whether a card's CVV must be sent. A payment needs it; a token never keeps it, so there it
/// is only checked when sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CvvRule {
    /// A missing CVV is refused, as for a payment with raw card data.
    Required,
    /// A missing CVV is accepted, as when creating a token.
    Optional,
}

/// Card fields as a client sent them, each unchecked. The services check them against their
/// own clock (`check`), so no door decides what "expired" means.
#[derive(Clone)]
pub struct CardInput {
    /// The card number (`payment.number`), if sent.
    pub number: Option<String>,
    /// The security code (`payment.cvv`), if sent.
    pub cvv: Option<String>,
    /// The expiration as `MMYY` (`payment.expiration`), if sent.
    pub expiration: Option<String>,
    /// The name on the card (`payment.name`), if sent.
    pub name: Option<String>,
}

impl fmt::Debug for CardInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CardInput(..)")
    }
}

impl CardInput {
    /// The card, or the first field that is missing or wrong.
    pub fn check(self, now: OffsetDateTime, cvv_rule: CvvRule) -> Result<CardData, Invalid> {
        let required =
            |value: Option<String>, field| value.ok_or_else(|| Invalid::new(field, "is required"));
        let number = CardNumber::parse(&required(self.number, "payment.number")?)?;
        let cvv = match (self.cvv, cvv_rule) {
            (Some(raw), _) => Some(Cvv::parse(&raw)?),
            (None, CvvRule::Optional) => None,
            (None, CvvRule::Required) => return Err(Invalid::new("payment.cvv", "is required")),
        };
        let expiration = Expiration::parse(&required(self.expiration, "payment.expiration")?, now)?;
        let name = self
            .name
            .as_deref()
            .map(CardholderName::parse)
            .transpose()?;
        Ok(CardData {
            number,
            cvv,
            expiration,
            wallet: None,
            name,
        })
    }
}

#[cfg(test)]
mod tests;
