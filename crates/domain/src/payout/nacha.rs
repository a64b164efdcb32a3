//! NACHA ACH files, the format US banks take credits in from a platform (docs/money.md): one
//! file of one CCD credit batch per payout run, and the bank's return entries read back.
//!
//! A file is 94-character records: a file header (`1`), a batch header (`5`), an entry per
//! credit (`6`), a batch control (`8`) and a file control (`9`), padded with records of nines
//! to a multiple of ten (the blocking factor). Each control carries its count, the sum of its
//! entries' amounts and the entry hash: the sum of the entries' 8-digit receiving bank ids, its
//! last ten digits.

use time::{Date, OffsetDateTime};

use super::ReturnCode;
use crate::Invalid;

/// Every record's length.
pub const RECORD_LENGTH: usize = 94;

/// The largest amount an entry holds: ten digits of cents.
pub const MAX_AMOUNT: i64 = 9_999_999_999;

/// The platform's side of its files: who sends them, through which bank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Originator {
    /// The routing number of the bank the file goes to (the ODFI, or its ACH operator).
    pub destination: String,
    /// That bank's name.
    pub destination_name: String,
    /// Who the file is from, as the bank knows it: ten characters (often a space and a routing
    /// number, or `1` and the company's tax id).
    pub origin: String,
    /// The platform's name.
    pub origin_name: String,
    /// The name merchants' statements show.
    pub company_name: String,
    /// The company id the bank assigned: ten characters.
    pub company_id: String,
    /// The routing number of the originating bank (its first eight digits lead each trace).
    pub odfi: String,
}

impl Originator {
    /// The originator as its files write it, or refused naming the setting that cannot be
    /// written: both routing numbers with their check digits right, the company's name and
    /// id, an origin of at most ten characters.
    pub fn checked(self) -> Result<Self, Invalid> {
        let odfi = routing("odfi", &self.odfi)?;
        let destination = routing("destination", &self.destination)?;
        for (field, value, max) in [
            ("companyName", &self.company_name, 16),
            ("companyId", &self.company_id, 10),
            ("origin", &self.origin, 10),
        ] {
            if value.trim().is_empty() || value.len() > max || !value.is_ascii() {
                return Err(Invalid::new(
                    field,
                    format!("must be 1 to {max} ASCII characters"),
                ));
            }
        }
        Ok(Self {
            destination,
            odfi,
            ..self
        })
    }
}

/// One credit to a merchant's account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Credit<'a> {
    /// The receiving bank's routing number.
    pub routing: &'a str,
    /// The account number: 4 to 17 digits.
    pub account: &'a str,
    /// Whether the account is a savings account (a checking one otherwise).
    pub savings: bool,
    /// Cents, 1 to `MAX_AMOUNT`.
    pub amount: i64,
    /// The receiver's name, as the bank shows it (cut to 22 characters).
    pub name: &'a str,
    /// Our reference, shown to the receiver (cut to 15 characters).
    pub reference: &'a str,
}

/// A file, and the trace number of each credit in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AchFile {
    /// The records, each ended by a line feed.
    pub text: String,
    /// Each credit's trace number: the originating bank's 8 digits and the entry's 7.
    pub traces: Vec<String>,
}

/// A return entry read from a bank's return file: which entry came back, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AchReturn<'a> {
    /// The trace number of the entry returned (as our file gave it).
    pub original_trace: &'a str,
    /// The return reason.
    pub code: ReturnCode,
}

/// A US routing number whose check digit holds; refused under `field` otherwise.
fn routing(field: &'static str, raw: &str) -> Result<String, Invalid> {
    crate::boarding::checks::routing_number(raw).map_err(|_| {
        Invalid::new(
            field,
            "must be a 9-digit US routing number whose check digit is right",
        )
    })
}

