//! Settlement runs: a charge's net moves from pending to available once its plan's delay has
//! passed, once however often the run is repeated, with one `balance.available` event per
//! merchant and run; the books stay whole.

use std::sync::Arc;

use holdfast_domain::ids::SettlementRunId;
use holdfast_domain::ledger::{
    SettledAmount, SettlementDelay, SettlementReport, SettlementRun, journal_for,
};
use holdfast_domain::ports::Balance;
use holdfast_domain::services::SettlementAnnouncer;
use time::Duration;

use super::*;

/// The run's decisions as the service makes them (`SettlementService`): each merchant's
/// `balance.available` and each loan's withholding, stamped at the run's time.
pub(super) fn decisions(run: &SettlementRun) -> Arc<SettlementAnnouncer> {
    Arc::new(SettlementAnnouncer::new(Arc::new(CountingIds), run))
}

/// A sale of `amount` for `m` on `plan`, its charge posted at `posted_on`.
pub(super) async fn charged(
    stores: &Stores,
    m: &Merchant,
    plan: &Plan,
    amount: i64,
    posted_on: OffsetDateTime,
) -> Transaction {
    let pending = txn(m, plan, TxnType::Sale, TxnState::Pending, amount);
    write(stores, &pending).await;
    let done = Transaction {
        state: TxnState::Settled,
        ..pending
    };
    let journal = journal_for(&done, None, posted_on);
    stores
        .transactions
        .complete_transaction_with_event(&done, None, &event_for(&done), None, None, journal)
        .await
        .unwrap();
    done
}

/// The `balance.available` events of `scope`, oldest first: whom each told of what.
async fn announced_in(
    stores: &Stores,
    scope: &Scope,
    currency: Currency,
) -> Vec<(MerchantId, Vec<SettledAmount>)> {
    stores
        .events
        .list_events(scope)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event_type == "balance.available")
        .map(|e| {
            let data: serde_json::Value = serde_json::from_str(&e.data).unwrap();
            (
                MerchantId::from_trusted(data["merchantId"].as_str().unwrap().to_owned()),
                vec![SettledAmount {
                    currency,
                    amount: data["settled"][0]["amount"].as_i64().unwrap(),
                    transactions: data["settled"][0]["transactions"].as_u64().unwrap(),
                }],
            )
        })
        .collect()
}

pub(super) async fn run(stores: &Stores, now: OffsetDateTime) -> SettlementReport {
    let run = SettlementRun {
        id: SettlementRunId::from_suffix(&CountingIds.next_id()),
        now,
        from_start: false,
    };
    stores.ledger.settle(&run, decisions(&run)).await.unwrap()
}

