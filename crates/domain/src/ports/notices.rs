//! What processors tell Holdfast later (Adyen's notifications): each item kept as received, and
//! the change it makes, written together.

use async_trait::async_trait;
use time::OffsetDateTime;

use super::{Event, StoreError};
use crate::ids::{ConnectionId, NoticeId, PlatformId, TxnId};
use crate::mode::Mode;
use crate::payment::follow_up::OriginalMove;
use crate::payment::lifecycle::TxnState;
use crate::payment::routing::ProcessorConnection;
use crate::payment::transaction::Transaction;

/// One item a processor sent, as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorNotice {
    /// Its id (`pnt_`).
    pub id: NoticeId,
    /// The connection whose endpoint received it.
    pub connection_id: ConnectionId,
    /// The connection's platform.
    pub platform_id: PlatformId,
    /// The connection's mode.
    pub mode: Mode,
    /// The processor's event code, such as `CAPTURE`.
    pub event_code: String,
    /// Whether the processor reports success.
    pub success: bool,
    /// The processor's reference of what it is about.
    pub psp_reference: String,
    /// Our reference, as the processor repeats it: a transaction id.
    pub merchant_reference: Option<String>,
    /// The item as received (JSON), for inspection.
    pub item: String,
    /// When it arrived.
    pub received_on: OffsetDateTime,
}

/// What a notice changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeEffect {
    /// A follow-up's outcome: written only if the follow-up is still in `from`, with its
    /// original's move and the `transaction.updated` event, all or nothing.
    Settle(Box<Settlement>),
    /// Nothing to change; kept for inspection, saying why.
    Keep(NoticeNote),
}

/// A follow-up decided by a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// The follow-up in its final form.
    pub txn: Transaction,
    /// The state it must still be in.
    pub from: TxnState,
    /// Its original, and how it moves.
    pub original: Option<(TxnId, OriginalMove)>,
    /// `transaction.updated`, with the follow-up's final form.
    pub event: Event,
    /// What the decided follow-up moves (a settled capture or refund), posted with it.
    pub journal: Option<crate::ledger::Journal>,
    /// A capture or refund its processor failed after confirming it: everything its journals
    /// posted (a charge and its settlement, or a refund) is reversed with it, at this time.
    pub reverses: Option<time::OffsetDateTime>,
}

crate::words! {
    /// Why a notice changed nothing, as kept.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum NoticeNote {
        /// It names no transaction of this connection.
        UnknownReference,
        /// Its event code is not one Holdfast applies (an `AUTHORISATION`, a chargeback).
        NotApplied,
        /// The transaction was decided already (a repeat with other words, or a contradiction).
        AlreadyDecided,
    }
}

/// What keeping a notice did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeRecorded {
    /// Kept, and its settlement written.
    Applied,
    /// Kept; it changed nothing (its note says why).
    Kept,
    /// Kept; its settlement found the follow-up or its original moved on, so nothing was
    /// written but the notice (as `stale`).
    Stale,
    /// The same item (connection, event code, PSP reference, success) was kept before: nothing
    /// written.
    Repeated,
}

/// Storage of processor notices.
#[cfg_attr(any(test, feature = "mocks"), mockall::automock)]
#[async_trait]
pub trait NoticeStore: Send + Sync {
    /// The connection a notification endpoint names, of any platform and mode: the URL is the
    /// only scope a processor's request has (its credentials are then checked against it).
    async fn connection_for_notices(
        &self,
        id: &ConnectionId,
    ) -> Result<Option<ProcessorConnection>, StoreError>;

    /// Keeps `notice` and writes its `effect`, in one SQL transaction; a repeat writes nothing.
    async fn record_notice(
        &self,
        notice: &ProcessorNotice,
        effect: &NoticeEffect,
    ) -> Result<NoticeRecorded, StoreError>;
}
