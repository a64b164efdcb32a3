//! Settlement runs: every charge whose plan's delay has passed moves from its merchant's
//! pending balance to available, with a `balance.available` event per merchant (docs/money.md).
//! The worker runs this on a schedule; `holdfast ledger settle` runs it once.

use std::sync::Arc;

use crate::ids::{EventId, SettlementRunId};
use crate::ledger::{MerchantSettled, SettlementReport, SettlementRun};
use crate::ports::{Announce, Clock, Event, EventData, Ids, LedgerStore, StoreError};

/// Runs settlement.
#[derive(Clone)]
pub struct SettlementService {
    ledger: Arc<dyn LedgerStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl std::fmt::Debug for SettlementService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettlementService").finish_non_exhaustive()
    }
}

impl SettlementService {
    /// The service over the ledger, the clock that says what is due and the ids of runs and
    /// events.
    pub fn new(ledger: Arc<dyn LedgerStore>, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> Self {
        Self { ledger, clock, ids }
    }

    /// One run, now (reading every charge ever posted when `from_start`): what it settled. Everything it writes is one SQL transaction, so a run
    /// that fails (or a process stopped in the middle of one) settles nothing, and the next
    /// settles what it would have.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn run(&self, from_start: bool) -> Result<SettlementReport, StoreError> {
        let run = SettlementRun {
            id: SettlementRunId::from_suffix(&self.ids.next_id()),
            now: self.clock.now(),
            from_start,
        };
        let announce = Arc::new(Announcer {
            ids: self.ids.clone(),
            at: run.now,
        });
        let report = self.ledger.settle(&run, announce).await?;
        tracing::info!(
            run = %run.id,
            transactions = report.transactions,
            merchants = report.merchants,
            withheld = report.withheld,
            "settlement run"
        );
        Ok(report)
    }
}

/// Each merchant's `balance.available`, stamped with its run's time.
struct Announcer {
    ids: Arc<dyn Ids>,
    at: time::OffsetDateTime,
}

impl Announce for Announcer {
    fn event_for(&self, settled: MerchantSettled) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: settled.platform_id.clone(),
            mode: settled.mode,
            created_on: self.at,
            data: EventData::BalanceAvailable(settled),
        }
    }

    fn loan_event(&self, loan: &crate::loan::Loan, data: EventData) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: loan.platform_id.clone(),
            mode: loan.mode,
            created_on: self.at,
            data,
        }
    }

    fn repayment_id(&self) -> crate::ids::LoanRepaymentId {
        crate::ids::LoanRepaymentId::from_suffix(&self.ids.next_id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{MerchantId, PlatformId};
    use crate::ledger::SettledAmount;
    use crate::merchant::Currency;
    use crate::mode::Mode;
    use crate::ports::{MockClock, MockIds, MockLedgerStore};
    use crate::services::fixtures::NOON;
    use crate::webhook::EventType;

    /// A run is stamped with the clock's time and an id of its own, and each merchant's event
    /// is a `balance.available` of that merchant's platform and mode, made at the run's time.
    #[tokio::test]
    async fn a_run_announces_each_merchant_in_its_platform_and_mode() {
        let mut clock = MockClock::new();
        clock.expect_now().return_const(NOON);
        let mut ids = MockIds::new();
        let mut n = 0;
        ids.expect_next_id().returning(move || {
            n += 1;
            format!("{n}")
        });
        let mut ledger = MockLedgerStore::new();
        ledger.expect_settle().returning(|run, announce| {
            assert_eq!((run.id.as_str(), run.now), ("srun_1", NOON));
            let event = announce.event_for(MerchantSettled {
                merchant_id: MerchantId::from_suffix("M"),
                platform_id: PlatformId::from_suffix("P"),
                mode: Mode::Live,
                settlement_run_id: run.id.clone(),
                settled: vec![SettledAmount {
                    currency: Currency::USD,
                    amount: 941,
                    transactions: 1,
                }],
            });
            assert_eq!(event.id.as_str(), "evt_2");
            assert_eq!(
                (&event.platform_id, event.mode, event.created_on),
                (&PlatformId::from_suffix("P"), Mode::Live, NOON)
            );
            assert_eq!(event.data.event_type(), EventType::BalanceAvailable);
            assert_eq!(event.data.subject_id(), "mid_M");
            assert_eq!(
                serde_json::to_value(&event.data).unwrap(),
                serde_json::json!({
                    "merchantId": "mid_M",
                    "settlementRunId": "srun_1",
                    "settled": [{"currency": "USD", "amount": 941, "transactions": 1}]
                })
            );
            Ok(SettlementReport {
                transactions: 1,
                merchants: 1,
                withheld: 0,
            })
        });
        let service = SettlementService::new(Arc::new(ledger), Arc::new(clock), Arc::new(ids));
        assert_eq!(
            service.run(false).await.unwrap(),
            SettlementReport {
                transactions: 1,
                merchants: 1,
                withheld: 0,
            }
        );
    }
}
