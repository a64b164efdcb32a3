//! Settlement on a schedule: each run moves every charge whose plan's delay has passed from
//! its merchant's pending balance to available (docs/money.md). A run is one SQL transaction,
//! so a process stopped in the middle of one leaves nothing half-settled: the next run, here
//! or in another worker, settles what it would have.

use std::time::Duration;

use holdfast_domain::services::SettlementService;

use crate::{Stop, pause};

pub async fn run(settlement: SettlementService, every: Duration, mut stop: Stop) {
    while !*stop.borrow() {
        if let Err(err) = settlement.run(false).await {
            tracing::error!(error = %err, "settlement run failed; the next run settles what it would have");
        }
        pause(&mut stop, every).await;
    }
}
