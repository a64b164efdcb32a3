//! Rows of the ledger's tables, written from a domain `Journal`.

use diesel::Insertable;
use holdfast_domain::ledger::Journal;
use time::OffsetDateTime;

use crate::schema::{journals, ledger_entries};
use crate::timestamp::Instant;

#[derive(Debug, Insertable)]
#[diesel(table_name = journals, treat_none_as_default_value = false)]
pub struct NewJournalRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub merchant_id: &'a str,
    pub kind: &'static str,
    pub source_id: &'a str,
    pub currency: &'a str,
    #[diesel(serialize_as = Instant)]
    pub posted_on: OffsetDateTime,
}

impl<'a> From<&'a Journal> for NewJournalRow<'a> {
    fn from(j: &'a Journal) -> Self {
        Self {
            id: j.heading.id.as_str(),
            platform_id: j.heading.platform_id.as_str(),
            mode: j.heading.mode.as_str(),
            merchant_id: j.heading.merchant_id.as_str(),
            kind: j.heading.kind.as_str(),
            source_id: &j.heading.source,
            currency: j.heading.currency.as_str(),
            posted_on: j.heading.posted_on,
        }
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = ledger_entries)]
pub struct NewEntryRow<'a> {
    pub journal_id: &'a str,
    pub purpose: &'static str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub merchant_id: &'a str,
    pub currency: &'a str,
    pub amount: i64,
}

/// Each entry of `j` as its row.
pub fn entry_rows(j: &Journal) -> Vec<NewEntryRow<'_>> {
    j.entries()
        .iter()
        .map(|e| NewEntryRow {
            journal_id: j.heading.id.as_str(),
            purpose: e.purpose.as_str(),
            platform_id: j.heading.platform_id.as_str(),
            mode: j.heading.mode.as_str(),
            merchant_id: j.heading.merchant_id.as_str(),
            currency: j.heading.currency.as_str(),
            amount: e.amount,
        })
        .collect()
}
