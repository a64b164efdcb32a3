//! What processors tell Holdfast later: Adyen's notifications, received at one endpoint per
//! connection. A batch is taken whole or not at all: its Basic-auth credentials and every
//! item's HMAC signature must be the connection's, and it must come from the connection's
//! environment (Adyen's `live` flag). Each item is then kept once, and the follow-up it decides
//! is written with it (`NoticeStore::record_notice`), so a repeat changes nothing.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::ids::{ConnectionId, EventId, NoticeId, TxnId};
use crate::mode::Mode;
use crate::payment::adyen::notifications::{APPLIED_EVENT_CODES, NotificationItem, later_outcome};
use crate::payment::adyen::{AdyenAccount, NotificationSecrets, Secret};
use crate::payment::decline::DeclineCode;
use crate::payment::lifecycle::TxnState;
use crate::payment::routing::{ProcessorAccount, ProcessorConnection};
use crate::payment::transaction::{AuthStatus, Transaction};
use crate::ports::{
    CardVault, Clock, Event, EventData, Ids, NoticeEffect, NoticeNote, NoticeRecorded, NoticeStore,
    ProcessorNotice, Settlement, StoreError, TransactionStore,
};
use crate::scope::Scope;

/// The credentials a notification request carried (HTTP Basic).
#[derive(Debug, Clone)]
pub struct BasicCredentials {
    /// The user name.
    pub username: String,
    /// The password.
    pub password: Secret,
}

/// One item of a batch: as read, and as it is to be kept (JSON, without `additionalData`).
#[derive(Debug, Clone)]
pub struct ReceivedItem {
    /// The item, read.
    pub item: NotificationItem,
    /// The item as kept for inspection.
    pub kept: String,
}

/// Why a batch was not taken.
#[derive(Debug, thiserror::Error)]
pub enum NoticeError {
    /// No such connection, credentials or a signature that are not the connection's, or the
    /// other environment's batch: 401, nothing kept.
    #[error("the notification is not signed and authenticated for this connection")]
    Unauthorized,
    /// An item names a payment whose processor call has not finished here yet: the batch is
    /// to be sent again (Adyen retries), nothing more kept.
    #[error("a transaction this notification names is still being recorded; retry")]
    NotYet,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoticeReport {
    /// Items that decided a follow-up.
    pub applied: usize,
    /// Items kept without a change (unknown reference, a code not applied, already decided,
    /// or stale).
    pub kept: usize,
    /// Items kept before.
    pub repeated: usize,
}

/// Receives processors' notifications.
#[derive(Clone)]
pub struct NoticeService {
    store: Arc<dyn NoticeStore>,
    transactions: Arc<dyn TransactionStore>,
    vault: Arc<dyn CardVault>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl std::fmt::Debug for NoticeService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NoticeService")
    }
}

