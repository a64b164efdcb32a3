//! The checks an acquirer's boarding form makes of what a merchant types: tax ids by country,
//! US routing numbers (ABA checksum), IBANs (ISO 13616 mod-97), merchant category codes,
//! ownership. Each refusal names its field and says what is expected, never what was typed.

use crate::Invalid;

crate::words! {
    /// The countries a merchant can be boarded in: each has a tax id rule and a bank rule here.
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "UPPERCASE")]
    pub enum Country {
        /// United States: EIN, ABA routing number and account number.
        #[strum(serialize = "US")]
        Us,
        /// United Kingdom: UTR, IBAN.
        #[strum(serialize = "GB")]
        Gb,
        /// Germany: VAT number, IBAN.
        #[strum(serialize = "DE")]
        De,
        /// France: VAT number, IBAN.
        #[strum(serialize = "FR")]
        Fr,
        /// The Netherlands: VAT number, IBAN.
        #[strum(serialize = "NL")]
        Nl,
        /// Ireland: VAT number, IBAN.
        #[strum(serialize = "IE")]
        Ie,
        /// Spain: VAT number, IBAN.
        #[strum(serialize = "ES")]
        Es,
        /// Italy: VAT number, IBAN.
        #[strum(serialize = "IT")]
        It,
    }
}

impl Country {
    /// Parses an ISO 3166-1 alpha-2 code of a supported country, under `field`.
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
        raw.trim().to_ascii_uppercase().parse().map_err(|_| {
            let known: Vec<&str> = Self::ALL.iter().map(|c| c.as_str()).collect();
            Invalid::new(field, format!("must be one of {}", known.join(", ")))
        })
    }

    /// The country's name, for pages.
    pub fn name(self) -> &'static str {
        match self {
            Self::Us => "United States",
            Self::Gb => "United Kingdom",
            Self::De => "Germany",
            Self::Fr => "France",
            Self::Nl => "Netherlands",
            Self::Ie => "Ireland",
            Self::Es => "Spain",
            Self::It => "Italy",
        }
    }

    /// What a tax id of this country looks like, in words.
    pub fn tax_id_rule(self) -> &'static str {
        match self {
            Self::Us => "an EIN: 9 digits, such as 12-3456789",
            Self::Gb => "a UTR: 10 digits",
            Self::De => "a VAT number: DE and 9 digits",
            Self::Fr => "a VAT number: FR, 2 letters or digits, and 9 digits",
            Self::Nl => "a VAT number: NL, 9 digits, B and 2 digits",
            Self::Ie => "a VAT number: IE, 7 digits and 1 or 2 letters",
            Self::Es => "a VAT number: ES, a letter or digit, 7 digits and a letter or digit",
            Self::It => "a VAT number: IT and 11 digits",
        }
    }
}

/// Characters a person may type as separators in numbers: dropped before checking.
fn compact(raw: &str) -> String {
    raw.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '/'))
        .collect::<String>()
        .to_ascii_uppercase()
}

