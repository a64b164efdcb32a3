//! The double-entry ledger under every payment (docs/money.md): money a platform holds for its
//! merchants, in accounts by purpose, moved only by journals whose entries sum to zero.
//!
//! Amounts are integers in the journal's currency's minor units, debits positive and credits
//! negative: an asset (what a processor owes) grows by debits, what is owed to a merchant or
//! earned by the platform grows by credits. A merchant's balance is therefore shown negated:
//! an account that sums to -970 holds 970 for the merchant.

mod account;
mod balance_transaction;
mod journal;
mod posting;
mod settlement;

pub use account::Purpose;
pub use balance_transaction::{BalanceChanges, BalanceTransaction, BalanceTransactionId, Position};
pub use journal::{Entry, Heading, Journal, JournalKind, Unbalanced};
pub use posting::journal_for;
pub use settlement::{
    LATE_COMMIT_GRACE, MerchantSettled, SettledAmount, SettlementDelay, SettlementReport,
    SettlementRun,
};
