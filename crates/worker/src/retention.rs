//! Retention, hourly. Delivery history is kept 15 days (spec 2.4): older records are archived,
//! keeping the row and its outcome and dropping the bodies; the records a fan-out wrote for a
//! subscription as it was being deleted go. Idempotency keys past their 24 hours are deleted.
//! Every minute, the sealed card of each single-use token that expired unused is erased (a used
//! one is erased as it is used): a card kept sealed is still a card kept.

use std::time::Duration;

use holdfast_domain::services::{
    ComplianceService, IdempotencyService, TokenService, WebhookService,
};

use crate::{Stop, pause};

pub async fn run(
    webhooks: WebhookService,
    keys: IdempotencyService,
    compliance: ComplianceService,
    mut stop: Stop,
) {
    while !*stop.borrow() {
        match compliance.maintain(None).await {
            Ok((0, 0)) => {}
            Ok((overdue, renewed)) => {
                tracing::info!(
                    overdue,
                    renewed,
                    "compliance forms marked overdue or renewed"
                );
            }
            Err(err) => tracing::error!(error = %err, "compliance upkeep failed"),
        }
        match webhooks.archive_deliveries(None).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(archived = n, "archived old delivery records"),
            Err(err) => tracing::error!(error = %err, "archiving delivery records failed"),
        }
        match webhooks.delete_orphaned_deliveries().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                deleted = n,
                "deleted the delivery records of deleted subscriptions"
            ),
            Err(err) => {
                tracing::error!(error = %err, "deleting the records of deleted subscriptions failed");
            }
        }
        match keys.purge_expired().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "deleted expired idempotency keys"),
            Err(err) => tracing::error!(error = %err, "deleting idempotency keys failed"),
        }
        pause(&mut stop, Duration::from_hours(1)).await;
    }
}

/// How often expired single-use tokens are looked for: they live 15 minutes, so their card is
/// gone at most a minute after that.
const TOKEN_SWEEP: Duration = Duration::from_mins(1);

pub async fn erase_expired_tokens(tokens: TokenService, mut stop: Stop) {
    while !*stop.borrow() {
        match tokens.erase_expired().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(erased = n, "erased the cards of expired single-use tokens"),
            Err(err) => tracing::error!(error = %err, "erasing expired tokens failed"),
        }
        pause(&mut stop, TOKEN_SWEEP).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use holdfast_domain::ports::{
        MockAuditLog, MockClock, MockComplianceStore, MockIdempotencyStore, MockIds,
        MockMerchantStore, MockNotificationQueue, MockWebhookStore, StoreError,
    };
    use holdfast_domain::services::Auditor;
    use time::OffsetDateTime;
    use tokio::sync::watch;

    use super::*;

    fn clock() -> Arc<MockClock> {
        let mut clock = MockClock::new();
        clock
            .expect_now()
            .returning(|| OffsetDateTime::UNIX_EPOCH + time::Duration::days(20_000));
        Arc::new(clock)
    }

    /// Counts a task's runs.
    #[derive(Clone, Default)]
    struct Runs(Arc<AtomicU32>);

    impl Runs {
        fn count(&self) -> u32 {
            self.0.fetch_add(1, Ordering::SeqCst) + 1
        }
        fn seen(&self) -> u32 {
            self.0.load(Ordering::SeqCst)
        }
    }

    /// Every hour each task runs, and one that fails (the archive, on the first pass) keeps
    /// neither the others nor the next pass from running: a failing archive must not leave
    /// the records of deleted subscriptions or expired keys behind.
    #[tokio::test(start_paused = true)]
    async fn each_pass_runs_every_task_hourly_whatever_one_of_them_answers() {
        let (archived, orphans, purged, compliance) = (
            Runs::default(),
            Runs::default(),
            Runs::default(),
            Runs::default(),
        );
        let mut queue = MockNotificationQueue::new();
        let runs = archived.clone();
        queue.expect_archive_deliveries().returning(move |_| {
            if runs.count() == 1 {
                Err(StoreError::Unexpected("the database went away".into()))
            } else {
                Ok(3)
            }
        });
        let runs = orphans.clone();
        queue
            .expect_delete_orphaned_deliveries()
            .returning(move || Ok(u64::from(runs.count())));
        let mut keys = MockIdempotencyStore::new();
        let runs = purged.clone();
        keys.expect_purge().returning(move |_| {
            runs.count();
            Ok(0)
        });
        let mut forms = MockComplianceStore::new();
        let runs = compliance.clone();
        forms.expect_pending_due().returning(move |_, _| {
            runs.count();
            Ok(Vec::new())
        });
        forms.expect_renewable().returning(|_, _| Ok(Vec::new()));
        forms.expect_unissued().returning(|_| Ok(Vec::new()));

        let ids: Arc<MockIds> = Arc::new(MockIds::new());
        let webhooks = WebhookService::new(
            Arc::new(MockWebhookStore::new()),
            Arc::new(queue),
            clock(),
            ids.clone(),
            Auditor::new(Arc::new(MockAuditLog::new()), clock(), ids.clone()),
        );
        let keys = IdempotencyService::new(Arc::new(keys), clock(), [7; 32]);
        let compliance_service = ComplianceService::new(
            Arc::new(forms),
            Arc::new(MockMerchantStore::new()),
            clock(),
            ids,
        );
        let (stop_tx, stop) = watch::channel(false);
        let retention = tokio::spawn(run(webhooks, keys, compliance_service, stop));

        let seen = || {
            [
                archived.seen(),
                orphans.seen(),
                purged.seen(),
                compliance.seen(),
            ]
        };
        tokio::time::sleep(Duration::from_mins(30)).await;
        assert_eq!(seen(), [1; 4], "the first pass runs at once, every task");
        tokio::time::sleep(Duration::from_hours(1)).await;
        assert_eq!(seen(), [2; 4], "the second an hour later");

        stop_tx.send(true).unwrap();
        retention.await.unwrap();
        assert_eq!(
            seen(),
            [2; 4],
            "asked to stop, it ends without another pass"
        );
    }
}
