//! The ledger's storage: balances read from the entries, settlement runs, and the books checked
//! whole. A payment's journals are written by the stores that record what they post (a
//! payment's completion, a processor's later decision), in the same SQL transaction.

use async_trait::async_trait;

use super::{Event, StoreError};
use crate::ids::MerchantId;
use crate::ledger::{MerchantSettled, SettlementReport, SettlementRun};
use crate::merchant::Currency;
use crate::scope::Scope;

/// A merchant's money in one currency, as it reads it: what it may be paid out, what it will
/// have once its payments settle, and what is on its way to its bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Balance {
    /// The currency of the three amounts.
    pub currency: Currency,
    /// What may be paid out; below zero when refunds outran it.
    pub available: i64,
    /// What is not yet settled.
    pub pending: i64,
    /// What a payout is taking to the bank.
    pub in_transit: i64,
}

/// Which balance transactions a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BalanceTransactionFilter {
    /// Only this merchant's.
    pub merchant: Option<MerchantId>,
    /// Only journals of this kind.
    pub kind: Option<crate::ledger::JournalKind>,
    /// Only journals of this source (a transaction, a payout).
    pub source: Option<String>,
}

/// What checking the whole ledger found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LedgerCheck {
    /// How many journals were checked.
    pub journals: u64,
    /// How many entries they hold.
    pub entries: u64,
    /// Every difference found, in words (empty when the books are whole).
    pub problems: Vec<String>,
}

/// Storage of the ledger.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait LedgerStore: Send + Sync {
    /// `merchant`'s balances in `scope`, one per currency it has entries in, recomputed from
    /// the entries; none when it has none.
    async fn balances(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Vec<Balance>, StoreError>;

    /// What `merchant` processed in `currency` since `since` (its charges' gross, what the
    /// processors owe for them), in `scope`: what the sandbox underwriter sizes an offer by.
    async fn processed_since(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        currency: Currency,
        since: time::OffsetDateTime,
    ) -> Result<i64, StoreError>;

    /// The scope's journals that `filter` lets through, as their merchants read them, newest
    /// first (by when posted, then source and kind).
    async fn balance_transactions(
        &self,
        scope: &Scope,
        filter: &BalanceTransactionFilter,
        page: &crate::page::PageRequest,
    ) -> Result<crate::page::Page<crate::ledger::BalanceTransaction>, StoreError>;

    /// Checks every journal and entry of every platform: each journal moves two or more
    /// accounts, sums to zero and is of a known kind, agrees with its transaction (platform,
    /// mode, merchant, currency) and posts what the posting rules make of it, each settlement
    /// moves what its charge left pending, each money-moving transaction has its journal and
    /// no other has one, each payout has the journals of its moves and they post its amount, and every platform's accounts sum to zero in each mode and currency;
    /// and that no charge due for settlement a day or more before `now` is still pending.
    async fn check(&self, now: time::OffsetDateTime) -> Result<LedgerCheck, StoreError>;

    /// Settles every charge due at `run.now` (posted at or before its plan's
    /// `SettlementDelay::cutoff`, not settled yet) in one SQL transaction: each charge's
    /// settlement journal, one event per merchant that `announce` makes of what it settled,
    /// for each merchant with a loan being repaid the withholding `Loan::withholding` makes of
    /// the net it settled in the loan's currency (its repayment, journal, the loan's new
    /// standing and its events), and the run itself. A run that fails or is stopped writes nothing; charges already
    /// settled, by this run or a concurrent one, are left alone.
    async fn settle(
        &self,
        run: &SettlementRun,
        announce: std::sync::Arc<dyn Announce>,
    ) -> Result<SettlementReport, StoreError>;
}

/// What a settlement run decides as the store settles: each merchant's event, and what it
/// withholds for a loan (`services::SettlementAnnouncer`).
pub trait Announce: Send + Sync {
    /// The `balance.available` event of `settled`.
    fn event_for(&self, settled: MerchantSettled) -> Event;
    /// The run's withholding from `loan`, whose merchant it settled `net` for in the loan's
    /// currency, made `on` the run's posting time: the repayment's whole change, or `None`
    /// when the rule (`Loan::withholding`) withholds nothing.
    fn withholding(
        &self,
        loan: &crate::loan::Loan,
        net: i64,
        on: time::OffsetDateTime,
    ) -> Option<super::LoanChange>;
}
