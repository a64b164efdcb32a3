//! Records what the services change, for the audit log.

use std::sync::Arc;

use crate::audit::{Action, Actor, AuditEntry};
use crate::ids::{PlatformId, UserId};
use crate::mode::Mode;
use crate::page::{Page, PageRequest};
use crate::ports::{AuditLog, Clock, Ids};

use super::ServiceError;

/// Appends to the audit log on behalf of the services that change keys, subscriptions and users.
#[derive(Clone)]
pub struct Auditor {
    log: Arc<dyn AuditLog>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl std::fmt::Debug for Auditor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auditor").finish_non_exhaustive()
    }
}

/// What an entry is about: the platform, the mode (none for users) and the target's id.
pub(crate) struct Target<'a> {
    pub platform: &'a PlatformId,
    pub mode: Option<Mode>,
    pub id: &'a str,
}

impl Auditor {
    /// An auditor over the log, stamping entries with the clock and the id source.
    pub fn new(log: Arc<dyn AuditLog>, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> Self {
        Self { log, clock, ids }
    }

    /// Records a change that has been made. The change stands whatever happens here, so a
    /// failure to record is not the caller's error: it is logged, entry and all (an entry holds
    /// ids and an address, never a secret), for an operator to restore.
    pub(crate) async fn record(&self, actor: &Actor, action: Action, target: Target<'_>) {
        let entry = AuditEntry {
            id: format!("{}{}", AuditEntry::PREFIX, self.ids.next_id()),
            platform_id: target.platform.clone(),
            mode: target.mode,
            actor: actor.clone(),
            action,
            target: target.id.to_owned(),
            created_on: self.clock.now(),
        };
        if let Err(e) = self.log.record(&entry).await {
            tracing::error!(
                error = %e,
                id = %entry.id,
                platform = %entry.platform_id,
                mode = entry.mode.map(Mode::as_str),
                who = entry.actor.who.as_str(),
                door = entry.actor.door.as_str(),
                address = ?entry.actor.address,
                action = entry.action.as_str(),
                target = %entry.target,
                "audit entry not recorded"
            );
        }
    }

    /// Records a change to user `id` of `platform` (users have no mode).
    pub(crate) async fn record_user(
        &self,
        actor: &Actor,
        action: Action,
        platform: &PlatformId,
        id: &UserId,
    ) {
        let target = Target {
            platform,
            mode: None,
            id: id.as_str(),
        };
        self.record(actor, action, target).await;
    }

    /// The platform's entries of `mode` and those about users, newest first.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %platform))]
    pub async fn list(
        &self,
        platform: &PlatformId,
        mode: Mode,
        page: &PageRequest,
    ) -> Result<Page<AuditEntry>, ServiceError> {
        self.log
            .list_audit(platform, mode, page)
            .await
            .map_err(ServiceError::Store)
    }
}

#[cfg(test)]
pub(crate) mod recording {
    //! An audit log that keeps its entries in memory, for the services' unit tests.
    use std::sync::{Arc, Mutex};

    use super::Auditor;
    use crate::audit::{Action, AuditEntry};
    use crate::ports::MockAuditLog;
    use crate::services::fixtures::{clock_at_noon, fixed_ids};

    /// An auditor, and the entries it has recorded.
    pub(crate) fn auditor() -> (Auditor, Arc<Mutex<Vec<AuditEntry>>>) {
        let entries = Arc::new(Mutex::new(Vec::new()));
        let kept = entries.clone();
        let mut log = MockAuditLog::new();
        log.expect_record().returning(move |e| {
            kept.lock().unwrap().push(e.clone());
            Ok(())
        });
        let auditor = Auditor::new(
            Arc::new(log),
            Arc::new(clock_at_noon()),
            Arc::new(fixed_ids("AUD")),
        );
        (auditor, entries)
    }

    /// The actions and targets recorded so far.
    pub(crate) fn recorded(entries: &Mutex<Vec<AuditEntry>>) -> Vec<(Action, String)> {
        entries
            .lock()
            .unwrap()
            .iter()
            .map(|e| (e.action, e.target.clone()))
            .collect()
    }
}