fn digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn alnum(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// EIN prefixes the IRS has never assigned.
const UNASSIGNED_EIN_PREFIXES: &[&str] = &[
    "00", "07", "08", "09", "17", "18", "19", "28", "29", "49", "69", "70", "78", "79", "89", "96",
    "97",
];

/// A tax id, checked for its country and kept compact (no separators). Sealed like a card
/// number once stored; only its last four characters are ever shown.
pub fn tax_id(country: Country, raw: &str) -> Result<String, Invalid> {
    let id = compact(raw);
    // Every rule below is ASCII and reads by position: anything else is refused first.
    let ok = id.is_ascii()
        && match country {
            Country::Us => {
                id.len() == 9 && digits(&id) && !UNASSIGNED_EIN_PREFIXES.contains(&&id[..2])
            }
            Country::Gb => id.len() == 10 && digits(&id),
            Country::De => id.len() == 11 && id.starts_with("DE") && digits(&id[2..]),
            Country::Fr => {
                id.len() == 13 && id.starts_with("FR") && alnum(&id[2..4]) && digits(&id[4..])
            }
            Country::Nl => {
                id.len() == 14
                    && id.starts_with("NL")
                    && digits(&id[2..11])
                    && &id[11..12] == "B"
                    && digits(&id[12..])
            }
            Country::Ie => {
                (10..=11).contains(&id.len())
                    && id.starts_with("IE")
                    && digits(&id[2..9])
                    && id[9..].bytes().all(|b| b.is_ascii_uppercase())
            }
            Country::Es => {
                id.len() == 11 && id.starts_with("ES") && alnum(&id[2..]) && digits(&id[3..10])
            }
            Country::It => id.len() == 13 && id.starts_with("IT") && digits(&id[2..]),
        };
    if ok {
        Ok(id)
    } else {
        Err(Invalid::new(
            "taxId",
            format!("must be {} for {}", country.tax_id_rule(), country.name()),
        ))
    }
}

/// A US routing number: 9 digits whose ABA checksum holds
/// (3×(d1+d4+d7) + 7×(d2+d5+d8) + (d3+d6+d9) is a multiple of 10).
pub fn routing_number(raw: &str) -> Result<String, Invalid> {
    let n = compact(raw);
    let bad = || {
        Invalid::new(
            "routingNumber",
            "must be a 9-digit US routing number (ABA) whose check digit is right",
        )
    };
    if n.len() != 9 || !digits(&n) {
        return Err(bad());
    }
    let d: Vec<u32> = n.bytes().map(|b| u32::from(b - b'0')).collect();
    let sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
    if sum.is_multiple_of(10) && n != "000000000" {
        Ok(n)
    } else {
        Err(bad())
    }
}

/// A US bank account number: 4 to 17 digits.
pub fn account_number(raw: &str) -> Result<String, Invalid> {
    let n = compact(raw);
    if (4..=17).contains(&n.len()) && digits(&n) {
        Ok(n)
    } else {
        Err(Invalid::new("accountNumber", "must be 4 to 17 digits"))
    }
}

/// The length of an IBAN of each supported country (ISO 13616 registry); the US has none.
fn iban_length(country: Country) -> Option<usize> {
    match country {
        Country::Us => None,
        Country::Gb | Country::De | Country::Ie => Some(22),
        Country::Fr | Country::It => Some(27),
        Country::Nl => Some(18),
        Country::Es => Some(24),
    }
}

/// An IBAN of `country`: its length for the country, and the ISO 13616 check (the number read
/// with its first four characters moved to the end, letters as 10 to 35, is 1 modulo 97).
pub fn iban(country: Country, raw: &str) -> Result<String, Invalid> {
    let iban = compact(raw);
    let bad = || {
        Invalid::new(
            "iban",
            format!(
                "must be an IBAN of {} whose check digits are right",
                country.name()
            ),
        )
    };
    let expected = iban_length(country).ok_or_else(bad)?;
    if iban.len() != expected || !iban.starts_with(country.as_str()) || !alnum(&iban) {
        return Err(bad());
    }
    let rearranged = iban[4..].bytes().chain(iban[..4].bytes());
    let mut remainder: u32 = 0;
    for b in rearranged {
        let value = if b.is_ascii_digit() {
            u32::from(b - b'0')
        } else {
            u32::from(b - b'A') + 10
        };
        let width = if value < 10 { 10 } else { 100 };
        remainder = (remainder * width + value) % 97;
    }
    if remainder == 1 { Ok(iban) } else { Err(bad()) }
}

/// A merchant category code (ISO 18245): four digits.
pub fn mcc(raw: &str) -> Result<String, Invalid> {
    let code = raw.trim();
    if code.len() == 4 && digits(code) && code != "0000" {
        Ok(code.to_owned())
    } else {
        Err(Invalid::new(
            "mcc",
            "must be a four-digit merchant category code, such as 5734",
        ))
    }
}

/// Owners listed on a boarding form: those with 25 % or more. Each share is 25 to 100; the
/// shares add up to at most 100.
pub fn ownership(shares: &[u32]) -> Result<(), Invalid> {
    if let Some(position) = shares.iter().position(|s| !(25..=100).contains(s)) {
        return Err(Invalid::new(
            "owners",
            format!(
                "owner {} must own 25 to 100 percent (list only owners of 25 % or more)",
                position + 1
            ),
        ));
    }
    let total: u32 = shares.iter().sum();
    if total > 100 {
        return Err(Invalid::new(
            "owners",
            format!("ownership adds up to {total} percent; it can be at most 100"),
        ));
    }
    Ok(())
}

/// The end of a sealed value, all that is ever stored in clear or shown of it: its last four
/// characters, or fewer for a short value (never more than half of it), so a 4-digit account
/// number is not kept whole beside its sealed copy.
pub fn last4(value: &str) -> String {
    let chars: Vec<char> = value.chars().collect();
    let shown = (chars.len() / 2).min(4);
    chars[chars.len() - shown..].iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tax_ids_follow_their_country() {
        use Country::*;
        for (country, raw, ok) in [
            (Us, "12-3456789", true),
            (Us, "123456789", true),
            (Us, "99-0000002", true),
            (Us, "00-1234567", false),
            (Us, "07-1234567", false),
            (Us, "98-765432", false),
            (Us, "98-76543210", false),
            (Us, "98-765432A", false),
            (Gb, "1234567890", true),
            (Gb, "123456789", false),
            (De, "DE123456789", true),
            (De, "de 123 456 789", true),
            (De, "DE12345678", false),
            (De, "FR123456789", false),
            (Fr, "FR12345678901", true),
            (Fr, "FRAB123456789", true),
            (Fr, "FR1234567890", false),
            (Nl, "NL123456789B01", true),
            (Nl, "NL123456789A01", false),
            (Ie, "IE1234567T", true),
            (Ie, "IE1234567TW", true),
            (Ie, "IE1234567", false),
            (Es, "ESX1234567X", true),
            (Es, "ES12345678Z", true),
            (Es, "ESX123456XX", false),
            (It, "IT12345678901", true),
            (It, "IT1234567890", false),
            // Non-ASCII where a rule reads by position: refused, never a panic.
            (Fr, "FRaé12345678", false),
            (Nl, "NL12345678é01", false),
            (Ie, "IE123456é", false),
            (Us, "１２３４５６７８９", false),
        ] {
            let got = tax_id(country, raw);
            assert_eq!(got.is_ok(), ok, "{country:?} {raw}");
            if let Err(e) = got {
                assert_eq!(e.field, "taxId");
                assert!(!e.message.contains(raw), "never echoed: {}", e.message);
            }
        }
    }

    #[test]
    fn routing_numbers_need_their_aba_check_digit() {
        for (raw, ok) in [
            ("011000015", true),  // Federal Reserve Bank of Boston
            ("021000021", true),  // JPMorgan Chase
            ("121000358", true),  // Bank of America, California
            ("011000016", false), // one digit off
            ("021000012", false), // two digits swapped
            ("000000000", false),
            ("12100035", false),
            ("1210003580", false),
            ("12100035A", false),
        ] {
            assert_eq!(routing_number(raw).is_ok(), ok, "{raw}");
        }
    }

    #[test]
    fn ibans_need_their_length_and_mod_97() {
        use Country::*;
        for (country, raw, ok) in [
            (Gb, "GB82 WEST 1234 5698 7654 32", true),
            (Gb, "GB82WEST12345698765433", false),
            (Gb, "GB82WEST1234569876543", false),
            (De, "DE89 3704 0044 0532 0130 00", true),
            (De, "DE89370400440532013001", false),
            (Fr, "FR14 2004 1010 0505 0001 3M02 606", true),
            (Nl, "NL91 ABNA 0417 1643 00", true),
            (Ie, "IE29 AIBK 9311 5212 3456 78", true),
            (Es, "ES91 2100 0418 4502 0005 1332", true),
            (It, "IT60 X054 2811 1010 0000 0123 456", true),
            (De, "GB82WEST12345698765432", false),
            (Us, "GB82WEST12345698765432", false),
        ] {
            assert_eq!(iban(country, raw).is_ok(), ok, "{country:?} {raw}");
        }
    }

    #[test]
    fn ownership_counts_owners_of_a_quarter_or_more_up_to_the_whole() {
        for (shares, ok) in [
            (&[][..], true),
            (&[100][..], true),
            (&[50, 50][..], true),
            (&[25, 25, 25, 25][..], true),
            (&[60, 50][..], false),
            (&[24][..], false),
            (&[0][..], false),
            (&[101][..], false),
        ] {
            assert_eq!(ownership(shares).is_ok(), ok, "{shares:?}");
        }
    }

    #[test]
    fn other_fields() {
        assert!(mcc("5734").is_ok());
        for bad in ["573", "57345", "ABCD", "0000", ""] {
            assert!(mcc(bad).is_err(), "{bad}");
        }
        assert!(account_number("000123456789").is_ok());
        for bad in ["123", "123456789012345678", "12345A"] {
            assert!(account_number(bad).is_err(), "{bad}");
        }
        assert_eq!(last4("123456789"), "6789");
        assert_eq!(last4("12345678"), "5678");
        assert_eq!(last4("1234567"), "567");
        assert_eq!(last4("12345"), "45");
        assert_eq!(last4("1234"), "34", "a short value is never kept whole");
        assert_eq!(last4("12"), "2");
        assert_eq!(Country::parse("country", " gb ").unwrap(), Country::Gb);
        assert!(Country::parse("country", "ZZ").is_err());
    }
}
