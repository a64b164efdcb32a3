//! The reads and writes of a payment's hot path, which each backend does its own way
//! (`payment_setup`, and the completion: one statement on PostgreSQL, steps on SQLite): the
//! same contract on both.

use holdfast_domain::idempotency::{
    Answer, IdempotencyKey, KeyClaim, KeyedAnswer, Seen, fingerprint,
};
use holdfast_domain::ports::Begun;

use super::*;

/// A connection of `platform` in test mode, written.
async fn connection(stores: &Stores, platform: &PlatformId) -> ProcessorConnection {
    let c = sandbox_connection(platform);
    stores.routing.insert_connection(&c, None).await.unwrap();
    c
}

/// The merchant, its own plan or the default, and every connection the plan routes to; scoped by
/// platform and mode, deleted merchants unseen.
pub async fn payment_setup_reads_the_merchant_its_plan_and_connections(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let default = stored_default_plan(&stores, &p.scope).await.unwrap();

    let plain = stored_merchant(&stores, &p, "Plain").await;
    let setup = stores
        .transactions
        .payment_setup(&p.scope, &plain.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(setup.merchant, plain);
    assert_eq!(setup.plan.as_ref(), Some(&default), "no plan: the default");
    let ids: Vec<_> = setup.connections.iter().map(|c| c.id.clone()).collect();
    assert!(ids.contains(&default.default_connection), "{ids:?}");

    // A plan of its own: the default connection, a brand route and a fallback, all read; a
    // connection the plan does not name is not needed.
    let (main, amex, backup, unused) = (
        connection(&stores, &p.scope.platform).await,
        connection(&stores, &p.scope.platform).await,
        connection(&stores, &p.scope.platform).await,
        connection(&stores, &p.scope.platform).await,
    );
    let own = Plan {
        is_default: false,
        default_connection: main.id.clone(),
        brand_routes: vec![(CardBrand::Amex, amex.id.clone())],
        fallbacks: vec![backup.id.clone()],
        ..default_plan(&p.scope.platform, &main.id)
    };
    stores.routing.insert_plan(&own, None).await.unwrap();
    let planned = Merchant {
        plan_id: Some(own.id.clone()),
        onboarding_status: holdfast_domain::boarding::OnboardingStatus::NotStarted,
        raw_cards_on: None,
        ..merchant(&p, "Planned")
    };
    stores
        .merchants
        .insert_merchant_with_event(&planned, &event_id(), None)
        .await
        .unwrap();
    let setup = stores
        .transactions
        .payment_setup(&p.scope, &planned.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(setup.plan.as_ref(), Some(&own));
    let mut read: Vec<_> = setup.connections.iter().map(|c| c.id.clone()).collect();
    read.sort();
    let mut named = vec![main.id.clone(), amex.id.clone(), backup.id.clone()];
    named.sort();
    assert_eq!(
        read, named,
        "exactly the connections the plan names, each once"
    );
    assert!(!read.contains(&unused.id), "{read:?}");
    assert_eq!(
        setup.connections.iter().find(|c| c.id == amex.id),
        Some(&amex),
        "whole rows"
    );

    // Unseen from another platform or mode, and once deleted.
    let other = new_platform(&stores, "B").await;
    for (platform, mode) in [
        (&other.platform.id, Mode::Test),
        (&p.scope.platform, Mode::Live),
    ] {
        let seen = stores
            .transactions
            .payment_setup(&Scope::new(platform.clone(), mode), &plain.id)
            .await
            .unwrap();
        assert!(seen.is_none(), "{platform} {mode:?}");
    }
    stores
        .merchants
        .delete_merchant_with_event(&p.scope, &plain.id, T0, &event_id())
        .await
        .unwrap();
    let gone = stores
        .transactions
        .payment_setup(&p.scope, &plain.id)
        .await
        .unwrap();
    assert!(gone.is_none());

    // A live merchant with no live default plan: the merchant, and no plan.
    let live = principal(&a, Mode::Live);
    let shop = stored_merchant(&stores, &live, "Live shop").await;
    let setup = stores
        .transactions
        .payment_setup(&live.scope, &shop.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((setup.merchant, setup.plan), (shop, None));
}

/// The completion writes the final row, the event, one notification per active subscription
/// that names `transaction.created` (ids as `ntf_` + event suffix + subscription suffix) and the
/// idempotent response, or, when the row is no longer pending or the original cannot move,
/// nothing at all.
#[expect(
    clippy::too_many_lines,
    reason = "one story: a completion, its refusals, and what each left"
)]
pub async fn completion_writes_event_fan_out_and_reply_or_nothing(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    // Written before the subscriptions: its own event queues nothing.
    let m = stored_merchant(&stores, &p, "Shop").await;
    for (suffix, events, active) in [
        ("txn", &["transaction.created"][..], true),
        (
            "both",
            &["merchant.created", "transaction.created"][..],
            true,
        ),
        ("off", &["transaction.created"][..], false),
        ("merchants", &["merchant.created"][..], true),
    ] {
        stores
            .webhooks
            .insert_webhook(&subscription(&p, suffix, events, active), u32::MAX, None)
            .await
            .unwrap();
    }
    let plan = stored_default_plan(&stores, &p.scope).await.unwrap();

    let key = IdempotencyKey::parse("pay-1").unwrap();
    let print = fingerprint(&[7; 32], "POST", "/v1/transactions", b"{}");
    let idem = &stores.idempotency;
    let claim = idem.begin(&p.scope, &key, &print, T0).await;
    assert_eq!(claim.unwrap(), Begun::Started);
    let auth = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    write(&stores, &auth).await;
    let done = Transaction {
        state: TxnState::Authorized,
        ..auth.clone()
    };
    let event = event_for(&done);
    let reply = KeyedAnswer {
        key: key.clone(),
        answer: Answer {
            status: 201,
            body: format!(r#"{{"id":"{}"}}"#, done.id),
        },
    };
    stores
        .transactions
        .complete_transaction_with_event(&done, None, &event, Some(reply.clone()), None, None)
        .await
        .unwrap();

    let written = stores
        .transactions
        .get_transaction(&p.scope, &done.id)
        .await
        .unwrap();
    assert_eq!(written, Some(done.clone()));
    let again = idem.begin(&p.scope, &key, &print, T0).await;
    assert_eq!(
        again.unwrap(),
        Begun::Seen(Seen::Replay(reply.answer.clone())),
        "the response is stored with the transaction"
    );
    let later = T0 + time::Duration::seconds(1);
    let queued = stores
        .notifications
        .claim_notifications(
            later,
            later + time::Duration::minutes(1),
            UNCAPPED,
            &[],
            &[],
        )
        .await
        .unwrap();
    let mut got: Vec<(String, String, String)> = queued
        .iter()
        .map(|c| {
            (
                c.id.to_string(),
                c.subscription.as_ref().unwrap().id.to_string(),
                c.event_type.clone(),
            )
        })
        .collect();
    got.sort();
    let suffix = event.id.as_str().trim_start_matches("evt_");
    let expected = |hook: &str| {
        (
            format!("ntf_{suffix}{hook}"),
            format!("wh_{hook}"),
            "transaction.created".to_owned(),
        )
    };
    assert_eq!(got, [expected("both"), expected("txn")]);
    assert!(
        queued
            .iter()
            .all(|c| c.event_data.contains(done.id.as_str()))
    );

    // Completed once: a second completion writes nothing, not even its reply.
    let second_key = IdempotencyKey::parse("pay-2").unwrap();
    let claim = idem.begin(&p.scope, &second_key, &print, T0).await;
    assert_eq!(claim.unwrap(), Begun::Started);
    let refused = stores
        .transactions
        .complete_transaction_with_event(
            &done,
            None,
            &event_for(&done),
            Some(KeyedAnswer {
                key: second_key.clone(),
                ..reply.clone()
            }),
            None,
            None,
        )
        .await;
    assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
    let still = idem.begin(&p.scope, &second_key, &print, T0).await;
    assert_eq!(still.unwrap(), Begun::Seen(Seen::InProgress));

    // A capture whose original is not reserved cannot close it: nothing is kept.
    let mut capture = txn(&m, &plan, TxnType::Capture, TxnState::Pending, 1000);
    capture.parent_id = Some(done.id.clone());
    write(&stores, &capture).await;
    let captured = Transaction {
        state: TxnState::Settled,
        ..capture.clone()
    };
    let refused = stores
        .transactions
        .complete_transaction_with_event(
            &captured,
            Some((done.id.clone(), OriginalOutcome::Closed(TxnState::Captured))),
            &event_for(&captured),
            None,
            None,
            None,
        )
        .await;
    assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
    for (id, state) in [
        (&capture.id, TxnState::Pending),
        (&done.id, TxnState::Authorized),
    ] {
        let row = stores
            .transactions
            .get_transaction(&p.scope, id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.state, state, "{id}");
    }
    let events = stores.events.list_events(&p.scope).await.unwrap();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        ["merchant.created", "transaction.created"],
        "only the auth's"
    );
    let later = T0 + time::Duration::minutes(5);
    let queued = claim_all_due(&stores, later).await;
    assert_eq!(queued.len(), 2, "only the auth's notifications");
}

/// A refund that fails gives its reserved amount back to the original, and only then.
pub async fn a_failed_refund_releases_its_reservation(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let sale = txn(&m, &plan, TxnType::Sale, TxnState::Settled, 1000);
    write(&stores, &sale).await;
    let mut refund = txn(&m, &plan, TxnType::Refund, TxnState::Pending, 400);
    refund.parent_id = Some(sale.id.clone());
    let reserved = stores
        .transactions
        .reserve_with_pending(
            &p.scope,
            &sale.id,
            Reservation::Refund { amount: 400 },
            &refund,
        )
        .await
        .unwrap();
    assert!(reserved);
    assert_eq!(
        refunded(&stores, &p, &sale.id).await,
        (TxnState::Settled, 400)
    );
    refund.state = TxnState::Declined;
    stores
        .transactions
        .complete_transaction_with_event(
            &refund,
            Some((
                sale.id.clone(),
                OriginalOutcome::RefundReleased { amount: 400 },
            )),
            &event_for(&refund),
            None,
            None,
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        refunded(&stores, &p, &sale.id).await,
        (TxnState::Settled, 0)
    );
    // Completed once: a second completion releases nothing more.
    let again = stores
        .transactions
        .complete_transaction_with_event(
            &refund,
            Some((
                sale.id.clone(),
                OriginalOutcome::RefundReleased { amount: 400 },
            )),
            &event_for(&refund),
            None,
            None,
            None,
        )
        .await;
    assert!(matches!(again, Err(StoreError::NotFound)), "{again:?}");
    assert_eq!(
        refunded(&stores, &p, &sale.id).await,
        (TxnState::Settled, 0)
    );
}

async fn refunded(stores: &Stores, p: &Principal, id: &TxnId) -> (TxnState, i64) {
    let row = stores
        .transactions
        .get_transaction(&p.scope, id)
        .await
        .unwrap()
        .unwrap();
    (row.state, row.refunded_amount)
}

/// A transaction's and a merchant's notifications are found by the resource's id (the
/// dashboard's Webhook Deliveries tab): the completion statement and the step-by-step outbox
/// both record what an event is about; another mode finds nothing.
pub async fn a_resources_deliveries_are_found_by_its_id(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let events = ["transaction.created", "merchant.created"];
    stores
        .webhooks
        .insert_webhook(&subscription(&p, "both", &events, true), u32::MAX, None)
        .await
        .unwrap();
    let m = stored_merchant(&stores, &p, "Shop").await;
    let plan = stored_default_plan(&stores, &p.scope).await.unwrap();
    let pending = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    write(&stores, &pending).await;
    let done = Transaction {
        state: TxnState::Authorized,
        ..pending
    };
    stores
        .transactions
        .complete_transaction_with_event(&done, None, &event_for(&done), None, None, None)
        .await
        .unwrap();
    let hooks = &stores.webhooks;
    let of_txn = hooks
        .deliveries_about(&p.scope, done.id.as_str(), 100)
        .await
        .unwrap();
    let types: Vec<&str> = of_txn.iter().map(|d| d.event_type.as_str()).collect();
    assert_eq!(types, ["transaction.created"]);
    let of_merchant = hooks
        .deliveries_about(&p.scope, m.id.as_str(), 100)
        .await
        .unwrap();
    let types: Vec<&str> = of_merchant.iter().map(|d| d.event_type.as_str()).collect();
    assert_eq!(types, ["merchant.created"]);
    let live = Scope::new(a.platform.id.clone(), Mode::Live);
    let elsewhere = hooks
        .deliveries_about(&live, done.id.as_str(), 100)
        .await
        .unwrap();
    assert!(elsewhere.is_empty(), "another mode finds nothing");
}

/// Payment writes that arrive together on a worker thread (a single-threaded runtime of its own,
/// as each HTTP worker has) are written together, on PostgreSQL in one commit: pending rows, and
/// completions with each payment's row, event, notification and stored answer exactly as alone.
/// One row no longer pending (its reconciliation came first) is refused alone, the others kept.
#[expect(
    clippy::too_many_lines,
    reason = "one story: payments completed together, and what each left"
)]
pub async fn payment_writes_arriving_together_are_each_written_whole(
    test_db: holdfast_persistence::testing::TestDatabase,
) {
    const PAYMENTS: usize = 12;
    let db = test_db.open();
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let hook = subscription(&p, "txn", &["transaction.created"], true);
    stores
        .webhooks
        .insert_webhook(&hook, u32::MAX, None)
        .await
        .unwrap();
    let print = fingerprint(&[7; 32], "POST", "/v1/transactions", b"{}");
    let claim = |n: usize| KeyClaim {
        key: IdempotencyKey::parse(&format!("pay-{n}")).unwrap(),
        fingerprint: print,
        at: T0,
    };
    // Each pending row claims its payment's key; a thirteenth claims the first one's again.
    let pending: Vec<Transaction> = (0..=PAYMENTS)
        .map(|_| txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000))
        .collect();
    let inserted = futures_util::future::join_all(pending.iter().enumerate().map(|(n, x)| {
        let claim = claim(n % PAYMENTS);
        stores
            .transactions
            .insert_pending_transaction(x, Some(claim))
    }))
    .await;
    let inserted: Vec<bool> = inserted.into_iter().map(Result::unwrap).collect();
    assert_eq!(inserted, [vec![true; PAYMENTS], vec![false]].concat());
    let mut pending = pending;
    let second_claim = pending.pop().unwrap();
    let not_written = stores
        .transactions
        .get_transaction(&p.scope, &second_claim.id)
        .await
        .unwrap();
    assert_eq!(
        not_written, None,
        "a row whose key was taken is not written"
    );
    let other_print = fingerprint(&[7; 32], "POST", "/v1/transactions", b"{\"a\":1}");
    let first_key = claim(0).key;
    let claimed = stores
        .idempotency
        .begin(&p.scope, &first_key, &other_print, T0)
        .await;
    assert_eq!(
        claimed.unwrap(),
        Begun::Seen(Seen::Mismatch),
        "the claim stored its request's fingerprint"
    );
    let ids: Vec<&str> = pending.iter().map(|x| x.id.as_str()).collect();
    if test_db.url().starts_with("postgres") {
        assert_eq!(
            test_db.commits_that_wrote_transactions(&ids).await,
            1,
            "pending rows queued together commit together"
        );
    }
    let mut completions = Vec::new();
    for (n, pending) in pending.into_iter().enumerate() {
        let key = claim(n).key;
        let done = Transaction {
            state: TxnState::Authorized,
            ..pending
        };
        let reply = KeyedAnswer {
            key,
            answer: Answer {
                status: 201,
                body: format!(r#"{{"id":"{}"}}"#, done.id),
            },
        };
        completions.push((done, reply));
    }
    // The fourth was completed first by its reconciliation.
    let (late, _) = &completions[3];
    let reconciled = Transaction {
        state: TxnState::Declined,
        ..late.clone()
    };
    let reconciliation = event_for(&reconciled);
    stores
        .transactions
        .complete_transaction_with_event(&reconciled, None, &reconciliation, None, None, None)
        .await
        .unwrap();

    let events: Vec<Event> = completions.iter().map(|(t, _)| event_for(t)).collect();
    let results = futures_util::future::join_all(completions.iter().zip(&events).map(
        |((done, reply), event)| {
            stores.transactions.complete_transaction_with_event(
                done,
                None,
                event,
                Some(reply.clone()),
                None,
                None,
            )
        },
    ))
    .await;

    let mut kept = Vec::new();
    for (n, ((done, reply), result)) in completions.iter().zip(results).enumerate() {
        let row = stores
            .transactions
            .get_transaction(&p.scope, &done.id)
            .await
            .unwrap()
            .unwrap();
        let replayed = stores
            .idempotency
            .begin(&p.scope, &reply.key, &print, T0)
            .await
            .unwrap();
        if n == 3 {
            assert!(matches!(result, Err(StoreError::NotFound)), "{result:?}");
            assert_eq!(row.state, TxnState::Declined, "the reconciliation's stands");
            assert_eq!(replayed, Begun::Seen(Seen::InProgress), "no answer stored");
        } else {
            assert!(!result.unwrap(), "no session to close");
            assert_eq!(row, *done, "payment {n}");
            assert_eq!(replayed, Begun::Seen(Seen::Replay(reply.answer.clone())));
            kept.push(done.id.as_str());
        }
    }
    let written = stores.events.list_events(&p.scope).await.unwrap();
    let mut written: Vec<String> = written
        .iter()
        .filter(|e| e.event_type == "transaction.created")
        .map(|e| e.id.to_string())
        .collect();
    written.sort();
    let mut expected: Vec<String> = events
        .iter()
        .enumerate()
        .filter(|(n, _)| *n != 3)
        .map(|(_, e)| e.id.to_string())
        .collect();
    expected.push(reconciliation.id.to_string());
    expected.sort();
    assert_eq!(
        written, expected,
        "one event each, the late one's not written"
    );
    let later = T0 + time::Duration::minutes(5);
    let queued = claim_all_due(&stores, later).await;
    assert_eq!(queued.len(), PAYMENTS, "one notification per event");
    if test_db.url().starts_with("postgres") {
        assert_eq!(
            test_db.commits_that_wrote_transactions(&kept).await,
            1,
            "completions queued together commit together"
        );
    }
}

