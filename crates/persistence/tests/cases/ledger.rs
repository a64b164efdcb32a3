//! The transaction ledger: reservations won once, refunds never past the amount, the list's filters, reconciliation's reads.

use super::*;

pub async fn only_one_reservation_closes_an_auth(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let auth = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
    write(&stores, &auth).await;
    let claims = (0..4).map(|_| {
        let payments = stores.transactions.clone();
        let (platform, id) = (p.scope.platform.clone(), auth.id.clone());
        let mut capture = txn(&m, &plan, TxnType::Capture, TxnState::Pending, 1000);
        capture.parent_id = Some(auth.id.clone());
        tokio::spawn(async move {
            let won = payments
                .reserve_with_pending(
                    &Scope::new(platform.clone(), Mode::Test),
                    &id,
                    Reservation::CloseAuth,
                    &capture,
                )
                .await
                .unwrap();
            won.then_some(capture)
        })
    });
    let mut winners = Vec::new();
    for claim in claims.collect::<Vec<_>>() {
        winners.extend(claim.await.unwrap());
    }
    assert_eq!(winners.len(), 1, "exactly one capture or void proceeds");
    let mut capture = winners.pop().unwrap();
    let written = stores
        .transactions
        .get_transaction(&p.scope, &capture.id)
        .await
        .unwrap();
    assert_eq!(
        written.map(|t| t.state),
        Some(TxnState::Pending),
        "the winner's pending row is written with its reservation"
    );
    let closing = stores
        .transactions
        .get_transaction(&p.scope, &auth.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closing.state, TxnState::Closing);
    // The follow-up fails: the auth is open again, and its event was written with it.
    capture.state = TxnState::Declined;
    stores
        .transactions
        .complete_transaction_with_event(
            &capture,
            Some((auth.id.clone(), OriginalOutcome::Reopened)),
            &event_for(&capture),
            None,
            None,
            None,
        )
        .await
        .unwrap();
    let reopened = stores
        .transactions
        .get_transaction(&p.scope, &auth.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(reopened.state, TxnState::Authorized);
    let events = stores.events.list_events(&p.scope).await.unwrap();
    // The merchant's own `merchant.created`, then the capture's `transaction.created`.
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["merchant.created", "transaction.created"]);
    assert!(
        events[1].data.contains(capture.id.as_str())
            && events[1].data.contains("\"type\":\"capture\""),
        "{}",
        events[1].data
    );
    // Other platforms and modes cannot reserve it.
    let other = new_platform(&stores, "B").await;
    for (platform, mode) in [
        (&other.platform.id, Mode::Test),
        (&p.scope.platform, Mode::Live),
    ] {
        let void = txn(&m, &plan, TxnType::Void, TxnState::Pending, 1000);
        let reserved = stores
            .transactions
            .reserve_with_pending(
                &Scope::new(platform.clone(), mode),
                &auth.id,
                Reservation::CloseAuth,
                &void,
            )
            .await;
        assert!(!reserved.unwrap(), "scoped by platform and mode");
        let written = stores
            .transactions
            .get_transaction(&p.scope, &void.id)
            .await
            .unwrap();
        assert!(written.is_none(), "a refused reservation writes nothing");
    }
}

