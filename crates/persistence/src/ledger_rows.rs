//! Rows of the ledger's table, written from a domain `Journal`: one per entry, each with its
//! journal's heading.

use diesel::Insertable;
use holdfast_domain::ledger::Journal;
use time::OffsetDateTime;

use crate::schema::ledger_entries;
use crate::timestamp::Instant;

#[derive(Debug, Insertable)]
#[diesel(table_name = ledger_entries)]
pub struct NewEntryRow<'a> {
    pub source_id: &'a str,
    pub kind: &'static str,
    pub purpose: &'static str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub merchant_id: &'a str,
    pub currency: &'a str,
    pub amount: i64,
    #[diesel(serialize_as = Instant)]
    pub posted_on: OffsetDateTime,
}

/// Each entry of `j` as its row.
pub fn entry_rows(j: &Journal) -> Vec<NewEntryRow<'_>> {
    let h = &j.heading;
    j.entries()
        .iter()
        .map(|e| NewEntryRow {
            source_id: &h.source,
            kind: h.kind.as_str(),
            purpose: e.purpose.as_str(),
            platform_id: h.platform_id.as_str(),
            mode: h.mode.as_str(),
            merchant_id: h.merchant_id.as_str(),
            currency: h.currency.as_str(),
            amount: e.amount,
            posted_on: h.posted_on,
        })
        .collect()
}
