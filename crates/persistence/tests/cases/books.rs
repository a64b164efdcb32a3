//! The double-entry ledger: a completion posts its journal with it or not at all, balances are
//! summed from the entries, and the check finds the books whole.

use holdfast_domain::ledger::journal_for;
use holdfast_domain::ports::{Balance, OriginalOutcome};

use super::*;

/// `done`, the final form of a pending transaction following up `follows`, completed with
/// the journal it posts.
async fn completed(
    stores: &Stores,
    done: &Transaction,
    follows: Option<&Transaction>,
    original: Option<(TxnId, OriginalOutcome)>,
) -> Result<bool, StoreError> {
    let journal = journal_for(done, follows, T0);
    stores
        .transactions
        .complete_transaction_with_event(done, original, &event_for(done), None, None, journal)
        .await
}

/// A pending transaction of `kind` written, then completed in `state`.
async fn paid(stores: &Stores, shop: &Shop, kind: TxnType, state: TxnState) -> Transaction {
    let Shop { m, plan, .. } = shop;
    let pending = txn(m, plan, kind, TxnState::Pending, 1000);
    write(stores, &pending).await;
    let done = Transaction { state, ..pending };
    completed(stores, &done, None, None).await.unwrap();
    done
}

/// A sale, an auth and its capture (a completion that moves its original), a refund of the
/// sale and a decline: each money-moving completion posts one journal with it; the balances
/// are their entries' sums, shown as the merchant is owed; a completion that lost its race
/// posts nothing; the check finds the books whole.
pub async fn a_completion_posts_its_journal_or_nothing(db: Database) {
    let stores = db.stores();
    let shop = shop(&stores).await;
    let Shop { p, m, plan } = &shop;
    let sale = paid(&stores, &shop, TxnType::Sale, TxnState::Settled).await;
    let auth = paid(&stores, &shop, TxnType::Auth, TxnState::Authorized).await;
    paid(&stores, &shop, TxnType::Sale, TxnState::Declined).await;

    // A capture closes its auth in the same write: the statement's other form.
    let closing = stores
        .transactions
        .reserve_with_pending(
            &p.scope,
            &auth.id,
            holdfast_domain::ports::Reservation::CloseAuth,
            &Transaction {
                parent_id: Some(auth.id.clone()),
                ..txn(m, plan, TxnType::Capture, TxnState::Pending, 1000)
            },
        )
        .await;
    assert!(closing.is_ok(), "{closing:?}");
    let capture = stores
        .transactions
        .list_transactions(
            &p.scope,
            &TxnFilter::default(),
            &PageRequest::new(None, None).unwrap(),
        )
        .await
        .unwrap()
        .data
        .into_iter()
        .find(|t| t.kind == TxnType::Capture)
        .unwrap();
    let capture = Transaction {
        state: TxnState::Settled,
        ..capture
    };
    completed(
        &stores,
        &capture,
        Some(&auth),
        Some((auth.id.clone(), OriginalOutcome::Closed(TxnState::Captured))),
    )
    .await
    .unwrap();

    let refund = Transaction {
        parent_id: Some(sale.id.clone()),
        fee: 0,
        ..txn(m, plan, TxnType::Refund, TxnState::Pending, 400)
    };
    write(&stores, &refund).await;
    let refund = Transaction {
        state: TxnState::Settled,
        ..refund
    };
    completed(&stores, &refund, None, None).await.unwrap();

    // Completed once: a second completion is refused and posts nothing.
    let again = completed(&stores, &sale, None, None).await;
    assert!(matches!(again, Err(StoreError::NotFound)), "{again:?}");

    // Pending: the sale's 970 and the capture's 1000 less its fee and its auth's (30 each);
    // available: the refund taken from it. The auth itself moved nothing.
    assert_eq!(
        stores.ledger.balances(&p.scope, &m.id).await.unwrap(),
        [Balance {
            currency: m.details.currency,
            available: -400,
            pending: 970 + 940,
            in_transit: 0,
        }]
    );
    let check = stores.ledger.check(T0).await.unwrap();
    assert_eq!(check.problems, Vec::<String>::new());
    assert_eq!((check.journals, check.entries), (3, 3 + 3 + 2));
    // Another mode's or platform's merchant has nothing here.
    let live = Scope::new(p.scope.platform.clone(), Mode::Live);
    assert!(
        stores
            .ledger
            .balances(&live, &m.id)
            .await
            .unwrap()
            .is_empty()
    );
}

/// The same, on a worker thread, where a plain completion is batched with others (group
/// commit on PostgreSQL): its journal goes in the batch's transaction.
pub async fn batched_completions_post_their_journals(
    db: holdfast_persistence::testing::TestDatabase,
) {
    a_completion_posts_its_journal_or_nothing(db.open()).await;
}

/// Transactions recorded before the ledger existed get their journals from its migrations, by
/// the same rules: the books verify after them, and the balances are what the payments made.
/// Reverting from the ledger's first migration also replays the second, which took the auths'
/// fees into their captures' charges: the first posted them on their own.
pub async fn the_ledgers_migrations_post_what_came_before(
    test_db: holdfast_persistence::testing::TestDatabase,
) {
    const LEDGER: &str = "20261206000003";
    let stores = test_db.open().stores();
    let Shop { p, m, plan } = shop(&stores).await;
    // Written as rows whatever their state, as the builds before the ledger left them.
    let mut refund = txn(&m, &plan, TxnType::Refund, TxnState::Settled, 400);
    refund.fee = 0;
    let captured = txn(&m, &plan, TxnType::Auth, TxnState::Captured, 1000);
    let capture = Transaction {
        parent_id: Some(captured.id.clone()),
        fee: 20,
        ..txn(&m, &plan, TxnType::Capture, TxnState::Settled, 1000)
    };
    for t in [
        txn(&m, &plan, TxnType::Sale, TxnState::Settled, 1000),
        captured,
        capture,
        txn(&m, &plan, TxnType::Auth, TxnState::Voided, 1000),
        txn(&m, &plan, TxnType::Auth, TxnState::Authorized, 1000),
        txn(&m, &plan, TxnType::Auth, TxnState::Declined, 1000),
        txn(&m, &plan, TxnType::Capture, TxnState::Processing, 1000),
        refund,
    ] {
        write(&stores, &t).await;
    }
    drop(stores);
    test_db
        .revert_through_and_reapply(LEDGER, async || {})
        .await;
    let stores = test_db.open().stores();
    let check = stores.ledger.check(T0).await.unwrap();
    assert_eq!(check.problems, Vec::<String>::new());
    assert_eq!((check.journals, check.entries), (3, 3 + 3 + 2));
    assert_eq!(
        stores.ledger.balances(&p.scope, &m.id).await.unwrap(),
        [Balance {
            currency: m.details.currency,
            available: -400,
            // The sale's 970; the capture's 1000 less its 20 and its auth's 30.
            pending: 970 + 950,
            in_transit: 0,
        }]
    );
}
