//! What a boarding form asks, as typed and as kept: every field checked on the way in (each
//! refusal names its field), secrets (tax id, account number) split off to be sealed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};

use super::checks::{self, Country};
use crate::Invalid;

crate::words! {
    /// The legal form of the business.
    #[derive(strum::Display, Deserialize)]
    #[strum(serialize_all = "snake_case")]
    #[serde(rename_all = "snake_case")]
    pub enum BusinessType {
        /// One person trading in their own name.
        SoleProprietorship,
        /// A partnership.
        Partnership,
        /// A limited liability company.
        Llc,
        /// A corporation.
        Corporation,
        /// A non-profit organisation.
        NonProfit,
    }
}

impl BusinessType {
    /// The type in words, for pages.
    pub fn label(self) -> &'static str {
        match self {
            Self::SoleProprietorship => "Sole proprietorship",
            Self::Partnership => "Partnership",
            Self::Llc => "Limited liability company",
            Self::Corporation => "Corporation",
            Self::NonProfit => "Non-profit",
        }
    }
}

/// An owner of 25 % or more.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Owner {
    /// Full name.
    pub name: String,
    /// Date of birth, `YYYY-MM-DD`.
    pub date_of_birth: String,
    /// Percent owned, 25 to 100.
    pub ownership: u32,
}

/// The non-secret answers, as kept (JSON). Every field is optional until submission.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Answers {
    /// The registered name.
    pub legal_name: Option<String>,
    /// The name the business trades under, when it differs.
    pub dba_name: Option<String>,
    /// Its legal form.
    pub business_type: Option<BusinessType>,
    /// Where it is registered: decides the tax id and bank rules.
    pub country: Option<Country>,
    /// The registered address: street and number.
    pub address_line1: Option<String>,
    /// The address's second line, if any.
    pub address_line2: Option<String>,
    /// The address's city.
    pub city: Option<String>,
    /// The address's state, county or region, if any.
    pub region: Option<String>,
    /// The address's postal code.
    pub postal_code: Option<String>,
    /// Where it sells (https).
    pub website: Option<String>,
    /// Its merchant category code (ISO 18245).
    pub mcc: Option<String>,
    /// Expected card volume a month, in whole units of the merchant's currency.
    pub monthly_volume: Option<u64>,
    /// Owners of 25 % or more.
    pub owners: Vec<Owner>,
    /// US only: the bank's ABA routing number (not a secret: it names the bank).
    pub routing_number: Option<String>,
    /// The payout account's holder.
    pub account_holder: Option<String>,
}

/// Owners a form can list: four of 25 % each make 100 %.
pub const MAX_OWNERS: usize = 4;

/// The secrets typed on a form: sealed before they are kept.
#[derive(Default, PartialEq, Eq)]
pub struct Secrets {
    /// The tax id, compact.
    pub tax_id: Option<String>,
    /// The account number (US) or IBAN, compact.
    pub bank_account: Option<String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(…)")
    }
}

/// Text of 1 to `max` characters by the shared rule for free text, or `None` when left empty.
fn text(
    typed: &BTreeMap<String, String>,
    field: &'static str,
    max: usize,
    errors: &mut Vec<Invalid>,
) -> Option<String> {
    checked(typed, field, errors, |v| {
        crate::text::bounded_text(field, v, 1, max)
    })
}

/// A field checked by `check` when typed; `None` when left empty.
fn checked<T>(
    typed: &BTreeMap<String, String>,
    field: &'static str,
    errors: &mut Vec<Invalid>,
    check: impl FnOnce(&str) -> Result<T, Invalid>,
) -> Option<T> {
    let value = typed.get(field).map_or("", |v| v.trim());
    if value.is_empty() {
        return None;
    }
    check(value).map_err(|e| errors.push(e)).ok()
}

fn website(raw: &str) -> Result<String, Invalid> {
    let bad = || Invalid::new("website", "must be a web address starting with https://");
    let rest = raw.strip_prefix("https://").ok_or_else(bad)?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_ok = host.contains('.')
        && host.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !host_ok || raw.len() > 200 || raw.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad());
    }
    Ok(raw.to_owned())
}

fn volume(raw: &str) -> Result<u64, Invalid> {
    raw.replace([',', ' '], "")
        .parse::<u64>()
        .ok()
        .filter(|v| *v <= 1_000_000_000_000)
        .ok_or_else(|| {
            Invalid::new(
                "monthlyVolume",
                "must be a whole number of your currency's units, such as 25000",
            )
        })
}

