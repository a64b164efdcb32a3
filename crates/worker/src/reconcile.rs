//! Reconciliation: transactions left `pending` by a process that stopped between the processor
//! call and the completion are reversed at the processor and recorded as failed, so no hold is
//! left that we do not know about.

use std::time::Duration;

use holdfast_domain::ports::Clock;
use holdfast_domain::services::PaymentService;

use crate::{Stop, pause};

pub async fn run(
    payments: PaymentService,
    clock: std::sync::Arc<dyn Clock>,
    after: Duration,
    mut stop: Stop,
) {
    let every = reconcile_every(after);
    while !*stop.borrow() {
        match payments
            .reconcile(crate::instants::earlier(clock.now(), after), 100)
            .await
        {
            Ok(report) => {
                for id in &report.reversed {
                    tracing::warn!(transaction = %id, "reversed a transaction left pending");
                }
                for id in &report.still_pending {
                    tracing::error!(transaction = %id, "reversal failed; the transaction stays pending and is retried");
                }
            }
            Err(err) => tracing::error!(error = %err, "reconciliation failed"),
        }
        pause(&mut stop, every).await;
    }
}

/// How often the reconciler looks for rows older than `after`: often enough that a stale row
/// waits at most half its age again.
pub fn reconcile_every(after: Duration) -> Duration {
    after
        .checked_div(2)
        .unwrap_or(after)
        .clamp(Duration::from_millis(100), Duration::from_secs(30))
}