pub async fn refund_reservations_never_exceed_the_amount(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let sale = txn(&m, &plan, TxnType::Sale, TxnState::Settled, 1000);
    write(&stores, &sale).await;
    let claims = (0..5).map(|_| {
        let payments = stores.transactions.clone();
        let (platform, id) = (p.scope.platform.clone(), sale.id.clone());
        let refund = txn(&m, &plan, TxnType::Refund, TxnState::Pending, 300);
        tokio::spawn(async move {
            payments
                .reserve_with_pending(
                    &Scope::new(platform.clone(), Mode::Test),
                    &id,
                    Reservation::Refund { amount: 300 },
                    &refund,
                )
                .await
                .unwrap()
        })
    });
    let mut won = 0;
    for claim in claims.collect::<Vec<_>>() {
        won += usize::from(claim.await.unwrap());
    }
    assert_eq!(won, 3, "3 × 300 fit in 1000, a fourth does not");
    let now = stores
        .transactions
        .get_transaction(&p.scope, &sale.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(now.refunded_amount, 900);
    // An auth is never refundable.
    let auth = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
    write(&stores, &auth).await;
    assert!(
        !stores
            .transactions
            .reserve_with_pending(
                &p.scope,
                &auth.id,
                Reservation::Refund { amount: 1 },
                &txn(&m, &plan, TxnType::Refund, TxnState::Pending, 1),
            )
            .await
            .unwrap()
    );
}

#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
pub async fn transactions_list_by_filter_newest_first(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let m1 = merchant(&p, "One");
    let m2 = merchant(&p, "Two");
    stores
        .merchants
        .insert_merchant_with_event(&m1, &event_id(), None)
        .await
        .unwrap();
    stores
        .merchants
        .insert_merchant_with_event(&m2, &event_id(), None)
        .await
        .unwrap();
    let plan = stored_default_plan(&stores, &p.scope).await.unwrap();
    let mut written = Vec::new();
    for (i, (m, kind)) in [
        (&m1, TxnType::Auth),
        (&m2, TxnType::Sale),
        (&m1, TxnType::Sale),
    ]
    .into_iter()
    .enumerate()
    {
        // The second is declined: the state filter keeps the other two.
        let state = if i == 1 {
            TxnState::Declined
        } else {
            TxnState::Settled
        };
        let mut t = txn(m, &plan, kind, state, 100);
        t.created_on = T0 + time::Duration::seconds(i64::try_from(i).unwrap());
        write(&stores, &t).await;
        written.push(t);
    }
    let page = PageRequest::new(None, None).unwrap();
    let list = |filter: TxnFilter| {
        let stores = stores.clone();
        let platform = p.scope.platform.clone();
        let page = page.clone();
        async move {
            stores
                .transactions
                .list_transactions(&Scope::new(platform.clone(), Mode::Test), &filter, &page)
                .await
                .unwrap()
                .data
                .into_iter()
                .map(|t| t.id)
                .collect::<Vec<_>>()
        }
    };
    let ids = |idx: &[usize]| {
        idx.iter()
            .map(|i| written[*i].id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(list(TxnFilter::default()).await, ids(&[2, 1, 0]));
    assert_eq!(
        list(TxnFilter {
            merchant_id: Some(m1.id.clone()),
            ..TxnFilter::default()
        })
        .await,
        ids(&[2, 0])
    );
    assert_eq!(
        list(TxnFilter {
            kind: Some(TxnType::Sale),
            ..TxnFilter::default()
        })
        .await,
        ids(&[2, 1])
    );
    assert_eq!(
        list(TxnFilter {
            state: Some(TxnState::Declined),
            ..TxnFilter::default()
        })
        .await,
        ids(&[1])
    );
    let from = T0 + time::Duration::seconds(1);
    assert_eq!(
        list(TxnFilter {
            created_from: Some(from),
            ..TxnFilter::default()
        })
        .await,
        ids(&[2, 1])
    );
    assert_eq!(
        list(TxnFilter {
            created_until: Some(from),
            ..TxnFilter::default()
        })
        .await,
        ids(&[0])
    );
    let live = stores
        .transactions
        .list_transactions(
            &Scope::new(p.scope.platform.clone(), Mode::Live),
            &TxnFilter::default(),
            &page,
        )
        .await
        .unwrap();
    assert!(live.data.is_empty());
    assert_eq!(
        stores
            .transactions
            .get_transaction(&p.scope, &written[0].id)
            .await
            .unwrap(),
        Some(written[0].clone())
    );
}

/// An instant no backend can store (year 10000 once in UTC) is a store error, never a panic, and
/// the connection that refused it goes on serving (on SQLite a panic poisoned its lock).
pub async fn an_instant_past_what_is_stored_is_an_error_not_a_panic(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let scope = principal(&a, Mode::Test).scope;
    let page = PageRequest::new(None, None).unwrap();
    for past_the_end in [
        datetime!(9999-12-31 23:59:59 -23:59),
        datetime!(9999-12-31 23:59:59.999_999_999 -00:01),
    ] {
        for filter in [
            TxnFilter {
                created_from: Some(past_the_end),
                ..TxnFilter::default()
            },
            TxnFilter {
                created_until: Some(past_the_end),
                ..TxnFilter::default()
            },
        ] {
            let refused = stores
                .transactions
                .list_transactions(&scope, &filter, &page)
                .await;
            assert!(
                matches!(refused, Err(StoreError::Unexpected(_))),
                "{refused:?}"
            );
        }
    }
    let listed = stores
        .transactions
        .list_transactions(&scope, &TxnFilter::default(), &page)
        .await
        .unwrap();
    assert!(listed.data.is_empty());
}

/// Pending rows past their age are found for reconciliation; a row is completed once.
pub async fn stale_pending_rows_are_found_and_completed_once(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let mut pending = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    write(&stores, &pending).await;
    let done = txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000);
    write(&stores, &done).await;
    let at = |s: i64| T0 + time::Duration::seconds(s);
    assert!(
        stores
            .transactions
            .stale_pending(T0, 10)
            .await
            .unwrap()
            .is_empty(),
        "not older than T0"
    );
    let stale = stores.transactions.stale_pending(at(1), 10).await.unwrap();
    assert_eq!(
        stale.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        [pending.id.clone()]
    );
    pending.state = TxnState::Failed;
    stores
        .transactions
        .complete_transaction_with_event(&pending, None, &event_for(&pending), None, None, None)
        .await
        .unwrap();
    let again = stores
        .transactions
        .complete_transaction_with_event(&pending, None, &event_for(&pending), None, None, None)
        .await;
    assert!(
        matches!(again, Err(StoreError::NotFound)),
        "completed once: {again:?}"
    );
    assert!(
        stores
            .transactions
            .stale_pending(at(1), 10)
            .await
            .unwrap()
            .is_empty()
    );
    let events = stores.events.list_events(&p.scope).await.unwrap();
    assert_eq!(
        events
            .iter()
            .filter(|e| e.event_type == "transaction.created")
            .count(),
        1
    );
}
