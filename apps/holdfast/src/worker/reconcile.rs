//! Reconciliation: transactions left `pending` by a process that stopped between the processor
//! call and the completion are reversed at the processor and recorded as failed, so no hold is
//! left that we do not know about.

use std::time::Duration;

use holdfast_domain::ports::Clock;
use holdfast_domain::services::PaymentService;

use super::{Stop, pause};

pub async fn run(
    payments: PaymentService,
    clock: std::sync::Arc<dyn Clock>,
    after: Duration,
    mut stop: Stop,
) {
    let every = crate::config::reconcile_every(after);
    while !*stop.borrow() {
        match payments
            .reconcile(crate::system::earlier(clock.now(), after), 100)
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
