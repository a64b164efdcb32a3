//! Retention, hourly. Delivery history is kept 15 days (spec 2.4): older records are archived,
//! keeping the row and its outcome and dropping the bodies. Idempotency keys past their 24
//! hours are deleted.

use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::idempotency;
use holdfast_domain::ports::{Clock, IdempotencyStore, NotificationQueue};

use super::{Stop, pause};

pub const RETENTION: time::Duration = time::Duration::days(15);

pub async fn run(
    queue: Arc<dyn NotificationQueue>,
    keys: Arc<dyn IdempotencyStore>,
    clock: Arc<dyn Clock>,
    mut stop: Stop,
) {
    while !*stop.borrow() {
        match queue.archive_deliveries(clock.now() - RETENTION).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(archived = n, "archived old delivery records"),
            Err(err) => tracing::error!(error = %err, "archiving delivery records failed"),
        }
        match keys.purge(clock.now() - idempotency::RETENTION).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deleted = n, "deleted expired idempotency keys"),
            Err(err) => tracing::error!(error = %err, "deleting idempotency keys failed"),
        }
        pause(&mut stop, Duration::from_hours(1)).await;
    }
}
