//! The storage of payouts: each made from a merchant's available balance, and moved by its bank
//! rail, with its journal and its event in the same SQL transaction as the move.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::{Event, StoreError};
use crate::idempotency::KeyedAnswer;
use crate::ids::{MerchantId, PayoutId};
use crate::ledger::Journal;
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::payout::{Payout, PayoutSchedule, PayoutState};
use crate::scope::Scope;

/// What making a payout did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Made {
    /// It was made, with its journal and event.
    Made,
    /// Nothing was written: the merchant's available balance in its currency, read under the
    /// lock, is below its amount (here, as the merchant reads it).
    Short {
        /// The available balance it found.
        available: i64,
    },
}

/// A payout's move, written only if it is still where `from` says.
#[derive(Debug, Clone)]
pub struct PayoutMove {
    /// The payout as it is after the move.
    pub payout: Payout,
    /// Where it must still be.
    pub from: PayoutState,
    /// What the move posts, if anything.
    pub journal: Option<Journal>,
    /// What it announces, if anything.
    pub event: Option<Event>,
}

/// Which payouts a list shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PayoutFilter {
    /// Only this merchant's.
    pub merchant: Option<MerchantId>,
    /// Only those in this state.
    pub state: Option<PayoutState>,
}

/// A scheduled payout run: its time, and the first 16 characters of its payouts' ids (each
/// payout's id is `po_`, these, and its ten-digit number in the run), so they sort by time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledRun {
    /// When it runs: the day whose schedules it pays out (UTC).
    pub now: OffsetDateTime,
    /// Sixteen characters of a fresh id, time first.
    pub id_prefix: String,
}

/// Makes the event that announces a payout a scheduled run made.
pub trait AnnouncePayout: Send + Sync {
    /// The `payout.created` event of `payout`.
    fn event_for(&self, payout: &Payout) -> Event;
}

/// Storage of payouts, scoped to a platform and mode except for the rails' reads.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait PayoutStore: Send + Sync {
    /// Makes `payout` (pending) with `journal` (its `payout` journal), `event` and `reply`, in
    /// one SQL transaction, if its merchant's available balance in its currency covers its
    /// amount. Payouts are made one at a time, so two can never take the same money.
    async fn make_payout(
        &self,
        payout: &Payout,
        journal: &Journal,
        event: &Event,
        reply: Option<KeyedAnswer>,
    ) -> Result<Made, StoreError>;

    /// Writes `change` (the payout's new state, its journal and event) and `reply` in one SQL
    /// transaction, if the payout is still in `change.from`: whether it was.
    async fn move_payout(
        &self,
        change: &PayoutMove,
        reply: Option<KeyedAnswer>,
    ) -> Result<bool, StoreError>;

    /// The payout `id` in `scope`, or `None`.
    async fn get_payout(&self, scope: &Scope, id: &PayoutId) -> Result<Option<Payout>, StoreError>;

    /// The scope's payouts that `filter` lets through, newest first.
    async fn list_payouts(
        &self,
        scope: &Scope,
        filter: &PayoutFilter,
        page: &PageRequest,
    ) -> Result<Page<Payout>, StoreError>;

    /// `merchant`'s payout schedule in `scope`; `None` when it has none (manual).
    async fn schedule(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
    ) -> Result<Option<PayoutSchedule>, StoreError>;

    /// Sets `merchant`'s payout schedule in `scope` (replacing any) at `at`, with `reply`.
    async fn set_schedule(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        schedule: PayoutSchedule,
        at: OffsetDateTime,
        reply: Option<KeyedAnswer>,
    ) -> Result<(), StoreError>;

    /// Pays out every schedule due on `run.now`'s day (UTC), in one SQL transaction: a pending
    /// `scheduled` payout of all that is available, with its journal and the event `announce`
    /// makes of it, for each merchant and currency whose schedule pays that weekday, that has
    /// no scheduled payout made since the day began, whose available balance is above zero
    /// and at least its minimum, and that has a bank account (in test mode, the sandbox
    /// paying account stands in). How many it made. A run stopped midway makes none.
    async fn pay_out_scheduled(
        &self,
        run: &ScheduledRun,
        announce: std::sync::Arc<dyn AnnouncePayout>,
    ) -> Result<u64, StoreError>;

    /// Up to `limit` payouts of every platform in `mode` that are in `state` and were made at
    /// or before `made_by`, oldest first (by when made, then id), after `after` (the last one
    /// of the previous batch): what a rail hands to its bank.
    async fn payouts_to_hand_over(
        &self,
        mode: Mode,
        state: PayoutState,
        made_by: OffsetDateTime,
        after: Option<(OffsetDateTime, PayoutId)>,
        limit: u32,
    ) -> Result<Vec<Payout>, StoreError>;
}
