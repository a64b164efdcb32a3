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
use crate::payout::{Payout, PayoutState};
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

    /// Up to `limit` payouts of every platform in `mode` that are in `state` and were made at
    /// or before `made_by`, oldest first: what a rail hands to its bank.
    async fn payouts_to_hand_over(
        &self,
        mode: Mode,
        state: PayoutState,
        made_by: OffsetDateTime,
        limit: u32,
    ) -> Result<Vec<Payout>, StoreError>;
}
