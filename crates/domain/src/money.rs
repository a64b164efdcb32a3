//! Amounts as people read them: minor units shown in their currency's major unit, with its
//! sign where one is unambiguous ("$25.00", "¥2,500", "BHD 1.500").

pub mod iso4217;

use crate::merchant::Currency;

/// The signs shown before an amount instead of its code; every other currency shows its code.
const SIGNS: &[(&str, &str)] = &[("EUR", "€"), ("GBP", "£"), ("JPY", "¥"), ("USD", "$")];

/// `minor` units of `currency`, for people: the sign or code, thousands grouped with commas,
/// the currency's own count of decimals.
pub fn format(minor: i64, currency: Currency) -> String {
    let digits = u32::from(currency.minor_units());
    let scale = 10_u64.pow(digits);
    let magnitude = minor.unsigned_abs();
    let (whole, fraction) = (magnitude / scale, magnitude % scale);
    let grouped = group_thousands(whole);
    let number = if digits == 0 {
        grouped
    } else {
        format!("{grouped}.{fraction:0width$}", width = digits as usize)
    };
    let sign = if minor < 0 { "-" } else { "" };
    match SIGNS.iter().find(|(code, _)| *code == currency.as_str()) {
        Some((_, symbol)) => format!("{sign}{symbol}{number}"),
        None => format!("{sign}{} {number}", currency.as_str()),
    }
}

fn group_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_their_currency() {
        let c = |code| Currency::parse(code).unwrap();
        for (minor, code, shown) in [
            (2500, "USD", "$25.00"),
            (5, "USD", "$0.05"),
            (123_456_789, "USD", "$1,234,567.89"),
            (2500, "JPY", "¥2,500"),
            (1500, "BHD", "BHD 1.500"),
            (99_999_999, "EUR", "€999,999.99"),
            (-250, "GBP", "-£2.50"),
            (1000, "CHF", "CHF 10.00"),
            (0, "XOF", "XOF 0"),
        ] {
            assert_eq!(format(minor, c(code)), shown, "{minor} {code}");
        }
    }
}