/// A batch of writes that fails as a whole (here a pending row whose id is taken) sends each
/// write back to run alone: the bad one fails on its own, the others are written.
pub async fn one_bad_write_in_a_batch_costs_the_others_nothing(
    test_db: holdfast_persistence::testing::TestDatabase,
) {
    let db = test_db.open();
    let stores = db.stores();
    let Shop { m, plan, .. } = shop(&stores).await;
    let taken = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    write(&stores, &taken).await;
    let mut pending: Vec<Transaction> = (0..6)
        .map(|_| txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000))
        .collect();
    pending[2].id = taken.id.clone();
    // Odd payments claim their keys with their rows: run alone, each claim goes with its row.
    let print = fingerprint(&[7; 32], "POST", "/v1/transactions", b"{}");
    let claim = |n: usize| KeyClaim {
        key: IdempotencyKey::parse(&format!("alone-{n}")).unwrap(),
        fingerprint: print,
        at: T0,
    };
    let inserted = futures_util::future::join_all(pending.iter().enumerate().map(|(n, x)| {
        let claim = (n % 2 == 1).then(|| claim(n));
        stores.transactions.insert_pending_transaction(x, claim)
    }))
    .await;
    for (n, (x, result)) in pending.iter().zip(&inserted).enumerate() {
        if n == 2 {
            assert!(result.is_err(), "the taken id is refused");
            continue;
        }
        assert!(matches!(result, Ok(true)), "payment {n}: {result:?}");
        if n % 2 == 1 {
            let seen = stores
                .idempotency
                .begin(
                    &Scope::new(x.platform_id.clone(), x.mode),
                    &claim(n).key,
                    &print,
                    T0,
                )
                .await;
            assert_eq!(
                seen.unwrap(),
                Begun::Seen(Seen::InProgress),
                "payment {n}'s key"
            );
        }
        let row = stores
            .transactions
            .get_transaction(&Scope::new(x.platform_id.clone(), x.mode), &x.id)
            .await
            .unwrap();
        assert_eq!(row.as_ref(), Some(x), "payment {n}");
    }
}