/// `text` as a field of `width`: upper case, only letters, digits, spaces and a few marks
/// (what every bank's parser takes), cut or padded with spaces on the right.
fn alphanumeric(text: &str, width: usize) -> String {
    let clean: String = text
        .chars()
        .map(|c| c.to_ascii_uppercase())
        .map(|c| {
            if c.is_ascii_alphanumeric() || " .,-&/".contains(c) {
                c
            } else {
                ' '
            }
        })
        .take(width)
        .collect();
    format!("{clean:<width$}")
}

/// `n` in `width` digits, zero-padded; its last `width` digits if it has more.
fn numeric(n: u64, width: usize) -> String {
    let digits = format!("{n:0width$}");
    digits[digits.len() - width..].to_owned()
}

/// A date as the records write it.
fn yymmdd(d: Date) -> String {
    format!(
        "{:02}{:02}{:02}",
        d.year() % 100,
        u8::from(d.month()),
        d.day()
    )
}

/// The file header and the batch header of a file created at `created`.
fn headers(
    originator: &Originator,
    destination: &str,
    odfi8: &str,
    created: OffsetDateTime,
    effective: Date,
    modifier: char,
) -> Vec<String> {
    let created = created.to_offset(time::UtcOffset::UTC);
    vec![
        format!(
            "101 {destination}{origin}{date}{hh:02}{mm:02}{modifier}094101{dest_name}{origin_name}{reference}",
            origin = alphanumeric(&originator.origin, 10),
            date = yymmdd(created.date()),
            hh = created.hour(),
            mm = created.minute(),
            dest_name = alphanumeric(&originator.destination_name, 23),
            origin_name = alphanumeric(&originator.origin_name, 23),
            reference = alphanumeric("", 8),
        ),
        format!(
            "5220{company}{discretionary}{company_id}CCD{description}{descriptive}{effective}   1{odfi8}{batch}",
            company = alphanumeric(&originator.company_name, 16),
            discretionary = alphanumeric("", 20),
            company_id = alphanumeric(&originator.company_id, 10),
            description = alphanumeric("PAYOUT", 10),
            descriptive = yymmdd(created.date()),
            effective = yymmdd(effective),
            batch = numeric(1, 7),
        ),
    ]
}

