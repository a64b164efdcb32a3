//! Test mode's bank: every test payout handed over and paid, or returned by its account number,
//! at once.

use super::{BATCH, PayoutService, RailReport, unexpected};
use crate::mode::Mode;
use crate::payout::{Payout, PayoutState, SandboxOutcome, sandbox_outcome};
use crate::ports::StoreError;

impl PayoutService {
    /// Hands every test payout made by now to the sandbox bank, which pays it or returns it at
    /// once by its account number (`SANDBOX_ACCOUNTS`). Those a stopped run left in transit
    /// are finished first: the sandbox bank's answer is never late, so theirs was lost.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn run_sandbox_rail(&self) -> Result<RailReport, StoreError> {
        let now = self.clock.now();
        let mut report = RailReport::default();
        for state in [PayoutState::InTransit, PayoutState::Pending] {
            let mut after = None;
            loop {
                let batch = self
                    .payouts
                    .payouts_to_hand_over(Mode::Test, state, now, after.clone(), BATCH)
                    .await?;
                let full = batch.len() == BATCH as usize;
                after = batch.last().map(|p| (p.created_on, p.id.clone()));
                for payout in batch {
                    let id = payout.id.clone();
                    match self.pay_in_sandbox(payout).await {
                        Ok(Some(SandboxOutcome::Paid)) => report.paid += 1,
                        Ok(Some(SandboxOutcome::Returned(_))) => report.failed += 1,
                        Ok(None) => {}
                        // One payout whose move cannot be written must not hold up every other
                        // (runs read oldest first): it is named, left, and tried next run.
                        Err(e) => {
                            tracing::error!(payout = %id, error = %e, "payout left for an operator");
                        }
                    }
                }
                if !full {
                    break;
                }
            }
        }
        if report != RailReport::default() {
            tracing::info!(
                paid = report.paid,
                failed = report.failed,
                "sandbox bank run"
            );
        }
        Ok(report)
    }

    /// One payout through the sandbox bank: to in transit (unless it is there), then paid or
    /// failed. `None` when it moved meanwhile (canceled, or taken by another worker), or its
    /// account does not open (named in the log and left where it is: one payout the rail
    /// cannot take must not hold up every other).
    async fn pay_in_sandbox(&self, payout: Payout) -> Result<Option<SandboxOutcome>, StoreError> {
        let account = match self.account_number(&payout).await {
            Ok(account) => account,
            Err(StoreError::Unexpected(why)) => {
                tracing::error!(payout = %payout.id, error = %why, "payout left for an operator");
                return Ok(None);
            }
            Err(other) => return Err(other),
        };
        let outcome = sandbox_outcome(&account);
        let handed = if payout.state == PayoutState::InTransit {
            payout
        } else {
            let handed = self
                .change(&payout, PayoutState::InTransit, None)
                .map_err(|e| unexpected(&e))?;
            if !self.payouts.move_payout(&handed, None).await? {
                return Ok(None);
            }
            handed.payout
        };
        let (to, failure) = match outcome {
            SandboxOutcome::Paid => (PayoutState::Paid, None),
            SandboxOutcome::Returned(code) => (PayoutState::Failed, Some(code)),
        };
        let ended = self
            .change(&handed, to, failure)
            .map_err(|e| unexpected(&e))?;
        Ok(self
            .payouts
            .move_payout(&ended, None)
            .await?
            .then_some(outcome))
    }
}