/// A pending row written with a claim on its idempotency key is written only if the key was
/// free, and the key is then claimed with the request's fingerprint and time, exactly as a claim
/// of its own would be: a repeat sees it running, another request under it a mismatch. A second
/// payment under the same key writes nothing. Keys are per platform and mode.
pub async fn a_pending_row_claims_its_key_or_is_not_written(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let print = fingerprint(&[7; 32], "POST", "/v1/transactions", b"{}");
    let claim = KeyClaim {
        key: IdempotencyKey::parse("order-1001").unwrap(),
        fingerprint: print,
        at: T0,
    };
    let txns = &stores.transactions;
    let first = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    let written = txns
        .insert_pending_transaction(&first, Some(claim.clone()))
        .await;
    assert!(
        written.unwrap(),
        "a free key is claimed and the row written"
    );
    let row = txns.get_transaction(&p.scope, &first.id).await.unwrap();
    assert_eq!(row, Some(first.clone()));
    let idem = &stores.idempotency;
    let seen = idem.begin(&p.scope, &claim.key, &print, T0).await.unwrap();
    assert_eq!(seen, Begun::Seen(Seen::InProgress));
    let other = fingerprint(&[7; 32], "POST", "/v1/transactions", b"{\"a\":1}");
    let seen = idem.begin(&p.scope, &claim.key, &other, T0).await.unwrap();
    assert_eq!(seen, Begun::Seen(Seen::Mismatch));
    // Abandoned after five minutes, as any claim: its time is the one given.
    let later = T0 + holdfast_domain::idempotency::ABANDONED_AFTER;
    let second = txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000);
    let written = txns
        .insert_pending_transaction(&second, Some(claim.clone()))
        .await;
    assert!(!written.unwrap(), "a taken key writes nothing");
    let row = txns.get_transaction(&p.scope, &second.id).await.unwrap();
    assert_eq!(row, None);
    let restarted = idem
        .begin(&p.scope, &claim.key, &print, later)
        .await
        .unwrap();
    assert_eq!(
        restarted,
        Begun::Started,
        "an abandoned claim is taken over"
    );
    // The same key in the other mode is another key.
    let live = Scope::new(p.scope.platform.clone(), Mode::Live);
    let elsewhere = Transaction {
        mode: Mode::Live,
        ..txn(&m, &plan, TxnType::Auth, TxnState::Pending, 1000)
    };
    let written = txns
        .insert_pending_transaction(&elsewhere, Some(claim))
        .await;
    assert!(written.unwrap(), "live has keys of its own");
    let row = txns.get_transaction(&live, &elsewhere.id).await.unwrap();
    assert_eq!(row.map(|x| x.mode), Some(Mode::Live));
}