/// Two merchants, plans of 2 days and of none: each run settles what is due by its time and
/// nothing twice; the balances move from pending to available; each run tells each merchant
/// it moved money for, once; the books verify after every run.
pub async fn a_run_settles_each_due_charge_once(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    assert_eq!(plan.settlement_delay, SettlementDelay::DEFAULT);
    let at_once = Plan {
        id: PlanId::from_suffix(&CountingIds.next_id()),
        name: "At once".into(),
        is_default: false,
        settlement_delay: SettlementDelay::new("days", 0).unwrap(),
        ..plan.clone()
    };
    stores.routing.insert_plan(&at_once, None).await.unwrap();
    let other = stored_merchant(&stores, &p, "Other").await;
    let day = Duration::days(1);

    // Fees are 30 each: the nets are 970, 470 and 1970.
    charged(&stores, &m, &plan, 1000, T0).await;
    charged(&stores, &m, &at_once, 500, T0).await;
    charged(&stores, &other, &plan, 2000, T0 + day).await;
    let balance = |available, pending| Balance {
        currency: m.details.currency,
        available,
        pending,
        in_transit: 0,
    };
    let settled = |merchant: &Merchant, amount, transactions| {
        (
            merchant.id.clone(),
            vec![SettledAmount {
                currency: m.details.currency,
                amount,
                transactions,
            }],
        )
    };
    let mut announced = Vec::new();
    for (now, report, expect_m, expect_other, events) in [
        // The charge on the plan without a delay is due at once.
        (
            T0 + Duration::hours(1),
            (1, 1),
            balance(470, 970),
            balance(0, 1970),
            vec![settled(&m, 470, 1)],
        ),
        // Run again: nothing is due twice.
        (
            T0 + Duration::hours(2),
            (0, 0),
            balance(470, 970),
            balance(0, 1970),
            vec![],
        ),
        // Two days after the first charge: it is due, the other merchant's is not yet.
        (
            T0 + 2 * day,
            (1, 1),
            balance(1440, 0),
            balance(0, 1970),
            vec![settled(&m, 970, 1)],
        ),
        (
            T0 + 3 * day,
            (1, 1),
            balance(1440, 0),
            balance(1970, 0),
            vec![settled(&other, 1970, 1)],
        ),
        (
            T0 + 4 * day,
            (0, 0),
            balance(1440, 0),
            balance(1970, 0),
            vec![],
        ),
    ] {
        let done = run(&stores, now).await;
        assert_eq!((done.transactions, done.merchants), report, "at {now}");
        assert_eq!(
            stores.ledger.balances(&p.scope, &m.id).await.unwrap(),
            [expect_m]
        );
        assert_eq!(
            stores.ledger.balances(&p.scope, &other.id).await.unwrap(),
            [expect_other]
        );
        let check = stores.ledger.check(now).await.unwrap();
        assert_eq!(check.problems, Vec::<String>::new(), "at {now}");
        announced.extend(events);
    }
    // A second run at the very time of one that settled: nothing twice, no event twice.
    charged(&stores, &m, &at_once, 300, T0 + 5 * day).await;
    assert_eq!(run(&stores, T0 + 5 * day).await.transactions, 1);
    let again = run(&stores, T0 + 5 * day).await;
    assert_eq!((again.transactions, again.merchants), (0, 0));
    announced.push(settled(&m, 270, 1));
    let events = announced_in(&stores, &p.scope, m.details.currency).await;
    assert_eq!(events, announced);
}

/// A run reads back no further than the oldest charge the last run left pending (less the
/// grace for late commits): charges posted before it was settled by an earlier run, so none is
/// missed; one stamped within the grace before a run and written after it still settles; one
/// stamped before the grace is left, and the books' check names it overdue.
pub async fn a_run_reads_from_the_oldest_charge_left_pending(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let day = Duration::days(1);
    charged(&stores, &m, &plan, 1000, T0).await;
    charged(&stores, &m, &plan, 1000, T0 + day).await;
    // The first is due; the second, left pending, is where the next run starts reading.
    assert_eq!(run(&stores, T0 + 2 * day).await.transactions, 1);
    assert_eq!(run(&stores, T0 + 3 * day).await.transactions, 1);
    // Nothing left pending: the next run reads from this run's time, less the grace. A charge
    // stamped five minutes before it, written only now, is found.
    charged(
        &stores,
        &m,
        &plan,
        1000,
        T0 + 3 * day - Duration::minutes(5),
    )
    .await;
    assert_eq!(run(&stores, T0 + 6 * day).await.transactions, 1);
    assert_eq!(
        stores.ledger.balances(&p.scope, &m.id).await.unwrap()[0].available,
        3 * 970
    );
    assert_eq!(
        stores.ledger.check(T0 + 6 * day).await.unwrap().problems,
        Vec::<String>::new()
    );
    // One stamped further back than the grace, written after the runs that passed it: no run
    // reads that far back, and `check` names it once it is a day overdue.
    let stranded = charged(&stores, &m, &plan, 1000, T0 + 3 * day - Duration::hours(1)).await;
    assert_eq!(run(&stores, T0 + 7 * day).await.transactions, 0);
    assert_eq!(
        stores.ledger.check(T0 + 7 * day).await.unwrap().problems,
        [format!(
            "{} (charge): due for settlement more than a day ago and still pending",
            stranded.id
        )]
    );
    assert_eq!(
        stores.ledger.check(T0 + 4 * day).await.unwrap().problems,
        Vec::<String>::new(),
        "not a day overdue yet"
    );
    // A run from the start finds it, and only it.
    let from_start = SettlementRun {
        id: SettlementRunId::from_suffix(&CountingIds.next_id()),
        now: T0 + 7 * day,
        from_start: true,
    };
    let report = stores
        .ledger
        .settle(&from_start, decisions(&from_start))
        .await
        .unwrap();
    assert_eq!((report.transactions, report.merchants), (1, 1));
    assert_eq!(
        stores.ledger.check(T0 + 7 * day).await.unwrap().problems,
        Vec::<String>::new()
    );
}
