//! The row of the ledger's table written from a domain `Journal`: its heading, and what it
//! posts to each account purpose (0 for those it does not move).

use diesel::Insertable;
use holdfast_domain::ledger::{Journal, Purpose};
use time::OffsetDateTime;

use crate::schema::ledger_journals;
use crate::timestamp::Instant;

#[derive(Debug, Insertable)]
#[diesel(table_name = ledger_journals)]
pub struct NewJournalRow<'a> {
    pub source_id: &'a str,
    pub kind: &'static str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub merchant_id: &'a str,
    pub currency: &'a str,
    #[diesel(serialize_as = Instant)]
    pub posted_on: OffsetDateTime,
    pub merchant_pending: i64,
    pub merchant_available: i64,
    pub merchant_in_transit: i64,
    pub platform_fees: i64,
    pub processor_receivable: i64,
    pub loan_receivable: i64,
    pub loan_fees: i64,
    pub platform_funding: i64,
}

impl<'a> From<&'a Journal> for NewJournalRow<'a> {
    fn from(j: &'a Journal) -> Self {
        let h = &j.heading;
        Self {
            source_id: &h.source,
            kind: h.kind.as_str(),
            platform_id: h.platform_id.as_str(),
            mode: h.mode.as_str(),
            merchant_id: h.merchant_id.as_str(),
            currency: h.currency.as_str(),
            posted_on: h.posted_on,
            merchant_pending: j.amount_to(Purpose::MerchantPending),
            merchant_available: j.amount_to(Purpose::MerchantAvailable),
            merchant_in_transit: j.amount_to(Purpose::MerchantInTransit),
            platform_fees: j.amount_to(Purpose::PlatformFees),
            processor_receivable: j.amount_to(Purpose::ProcessorReceivable),
            loan_receivable: j.amount_to(Purpose::LoanReceivable),
            loan_fees: j.amount_to(Purpose::LoanFees),
            platform_funding: j.amount_to(Purpose::PlatformFunding),
        }
    }
}