impl NoticeService {
    /// A service over its ports.
    pub fn new(
        store: Arc<dyn NoticeStore>,
        transactions: Arc<dyn TransactionStore>,
        vault: Arc<dyn CardVault>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            store,
            transactions,
            vault,
            clock,
            ids,
        }
    }

    /// Takes an Adyen batch sent to connection `connection` (as the URL names it), `live` as
    /// Adyen's flag says, or refuses it whole.
    #[tracing::instrument(level = "debug", skip_all, fields(connection = connection))]
    pub async fn receive_adyen(
        &self,
        connection: &str,
        credentials: Option<BasicCredentials>,
        live: Option<&str>,
        items: Vec<ReceivedItem>,
    ) -> Result<NoticeReport, NoticeError> {
        let id =
            ConnectionId::parse("connection", connection).map_err(|_| NoticeError::Unauthorized)?;
        let connection = self
            .store
            .connection_for_notices(&id)
            .await?
            .ok_or(NoticeError::Unauthorized)?;
        let ProcessorAccount::Adyen(account) = &connection.account else {
            return Err(NoticeError::Unauthorized);
        };
        let secrets = account
            .notification_secrets(connection.id.as_str(), self.vault.as_ref())
            .map_err(|e| {
                StoreError::Unexpected(format!("the connection's secrets do not open: {e}"))
            })?;
        let expected_live = if connection.mode == Mode::Live {
            "true"
        } else {
            "false"
        };
        let authentic = credentials
            .as_ref()
            .is_some_and(|c| credentials_match(c, account, &secrets))
            && live == Some(expected_live)
            && items.iter().all(|i| i.item.signed_with(&secrets.hmac_key));
        if !authentic {
            tracing::warn!(connection = %connection.id, "a notification batch refused: credentials, environment or a signature");
            return Err(NoticeError::Unauthorized);
        }
        let mut taken = NoticeReport::default();
        for received in items {
            let effect = self.effect(&connection, account, &received.item).await?;
            let notice = self.notice(&connection, received);
            match self.store.record_notice(&notice, &effect).await? {
                NoticeRecorded::Applied => taken.applied = taken.applied.saturating_add(1),
                NoticeRecorded::Kept | NoticeRecorded::Stale => {
                    taken.kept = taken.kept.saturating_add(1);
                }
                NoticeRecorded::Repeated => taken.repeated = taken.repeated.saturating_add(1),
            }
        }
        Ok(taken)
    }

    fn notice(&self, connection: &ProcessorConnection, received: ReceivedItem) -> ProcessorNotice {
        let item = received.item;
        ProcessorNotice {
            id: NoticeId::from_suffix(&self.ids.next_id()),
            connection_id: connection.id.clone(),
            platform_id: connection.platform_id.clone(),
            mode: connection.mode,
            success: item.succeeded(),
            event_code: item.event_code,
            psp_reference: item.psp_reference,
            merchant_reference: item.merchant_reference,
            item: received.kept,
            received_on: self.clock.now(),
        }
    }

    /// What `item` changes: the follow-up it names (ours, made through this connection) and
    /// how it ended, by the rules of `LaterOutcome::settle`.
    async fn effect(
        &self,
        connection: &ProcessorConnection,
        account: &AdyenAccount,
        item: &NotificationItem,
    ) -> Result<NoticeEffect, NoticeError> {
        let keep = |note| Ok(NoticeEffect::Keep(note));
        if !APPLIED_EVENT_CODES.contains(&item.event_code.as_str()) {
            return keep(NoticeNote::NotApplied);
        }
        if item.merchant_account_code != account.merchant_account {
            return keep(NoticeNote::UnknownReference);
        }
        let Some(id) = item
            .merchant_reference
            .as_deref()
            .and_then(|r| TxnId::parse("merchantReference", r).ok())
        else {
            return keep(NoticeNote::UnknownReference);
        };
        let scope = Scope::new(connection.platform_id.clone(), connection.mode);
        let Some(txn) = self
            .transactions
            .get_transaction(&scope, &id)
            .await?
            .filter(|txn| txn.processor.id == connection.id)
        else {
            return keep(NoticeNote::UnknownReference);
        };
        if txn.state == TxnState::Pending {
            return Err(NoticeError::NotYet);
        }
        let Some(outcome) = later_outcome(&item.event_code, item.succeeded(), txn.kind) else {
            return keep(NoticeNote::NotApplied);
        };
        let Some(settling) = outcome.settle(txn.kind, txn.state, txn.amount, txn.refunded_amount)
        else {
            return keep(NoticeNote::AlreadyDecided);
        };
        let decided = decided(&txn, settling.to, settling.approved, item);
        let original = txn
            .parent_id
            .clone()
            .map(|parent| (parent, settling.original));
        let event = Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: decided.platform_id.clone(),
            mode: decided.mode,
            data: EventData::TransactionUpdated(Box::new(decided.clone())),
            created_on: self.clock.now(),
        };
        // A capture collects its auth's fee, so the journal needs the auth.
        let follows = match &txn.parent_id {
            Some(parent) if decided.state == TxnState::Settled => {
                self.transactions.get_transaction(&scope, parent).await?
            }
            _ => None,
        };
        let now = self.clock.now();
        let journal = crate::ledger::journal_for(&decided, follows.as_ref(), now);
        // Confirmed, then failed: what it moved is moved back.
        let reverses = (settling.from == TxnState::Settled && !settling.approved).then_some(now);
        Ok(NoticeEffect::Settle(Box::new(Settlement {
            txn: decided,
            from: settling.from,
            original,
            event,
            journal,
            reverses,
        })))
    }
}

/// `txn` as its processor decided it: approved (status `A`) or refused (status `D`, no fee),
/// its code the notification's event code and its message what the notification said.
fn decided(
    txn: &Transaction,
    to: TxnState,
    approved: bool,
    item: &NotificationItem,
) -> Transaction {
    let mut decided = txn.clone();
    decided.state = to;
    let a = &mut decided.authorization;
    a.processor_code.clone_from(&item.event_code);
    if approved {
        a.status = AuthStatus::Approved;
        a.decline_code = None;
        a.processor_message = format!("confirmed by Adyen ({})", item.event_code);
    } else {
        a.status = AuthStatus::Declined;
        a.decline_code = Some(DeclineCode::ProcessingError);
        a.approved_amount = 0;
        a.partial = false;
        decided.fee = 0;
        let reason: String = item
            .reason
            .as_deref()
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect();
        a.processor_message = if reason.trim().is_empty() {
            format!("refused by Adyen ({})", item.event_code)
        } else {
            format!("refused by Adyen ({}): {}", item.event_code, reason.trim())
        };
    }
    decided
}

/// Whether `given` are the connection's notification credentials; the password is compared in
/// constant time (as digests, so its length is not told either).
fn credentials_match(
    given: &BasicCredentials,
    account: &AdyenAccount,
    secrets: &NotificationSecrets,
) -> bool {
    let digest = |text: &str| Sha256::digest(text.as_bytes());
    let same_password = digest(given.password.expose())
        .iter()
        .zip(digest(secrets.notification_password.expose()).iter())
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0;
    same_password && given.username == account.notification_username
}
