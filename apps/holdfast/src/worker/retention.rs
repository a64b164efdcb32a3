//! Retention, hourly. Delivery history is kept 15 days (spec 2.4): older records are archived,
//! keeping the row and its outcome and dropping the bodies; the records a fan-out wrote for a
//! subscription as it was being deleted go. Idempotency keys past their 24 hours are deleted.
//! Every minute, the sealed card of each single-use token that expired unused is erased (a used
//! one is erased as it is used): a card kept sealed is still a card kept.

use std::time::Duration;

use holdfast_domain::services::{
    ComplianceService, IdempotencyService, TokenService, WebhookService,
};

use super::{Stop, pause};

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