/// A date of birth of someone 18 or older at `today`.
fn birth_date(field: &'static str, raw: &str, today: Date) -> Result<String, Invalid> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let bad = || {
        Invalid::new(
            field,
            "must be a date of birth such as 1980-04-30, 18 or more years ago",
        )
    };
    let born = Date::parse(raw, &format).map_err(|_| bad())?;
    let adult = today
        .replace_year(today.year() - 18)
        .unwrap_or_else(|_| today.saturating_sub(time::Duration::days(18 * 365)));
    if born > adult || born.year() < 1900 {
        return Err(bad());
    }
    Ok(raw.to_owned())
}

/// The owner fields of slot `n` (1 to 4): `owner{n}Name`, `owner{n}DateOfBirth`,
/// `owner{n}Ownership`. A slot left empty lists nobody.
fn owners(typed: &BTreeMap<String, String>, today: Date, errors: &mut Vec<Invalid>) -> Vec<Owner> {
    const SLOTS: [[&str; 3]; MAX_OWNERS] = [
        ["owner1Name", "owner1DateOfBirth", "owner1Ownership"],
        ["owner2Name", "owner2DateOfBirth", "owner2Ownership"],
        ["owner3Name", "owner3DateOfBirth", "owner3Ownership"],
        ["owner4Name", "owner4DateOfBirth", "owner4Ownership"],
    ];
    let mut listed = Vec::new();
    for [name_field, dob_field, share_field] in SLOTS {
        let raw = |f: &str| typed.get(f).map_or("", |v| v.trim()).to_owned();
        if [name_field, dob_field, share_field]
            .iter()
            .all(|f| raw(f).is_empty())
        {
            continue;
        }
        let before = errors.len();
        let name = text(typed, name_field, 200, errors);
        if name.is_none() && errors.len() == before {
            errors.push(Invalid::new(name_field, "is needed for each owner listed"));
        }
        let dob = birth_date(dob_field, &raw(dob_field), today)
            .map_err(|e| errors.push(e))
            .ok();
        let share = raw(share_field)
            .trim_end_matches('%')
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|s| (25..=100).contains(s));
        if share.is_none() {
            errors.push(Invalid::new(
                share_field,
                "must be a whole percent from 25 to 100",
            ));
        }
        if let (Some(name), Some(date_of_birth), Some(ownership)) = (name, dob, share) {
            listed.push(Owner {
                name,
                date_of_birth,
                ownership,
            });
        }
    }
    let shares: Vec<u32> = listed.iter().map(|o| o.ownership).collect();
    if let Err(e) = checks::ownership(&shares) {
        errors.push(e);
    }
    listed
}