/// A credit's routing number and amount as a file writes them, or why it cannot be written
/// (in words that never repeat the account or routing number).
pub fn checked(credit: &Credit<'_>) -> Result<(String, u64), &'static str> {
    let routing = routing("routing", credit.routing)
        .map_err(|_| "the routing number's check digit is wrong")?;
    if !(4..=17).contains(&credit.account.len())
        || !credit.account.bytes().all(|b| b.is_ascii_digit())
    {
        return Err("the account number must be 4 to 17 digits");
    }
    let amount = u64::try_from(credit.amount)
        .ok()
        .filter(|a| (1..=MAX_AMOUNT.unsigned_abs()).contains(a))
        .ok_or("the amount must be 1 to 9999999999 cents")?;
    Ok((routing, amount))
}

/// The credits as one file of one CCD credit batch, created at `created` and to settle on
/// `effective`; `modifier` (`A`–`Z`, `0`–`9`) tells apart files sent the same day. The
/// entries' trace numbers count on from `first_trace` (1 to 9,999,999), which the caller keeps
/// from file to file, so a return names one entry ever sent. Refused, naming the credit, when a
/// routing number, account or amount cannot be written; refused when there is no credit (banks
/// refuse an empty batch) or more than the fields can count.
pub fn credit_file(
    originator: &Originator,
    credits: &[Credit<'_>],
    created: OffsetDateTime,
    effective: Date,
    modifier: char,
    first_trace: u32,
) -> Result<AchFile, Invalid> {
    if credits.is_empty() {
        return Err(Invalid::new("credits", "a file holds one credit or more"));
    }
    let last_trace = u64::from(first_trace) + credits.len() as u64 - 1;
    if first_trace == 0 || last_trace > 9_999_999 {
        return Err(Invalid::new(
            "firstTrace",
            "the trace numbers must stay within 1 to 9999999",
        ));
    }
    let destination = routing("destination", &originator.destination)?;
    let odfi = routing("odfi", &originator.odfi)?;
    if !modifier.is_ascii_uppercase() && !modifier.is_ascii_digit() {
        return Err(Invalid::new("modifier", "must be A to Z or 0 to 9"));
    }
    let company_id = alphanumeric(&originator.company_id, 10);
    let odfi8 = &odfi[..8];
    let mut records = headers(
        originator,
        &destination,
        odfi8,
        created,
        effective,
        modifier,
    );
    let mut traces = Vec::with_capacity(credits.len());
    let (mut hash, mut total) = (0_u64, 0_u64);
    for (i, credit) in credits.iter().enumerate() {
        let (routing, amount) = checked(credit)
            .map_err(|what| Invalid::new("credits", format!("credit {}: {what}", i + 1)))?;
        let trace = format!("{odfi8}{}", numeric(u64::from(first_trace) + i as u64, 7));
        let rdfi: u64 = routing[..8].parse().unwrap_or(0);
        hash += rdfi;
        total += amount;
        records.push(format!(
            "6{code}{routing}{account:<17}{amount}{reference}{name}  0{trace}",
            code = if credit.savings { "32" } else { "22" },
            account = credit.account,
            amount = numeric(amount, 10),
            reference = alphanumeric(credit.reference, 15),
            name = alphanumeric(credit.name, 22),
        ));
        traces.push(trace);
    }
    let entries = credits.len() as u64;
    if total > 999_999_999_999 {
        return Err(Invalid::new(
            "credits",
            "the credits' total is more than a file's 12 digits of cents",
        ));
    }
    records.push(format!(
        "8220{count}{hash}{debits}{credits}{company_id}{mac}{reserved}{odfi8}{batch}",
        count = numeric(entries, 6),
        hash = numeric(hash, 10),
        debits = numeric(0, 12),
        credits = numeric(total, 12),
        mac = alphanumeric("", 19),
        reserved = alphanumeric("", 6),
        batch = numeric(1, 7),
    ));
    let lines = records.len() + 1;
    let blocks = lines.div_ceil(10);
    records.push(format!(
        "9{batches}{blocks}{count}{hash}{debits}{credits}{reserved}",
        batches = numeric(1, 6),
        blocks = numeric(blocks as u64, 6),
        count = numeric(entries, 8),
        hash = numeric(hash, 10),
        debits = numeric(0, 12),
        credits = numeric(total, 12),
        reserved = alphanumeric("", 39),
    ));
    records.resize(blocks * 10, "9".repeat(RECORD_LENGTH));
    let mut text = String::with_capacity(records.len() * (RECORD_LENGTH + 1));
    for record in &records {
        debug_assert_eq!(record.len(), RECORD_LENGTH, "{record}");
        text.push_str(record);
        text.push('\n');
    }
    Ok(AchFile { text, traces })
}

/// Whether `text` is a whole file: a file header record first, and a file control record (a
/// `9` record that is not padding) after it. A file still being written, or cut short, is not.
pub fn is_whole(text: &str) -> bool {
    let mut records = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l));
    let header = records.next().is_some_and(|first| first.starts_with('1'));
    header && records.any(|r| r.starts_with('9') && !r.bytes().all(|b| b == b'9'))
}

/// The return entries of a bank's return file: each `99` addenda's return code and the trace
/// of the entry it returns. Refused, naming the line, when a record is not 94 characters or a
/// return's code is not one.
pub fn read_returns(text: &str) -> Result<Vec<AchReturn<'_>>, Invalid> {
    let mut returns = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if line.len() != RECORD_LENGTH || !line.is_ascii() {
            return Err(Invalid::new(
                "file",
                format!("line {} is not a 94-character record", i + 1),
            ));
        }
        if line.starts_with("799") {
            let code = ReturnCode::parse("file", &line[3..6]).map_err(|_| {
                Invalid::new("file", format!("line {} has no ACH return code", i + 1))
            })?;
            returns.push(AchReturn {
                original_trace: &line[6..21],
                code,
            });
        }
    }
    Ok(returns)
}

#[cfg(test)]
mod tests;
