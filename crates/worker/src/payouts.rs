//! The payout rails on a schedule, after the loans' review: each run pays out the merchants' schedules due that day
//! (one SQL transaction), then hands the payouts made since the last run to their banks (test
//! mode's sandbox bank pays or returns them at once; docs/money.md). Each move is its own SQL
//! transaction guarded by the state it leaves, so a process stopped in the middle of a run
//! leaves every payout in one state, with that state's journals, and the next run goes on from
//! there.

use std::time::Duration;

use holdfast_domain::services::{LoanService, PayoutService};

use crate::{Stop, pause};

/// Each run reviews the loans first (offers expire, accepted loans' advances are paid out,
/// standings move: docs/loans.md), so an advance goes to the bank in the same run.
pub async fn run(payouts: PayoutService, loans: LoanService, every: Duration, mut stop: Stop) {
    while !*stop.borrow() {
        if let Err(err) = loans.review().await {
            tracing::error!(error = %err, "loan review failed; the next run reviews again");
        }
        if let Err(err) = payouts.run_rails().await {
            tracing::error!(error = %err, "payout run failed; the next run goes on from where it stopped");
        }
        pause(&mut stop, every).await;
    }
}