/// Checks what was typed on the form (field names as the page and the API name them) at
/// `now`; the tax id and bank rules are those of the country typed, or else of `saved_country`
/// (an earlier visit's). Every field is optional here: the answers so far, the secrets to
/// seal, or every refusal at once (nothing is kept when any field is refused).
pub fn check(
    typed: &BTreeMap<String, String>,
    now: OffsetDateTime,
    saved_country: Option<Country>,
) -> Result<(Answers, Secrets), Vec<Invalid>> {
    let mut errors = Vec::new();
    let typed_country = checked(typed, "country", &mut errors, |v| {
        Country::parse("country", v)
    });
    let country = typed_country.or(saved_country);
    let answers = Answers {
        legal_name: text(typed, "legalName", 200, &mut errors),
        dba_name: text(typed, "dbaName", 200, &mut errors),
        business_type: checked(typed, "businessType", &mut errors, |v| {
            v.parse().map_err(|_| {
                Invalid::new(
                    "businessType",
                    "must be one of sole_proprietorship, partnership, llc, corporation, non_profit",
                )
            })
        }),
        country: typed_country,
        address_line1: text(typed, "addressLine1", 200, &mut errors),
        address_line2: text(typed, "addressLine2", 200, &mut errors),
        city: text(typed, "city", 100, &mut errors),
        region: text(typed, "region", 100, &mut errors),
        postal_code: text(typed, "postalCode", 20, &mut errors),
        website: checked(typed, "website", &mut errors, website),
        mcc: checked(typed, "mcc", &mut errors, checks::mcc),
        monthly_volume: checked(typed, "monthlyVolume", &mut errors, volume),
        owners: owners(typed, now.date(), &mut errors),
        routing_number: None,
        account_holder: text(typed, "accountHolder", 200, &mut errors),
    };
    let mut answers = answers;
    let mut secrets = Secrets::default();
    let needs_country = |field: &'static str, errors: &mut Vec<Invalid>| {
        errors.push(Invalid::new(field, "needs the country first"));
    };
    let tax_typed = typed.get("taxId").is_some_and(|v| !v.trim().is_empty());
    match (country, tax_typed) {
        (Some(c), true) => {
            secrets.tax_id = checked(typed, "taxId", &mut errors, |v| checks::tax_id(c, v));
        }
        (None, true) => needs_country("taxId", &mut errors),
        _ => {}
    }
    match country {
        Some(Country::Us) => {
            answers.routing_number =
                checked(typed, "routingNumber", &mut errors, checks::routing_number);
            secrets.bank_account =
                checked(typed, "accountNumber", &mut errors, checks::account_number);
        }
        Some(c) => {
            secrets.bank_account = checked(typed, "iban", &mut errors, |v| checks::iban(c, v));
        }
        None => {
            for field in ["routingNumber", "accountNumber", "iban"] {
                if typed.get(field).is_some_and(|v| !v.trim().is_empty()) {
                    needs_country(field, &mut errors);
                }
            }
        }
    }
    if errors.is_empty() {
        Ok((answers, secrets))
    } else {
        Err(errors)
    }
}

impl Answers {
    /// The answers of `newer`, keeping what it leaves empty from `self`: a form filled over
    /// several visits keeps what each visit typed.
    #[must_use]
    pub fn merged(&self, newer: Answers) -> Answers {
        // A routing number is a US bank's: it does not outlive a change of country.
        let same_country = newer.country.is_none() || newer.country == self.country;
        let routing_number = newer
            .routing_number
            .or_else(|| self.routing_number.clone().filter(|_| same_country));
        Answers {
            legal_name: newer.legal_name.or_else(|| self.legal_name.clone()),
            dba_name: newer.dba_name.or_else(|| self.dba_name.clone()),
            business_type: newer.business_type.or(self.business_type),
            country: newer.country.or(self.country),
            address_line1: newer.address_line1.or_else(|| self.address_line1.clone()),
            address_line2: newer.address_line2.or_else(|| self.address_line2.clone()),
            city: newer.city.or_else(|| self.city.clone()),
            region: newer.region.or_else(|| self.region.clone()),
            postal_code: newer.postal_code.or_else(|| self.postal_code.clone()),
            website: newer.website.or_else(|| self.website.clone()),
            mcc: newer.mcc.or_else(|| self.mcc.clone()),
            monthly_volume: newer.monthly_volume.or(self.monthly_volume),
            owners: if newer.owners.is_empty() {
                self.owners.clone()
            } else {
                newer.owners
            },
            routing_number,
            account_holder: newer.account_holder.or_else(|| self.account_holder.clone()),
        }
    }

    /// The fields a submission still lacks, by their names, given whether the tax id and the
    /// bank account are on file.
    pub fn missing(&self, has_tax_id: bool, has_bank_account: bool) -> Vec<&'static str> {
        let us = self.country == Some(Country::Us);
        [
            ("legalName", self.legal_name.is_some()),
            ("businessType", self.business_type.is_some()),
            ("country", self.country.is_some()),
            ("taxId", has_tax_id),
            ("addressLine1", self.address_line1.is_some()),
            ("city", self.city.is_some()),
            ("postalCode", self.postal_code.is_some()),
            ("website", self.website.is_some()),
            ("mcc", self.mcc.is_some()),
            ("monthlyVolume", self.monthly_volume.is_some()),
            ("owner1Name", !self.owners.is_empty()),
            ("accountHolder", self.account_holder.is_some()),
            ("routingNumber", !us || self.routing_number.is_some()),
            (if us { "accountNumber" } else { "iban" }, has_bank_account),
        ]
        .into_iter()
        .filter(|(_, present)| !present)
        .map(|(field, _)| field)
        .collect()
    }
}

mod fields;

pub use fields::{FIELDS, field_label};

#[cfg(test)]
mod tests;
