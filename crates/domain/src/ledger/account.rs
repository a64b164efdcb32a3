//! Accounts: one per owner, currency and purpose, never created on their own. An account
//! exists once an entry names it, so the ledger needs no table of accounts; its balance is the
//! sum of its entries.

crate::words! {
    /// What an account holds. A merchant's purposes are accounts of the journal's merchant; the
    /// others are its platform's, in the journal's mode.
    #[derive(strum::Display, PartialOrd, Ord)]
    #[strum(serialize_all = "snake_case")]
    pub enum Purpose {
        /// What a merchant was paid and will have once its payments settle (credit).
        MerchantPending,
        /// What a merchant may be paid out (credit); below zero when refunds outran it.
        MerchantAvailable,
        /// What is on its way to a merchant's bank in a payout (credit).
        MerchantInTransit,
        /// What the platform earned in fees (credit).
        PlatformFees,
        /// What processors owe for the payments they approved (debit).
        ProcessorReceivable,
        /// What a merchant owes on its loan: the advance and the fee, less what was repaid
        /// (debit).
        LoanReceivable,
        /// What the platform earned in loan fees (credit).
        LoanFees,
        /// The platform's own money, lent to its merchants (credit once an advance is paid).
        PlatformFunding,
    }
}
