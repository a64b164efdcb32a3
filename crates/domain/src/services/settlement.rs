//! Settlement runs: every charge whose plan's delay has passed moves from its merchant's
//! pending balance to available, with a `balance.available` event per merchant (docs/money.md).
//! The worker runs this on a schedule; `holdfast ledger settle` runs it once.

use std::sync::Arc;

use time::OffsetDateTime;

use crate::ids::{EventId, LoanRepaymentId, SettlementRunId};
use crate::ledger::{MerchantSettled, SettlementReport, SettlementRun};
use crate::loan::{Loan, RepaymentKind};
use crate::ports::{Announce, Clock, Event, EventData, Ids, LedgerStore, LoanChange, StoreError};

use super::loans::{Repaying, repayment_change};

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
        let announce = Arc::new(SettlementAnnouncer::new(self.ids.clone(), &run));
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

/// A run's decisions as its store settles: each merchant's `balance.available`, stamped with
/// the run's time, and each loan's withholding (`repayment_change`, as an early repayment is
/// made), announced at the run's time.
pub struct SettlementAnnouncer {
    ids: Arc<dyn Ids>,
    run: SettlementRunId,
    at: OffsetDateTime,
}

impl SettlementAnnouncer {
    /// The decisions of `run`, its events' and repayments' ids drawn from `ids`.
    pub fn new(ids: Arc<dyn Ids>, run: &SettlementRun) -> Self {
        Self {
            ids,
            run: run.id.clone(),
            at: run.now,
        }
    }

    fn event(&self, loan: &Loan, data: EventData) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: loan.platform_id.clone(),
            mode: loan.mode,
            created_on: self.at,
            data,
        }
    }
}

impl std::fmt::Debug for SettlementAnnouncer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SettlementAnnouncer")
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl Announce for SettlementAnnouncer {
    fn event_for(&self, settled: MerchantSettled) -> Event {
        Event {
            id: EventId::from_suffix(&self.ids.next_id()),
            platform_id: settled.platform_id.clone(),
            mode: settled.mode,
            created_on: self.at,
            data: EventData::BalanceAvailable(settled),
        }
    }

    fn withholding(&self, loan: &Loan, net: i64, on: OffsetDateTime) -> Option<LoanChange> {
        let repaying = Repaying {
            id: LoanRepaymentId::from_suffix(&self.ids.next_id()),
            kind: RepaymentKind::Withholding,
            amount: loan.withholding(net),
            settlement_run_id: Some(self.run.clone()),
            on,
        };
        let amount = repaying.amount;
        let change = repayment_change(loan, repaying, |loan, data| self.event(loan, data));
        if change.is_none() && amount > 0 {
            // The rule's share is never more than is outstanding, so a journal always holds
            // it: this is a fault, named so it is seen.
            tracing::error!(loan = %loan.id, amount, "a withholding no journal can hold; not withheld");
        }
        change
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

    /// A loan being repaid, `repaid` of its 110,000 so far (an advance of 100,000, a fee of
    /// 10,000, 10 % withheld).
    fn repaying(repaid: i64) -> Loan {
        Loan {
            id: crate::ids::LoanId::from_suffix("L"),
            platform_id: PlatformId::from_suffix("P"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("M"),
            currency: Currency::USD,
            state: crate::loan::LoanState::PaidOut,
            terms: crate::loan::LoanTerms::new(100_000, 10_000, 1_000, None).unwrap(),
            repaid,
            offer_expires_on: NOON,
            link_hash: None,
            acceptance: None,
            payout_id: None,
            paid_out_on: Some(NOON),
            created_on: NOON - time::Duration::days(2),
            updated_on: NOON - time::Duration::days(1),
        }
    }

    fn announcer() -> SettlementAnnouncer {
        let mut ids = MockIds::new();
        let mut n = 0;
        ids.expect_next_id().returning(move || {
            n += 1;
            format!("{n}")
        });
        let run = SettlementRun {
            id: SettlementRunId::from_suffix("R"),
            now: NOON,
            from_start: false,
        };
        SettlementAnnouncer::new(Arc::new(ids), &run)
    }

    /// A run withholds the rule's share of what it settled, as a repayment of its own with its
    /// journal, guarded by the loan as read, and says so in `loan.repayment` at its time.
    #[test]
    fn a_withholding_is_the_rules_share_with_its_journal_and_event() {
        let loan = repaying(0);
        let change = announcer()
            .withholding(&loan, 50_001, NOON)
            .expect("10 % of 50,001 is 5,000");
        let repayment = change.repayment.as_ref().unwrap();
        assert_eq!(
            (repayment.kind, repayment.amount, repayment.outstanding),
            (RepaymentKind::Withholding, 5_000, 105_000)
        );
        assert_eq!(
            repayment.settlement_run_id.as_ref().unwrap().as_str(),
            "srun_R"
        );
        assert_eq!((change.from, change.read_on), (loan.state, loan.updated_on));
        assert_eq!((change.loan.repaid, change.loan.updated_on), (5_000, NOON));
        assert_eq!(change.journals.len(), 1);
        assert_eq!(change.journals[0].heading.source, repayment.id.as_str());
        let types: Vec<_> = change.events.iter().map(|e| e.data.event_type()).collect();
        assert_eq!(types, [EventType::LoanRepayment]);
        assert!(change.events.iter().all(|e| e.created_on == NOON));
    }

    /// The last withholding is what is left, and the loan it repays says `loan.repaid` after
    /// its `loan.repayment`; a run that settled nothing for the merchant withholds nothing.
    #[test]
    fn the_last_withholding_repays_the_loan_and_nothing_settled_withholds_nothing() {
        let loan = repaying(108_000);
        let change = announcer().withholding(&loan, 50_000, NOON).unwrap();
        assert_eq!(change.repayment.as_ref().unwrap().amount, 2_000);
        assert_eq!(change.loan.state, crate::loan::LoanState::Repaid);
        let types: Vec<_> = change.events.iter().map(|e| e.data.event_type()).collect();
        assert_eq!(types, [EventType::LoanRepayment, EventType::LoanRepaid]);
        assert!(announcer().withholding(&loan, 0, NOON).is_none());
        assert!(announcer().withholding(&loan, 9, NOON).is_none());
    }
}
