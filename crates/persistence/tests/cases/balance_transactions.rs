//! Balance transactions: a scope's journals as their merchants read them, newest first, filtered
//! by merchant, kind and source, paged both ways; a merchant's list sums to its balances.

use holdfast_domain::ledger::{BalanceTransaction, JournalKind};
use holdfast_domain::page::PageRequest;
use holdfast_domain::payout::PayoutState;
use holdfast_domain::ports::{BalanceTransactionFilter, Made};
use time::Duration;

use super::payouts::{balance, make, moved, payout};
use super::settlement::{charged, run};
use super::*;

async fn listed(
    stores: &Stores,
    scope: &Scope,
    filter: BalanceTransactionFilter,
    page: &PageRequest,
) -> Vec<BalanceTransaction> {
    stores
        .ledger
        .balance_transactions(scope, &filter, page)
        .await
        .unwrap()
        .data
}

fn kinds(list: &[BalanceTransaction]) -> Vec<&'static str> {
    list.iter().map(|t| t.kind.as_str()).collect()
}

/// A merchant's charge, settlement, payout and payout paid are listed newest first, each as the
/// merchant reads it, and sum to its balances; the scope's list holds every merchant's, filtered
/// by kind and source, none of another mode; pages go forwards and back.
#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
pub async fn balance_transactions_list_each_journal_and_sum_to_the_balances(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let other = stored_merchant(&stores, &p, "Other").await;
    let day = Duration::days(1);
    let sale = charged(&stores, &m, &plan, 1000, T0).await;
    charged(&stores, &other, &plan, 3000, T0 + Duration::hours(1)).await;
    run(&stores, T0 + 2 * day).await;
    let paid_out = payout(&m, 500, T0 + 3 * day);
    assert_eq!(make(&stores, &paid_out).await, Made::Made);
    let handed = moved(&paid_out, PayoutState::InTransit, None, T0 + 3 * day);
    assert!(stores.payouts.move_payout(&handed, None).await.unwrap());
    let paid = moved(&handed.payout, PayoutState::Paid, None, T0 + 4 * day);
    assert!(stores.payouts.move_payout(&paid, None).await.unwrap());

    let all = PageRequest::new(Some(100), None).unwrap();
    let mine = BalanceTransactionFilter {
        merchant: Some(m.id.clone()),
        ..BalanceTransactionFilter::default()
    };
    let list = listed(&stores, &p.scope, mine.clone(), &all).await;
    assert_eq!(
        kinds(&list),
        ["payout_paid", "payout", "settlement", "charge"],
        "newest first"
    );
    let sum = |f: fn(&BalanceTransaction) -> i64| list.iter().map(f).sum::<i64>();
    let (available, pending, in_transit) = balance(&stores, &m).await;
    assert_eq!(
        (
            sum(|t| t.balances.available),
            sum(|t| t.balances.pending),
            sum(|t| t.balances.in_transit)
        ),
        (available, pending, in_transit),
        "the list sums to the balances"
    );
    let charge = &list[3];
    assert_eq!(
        (
            charge.amount,
            charge.fee,
            charge.net,
            charge.source_id.as_str()
        ),
        (1000, sale.fee, 1000 - sale.fee, sale.id.as_str())
    );
    assert_eq!(list[0].payout_id.as_ref(), Some(&paid_out.id));

    let everyone = listed(&stores, &p.scope, BalanceTransactionFilter::default(), &all).await;
    assert_eq!(
        everyone.len(),
        5,
        "both merchants' journals (the other's charge is not due yet)"
    );
    let settlements = BalanceTransactionFilter {
        kind: Some(JournalKind::Settlement),
        ..BalanceTransactionFilter::default()
    };
    assert_eq!(listed(&stores, &p.scope, settlements, &all).await.len(), 1);
    let of_payout = BalanceTransactionFilter {
        source: Some(paid_out.id.to_string()),
        ..BalanceTransactionFilter::default()
    };
    assert_eq!(
        kinds(&listed(&stores, &p.scope, of_payout, &all).await),
        ["payout_paid", "payout"]
    );
    let live = Scope::new(p.scope.platform.clone(), Mode::Live);
    assert!(
        listed(&stores, &live, BalanceTransactionFilter::default(), &all)
            .await
            .is_empty(),
        "another mode sees none"
    );

    // Pages of two, forwards then back.
    let two = PageRequest::new(Some(2), None).unwrap();
    let first = stores
        .ledger
        .balance_transactions(&p.scope, &BalanceTransactionFilter::default(), &two)
        .await
        .unwrap();
    assert!(first.has_more);
    let after = PageRequest::new(Some(2), Some(first.data[1].id.to_string())).unwrap();
    let second = listed(
        &stores,
        &p.scope,
        BalanceTransactionFilter::default(),
        &after,
    )
    .await;
    assert_eq!(
        [&first.data[..], &second[..]].concat(),
        everyone[..4].to_vec()
    );
    let before = PageRequest::new(Some(2), None)
        .unwrap()
        .ending_before(second[0].id.to_string());
    assert_eq!(
        listed(
            &stores,
            &p.scope,
            BalanceTransactionFilter::default(),
            &before
        )
        .await,
        first.data
    );
}
