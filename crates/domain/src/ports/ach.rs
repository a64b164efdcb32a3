//! The live bank rail's ports (docs/money.md, "The live rail"): the storage of NACHA files and
//! of the payouts they carry, and the directories the bank's files pass through.

use std::sync::Arc;

use async_trait::async_trait;
use time::{Date, OffsetDateTime};

use super::{Sealed, StoreError};
use crate::Invalid;
use crate::ids::{AchFileId, PayoutId};
use crate::payout::Payout;
use crate::payout::ach::FileNumbers;

/// A NACHA file to record, with the payouts it is to carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AchHandOver {
    /// Its id, and its name in the outbox.
    pub id: AchFileId,
    /// The routing number of the originating bank: its traces and modifiers count per bank.
    pub odfi: String,
    /// When it is created (its day, UTC, picks its modifier).
    pub created_on: OffsetDateTime,
    /// The day it settles.
    pub effective_on: Date,
    /// The live payouts it is to carry; those no longer pending when it is recorded are left
    /// out.
    pub payouts: Vec<PayoutId>,
}

/// Writes a file once the store knows which payouts it carries (those still pending, in the
/// order of their ids) and the numbers it takes.
pub trait WriteAchFile: Send + Sync {
    /// The file of `payouts`, written with `numbers` (its traces are the payouts' in order),
    /// sealed by the vault: its text holds account numbers.
    fn write(&self, numbers: FileNumbers, payouts: &[Payout]) -> Result<Sealed, Invalid>;
}

/// A file recorded and not yet known to be in the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsentAchFile {
    /// Its id: its name in the outbox.
    pub id: AchFileId,
    /// Its records, sealed.
    pub sealed: Sealed,
}

/// What recording a file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecorded {
    /// How many payouts it carries (none: nothing was recorded).
    pub payouts: u64,
    /// The sum of their amounts.
    pub total: i64,
}

/// Storage of the live rail's files, and of the payouts they carry.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait AchStore: Send + Sync {
    /// In one SQL transaction under the payouts' lock: moves each of `hand_over.payouts`
    /// still pending to in transit, takes the bank's next numbers (`FileNumbers::next`),
    /// has `write` write the file of the payouts moved, and records it with each payout's
    /// trace. Nothing is written when no payout was still pending, nor when `write` refuses.
    async fn record_ach_file(
        &self,
        hand_over: &AchHandOver,
        write: Arc<dyn WriteAchFile>,
    ) -> Result<FileRecorded, StoreError>;

    /// When the newest file through the originating bank `odfi` was made, if any.
    async fn last_ach_file_on(&self, odfi: &str) -> Result<Option<OffsetDateTime>, StoreError>;

    /// The files recorded and not yet marked sent, oldest first.
    async fn unsent_ach_files(&self) -> Result<Vec<UnsentAchFile>, StoreError>;

    /// Marks a file as in the outbox, at `at`.
    async fn ach_file_sent(&self, id: &AchFileId, at: OffsetDateTime) -> Result<(), StoreError>;

    /// The live payout the entry with trace number `trace` carried (the newest one, should the
    /// numbers have started again), or `None`.
    async fn payout_by_trace(&self, trace: &str) -> Result<Option<Payout>, StoreError>;

    /// Up to `limit` live payouts in transit whose file was put in the outbox and settled on or
    /// before `day`, by id, after `after`: the bank has paid them.
    async fn payouts_arrived(
        &self,
        day: Date,
        after: Option<PayoutId>,
        limit: u32,
    ) -> Result<Vec<Payout>, StoreError>;
}

/// A return file waiting in the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReturnFile {
    /// Its name in the inbox.
    pub name: String,
    /// Its text.
    pub text: String,
}

/// The directories the bank's files pass through: the operator's transfer (SFTP, for one)
/// takes the files in the outbox to the bank and puts the bank's return files in the inbox.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait BankDrop: Send + Sync {
    /// Puts `text` in the outbox as `name`, whole and durable: a file is there complete or
    /// not at all.
    async fn send(&self, name: &str, text: &str) -> Result<(), StoreError>;

    /// The return files waiting in the inbox, oldest first.
    async fn waiting_returns(&self) -> Result<Vec<ReturnFile>, StoreError>;

    /// Moves a return file out of the inbox: read, or refused (it could not be read).
    async fn returns_done(&self, name: &str, read: bool) -> Result<(), StoreError>;
}
