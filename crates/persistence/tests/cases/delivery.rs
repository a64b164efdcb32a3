//! Delivery's own writes: outcomes recorded in batches, and notifications leased at insert and
//! handed to the writing process's deliverers (`holdfast_persistence::hand_off`).

use std::time::Duration;

use holdfast_worker::load::{DeliveryLoad, LoadLimits};

use holdfast_domain::ports::{Claimed, DeliveryState};

use super::*;

/// Records one outcome, as a batch of one.
pub async fn complete_one(
    q: &std::sync::Arc<dyn holdfast_domain::ports::NotificationQueue>,
    id: &NotificationId,
    finished: &Finished,
) -> Result<holdfast_domain::ports::Recorded, StoreError> {
    let recorded = q
        .complete_notifications(&[(id.clone(), finished.clone())], "Acme")
        .await?;
    Ok(recorded[0])
}

/// One subscription `h` to `merchant.created`, `count` merchants written, and their
/// notifications claimed: what a case about recording outcomes starts from.
pub async fn claimed_merchant_notifications(
    stores: &Stores,
    count: usize,
) -> (CreatedPlatform, Principal, Subscription, Vec<Claimed>) {
    let a = new_platform(stores, "A").await;
    let p = principal(&a, Mode::Test);
    let hook = stored_subscription(stores, &p, "h").await;
    for i in 0..count {
        stored_merchant(stores, &p, &format!("Shop {i}")).await;
    }
    let claimed = stores
        .notifications
        .claim_notifications(T0, T0 + time::Duration::minutes(1), UNCAPPED, &[], &[])
        .await
        .unwrap();
    assert_eq!(claimed.len(), count);
    (a, p, hook, claimed)
}

/// `any_pending` tells whether any notification is pending at all: none on a new database,
/// one once written and leased, none once its outcome is recorded.
pub async fn any_pending_is_true_exactly_while_a_notification_is_pending(db: Database) {
    let stores = db.stores();
    let q = &stores.notifications;
    assert!(!q.any_pending().await.unwrap(), "a new database");
    let (_, _, _, claimed) = claimed_merchant_notifications(&stores, 1).await;
    assert!(q.any_pending().await.unwrap(), "a leased row is pending");
    let success = Finished {
        outcome: Outcome::Succeeded,
        ..failed(T0)
    };
    complete_one(q, &claimed[0].id, &success).await.unwrap();
    assert!(!q.any_pending().await.unwrap(), "a recorded row is not");
}

/// A batch is recorded as its outcomes in order: the counter counts the failures after the
/// last success, and an outcome already recorded is left as it was.
pub async fn a_batch_of_outcomes_keeps_their_order_on_the_counter(db: Database) {
    let stores = db.stores();
    let (_, p, hook, claimed) = claimed_merchant_notifications(&stores, 6).await;
    let q = &stores.notifications;
    let success = Finished {
        outcome: Outcome::Succeeded,
        ..failed(T0)
    };
    let outcome = |i: usize, f: &Finished| (claimed[i].id.clone(), f.clone());
    let counter = async || {
        let now = stores.webhooks.get_webhook(&p.scope, &hook.id).await;
        now.unwrap().unwrap().consecutive_failures
    };
    let first = [
        outcome(0, &failed(T0)),
        outcome(1, &failed(T0)),
        outcome(2, &success),
        outcome(3, &failed(T0)),
    ];
    let recorded = q.complete_notifications(&first, "Acme").await.unwrap();
    assert!(recorded.iter().all(|r| r.recorded), "{recorded:?}");
    assert_eq!(counter().await, 1, "one failure after the success");
    let second = [
        outcome(4, &failed(T0)),
        outcome(5, &success),
        outcome(0, &success),
    ];
    let recorded = q.complete_notifications(&second, "Acme").await.unwrap();
    let flags: Vec<bool> = recorded.iter().map(|r| r.recorded).collect();
    assert_eq!(
        flags,
        [true, true, false],
        "the repeat is not recorded again"
    );
    assert_eq!(counter().await, 0, "the batch ended on a success");
    let page = PageRequest::new(Some(100), None).unwrap();
    let history = stores
        .webhooks
        .list_deliveries(&p.scope.platform, Some(p.scope.mode), &hook.id, &page)
        .await
        .unwrap();
    let state_of = |i: usize| {
        history
            .data
            .iter()
            .find(|d| d.id == claimed[i].id)
            .map(|d| d.state)
    };
    assert_eq!(
        state_of(0),
        Some(DeliveryState::Done(Outcome::Failed)),
        "the first outcome stands"
    );
    assert_eq!(state_of(2), Some(DeliveryState::Done(Outcome::Succeeded)));
}

/// The 25th failure disables the subscription and queues its one email also when it lands in
/// the middle of a batch: the failures after it in the batch count on but disable and email
/// nothing more, a success after them resets the counter (the subscription stays inactive), and
/// an outcome repeated in the batch is not recorded twice.
pub async fn the_25th_failure_inside_one_batch_disables_once(db: Database) {
    let stores = db.stores();
    let (_, p, hook, claimed) = claimed_merchant_notifications(&stores, 28).await;
    let success = Finished {
        outcome: Outcome::Succeeded,
        ..failed(T0)
    };
    let mut batch: Vec<_> = claimed[..26]
        .iter()
        .map(|c| (c.id.clone(), failed(T0)))
        .collect();
    batch.push((claimed[26].id.clone(), success));
    batch.push((claimed[0].id.clone(), failed(T0)));
    batch.push((claimed[27].id.clone(), failed(T0)));
    let recorded = stores
        .notifications
        .complete_notifications(&batch, "Acme")
        .await
        .unwrap();
    assert_eq!(recorded.len(), batch.len());
    let at = |flag: fn(&holdfast_domain::ports::Recorded) -> bool| {
        recorded
            .iter()
            .enumerate()
            .filter(|(_, r)| flag(r))
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        at(|r| r.disabled),
        [24],
        "disabled by the 25th failure only"
    );
    assert_eq!(at(|r| r.email_queued), [24], "one email, with the disable");
    assert_eq!(
        at(|r| !r.recorded),
        [27],
        "the repeated outcome is not recorded"
    );
    let now = stores
        .webhooks
        .get_webhook(&p.scope, &hook.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (now.active, now.consecutive_failures),
        (false, 1),
        "26 failures, a success (reset), then one more failure; still inactive"
    );
    let emails = stores.emails.claim_emails(T0, T0, 10).await.unwrap();
    assert_eq!(emails.len(), 1);
}

fn limits(per_platform: u32, per_subscription: u32) -> LoadLimits {
    LoadLimits {
        concurrency: 8,
        per_platform,
        per_subscription,
        lease: Duration::from_secs(30),
    }
}

/// A process that delivers leases what it writes and hands the rows to its deliverers only
/// once committed, with what a claim would read of them, beyond the caps too (the rows wait in
/// its lines, in order, for room); and a handed row whose process died is claimed when its
/// lease ends.
pub async fn written_notifications_are_leased_and_handed_off_at_commit(db: Database) {
    let (load, mut handed) = DeliveryLoad::handing_off(limits(2, 8));
    let stores = db.delivering(load.hints()).stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    for suffix in ["h1", "h2"] {
        stored_subscription(&stores, &p, suffix).await;
    }
    stored_merchant(&stores, &p, "Shop 1").await;
    let mut first = handed.try_recv().expect("handed off at commit").rows;
    assert_eq!(first.len(), 2);
    assert_eq!(load.waiting(), 2, "waiting for the loop to start them");
    assert_eq!(load.in_flight(), 0);
    let q = &stores.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::minutes(1);
    assert!(
        q.claim_notifications(later, lease, UNCAPPED, &[], &[])
            .await
            .unwrap()
            .is_empty(),
        "a handed-off row is leased: no claim takes it"
    );

    // Beyond the platform's cap, the rows are handed off all the same: they wait in line.
    stored_merchant(&stores, &p, "Shop 2").await;
    assert_eq!(
        handed.try_recv().expect("handed beyond the cap").rows.len(),
        2
    );
    assert_eq!(load.waiting(), 4);

    // The process that was handed the rows died: after the lease, a claim takes them.
    let after = T0 + time::Duration::seconds(31);
    let orphans = q
        .claim_notifications(
            after,
            after + time::Duration::minutes(1),
            UNCAPPED,
            &[],
            &[],
        )
        .await
        .unwrap();
    assert_eq!(orphans.len(), 4);
    let mut orphans: Vec<_> = orphans
        .into_iter()
        .filter(|o| first.iter().any(|f| f.id == o.id))
        .collect();
    orphans.sort_by(|x, y| x.id.as_str().cmp(y.id.as_str()));
    first.sort_by(|x, y| x.id.as_str().cmp(y.id.as_str()));
    assert!(first.iter().all(|c| c.subscription.is_some()));
    assert_eq!(
        orphans, first,
        "the claim reads what the hand-off carried, field for field"
    );
}

/// Rows a process has handed itself and keeps waiting in its lines are leased but hold no
/// connection: that process's claim does not count them against the caps (it is told how many
/// wait per subscription), and never takes them.
pub async fn a_claim_does_not_count_rows_waiting_in_its_lines(db: Database) {
    let (load, mut handed) = DeliveryLoad::handing_off(limits(100, 100));
    let plain = db.clone().stores();
    let handing = db.delivering(load.hints()).stores();
    let a = new_platform(&plain, "A").await;
    let p = principal(&a, Mode::Test);
    let hook = stored_subscription(&plain, &p, "h").await;
    for shop in ["Shop 1", "Shop 2", "Shop 3"] {
        stored_merchant(&handing, &p, shop).await;
    }
    let waiting = received(&mut handed);
    assert_eq!(waiting.len(), 3);
    for shop in ["Shop 4", "Shop 5"] {
        stored_merchant(&plain, &p, shop).await;
    }
    let q = &plain.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::seconds(30);
    let two = holdfast_domain::ports::ClaimLimits {
        batch: 100,
        per_subscription: 2,
        per_platform: 100,
    };
    assert!(
        q.claim_notifications(later, lease, two, &[], &[])
            .await
            .unwrap()
            .is_empty(),
        "three leased rows, counted in flight, fill a cap of two"
    );
    let claimed = q
        .claim_notifications(later, lease, two, &[], &[(hook.id.clone(), 3)])
        .await
        .unwrap();
    assert_eq!(claimed.len(), 2, "the waiting rows hold no place");
    assert!(
        claimed.iter().all(|c| !waiting.contains(&c.id)),
        "a waiting row is leased: never claimed"
    );
    // Told of more waiting rows than are leased (a waiting row's subscription deleted, say), a
    // claim counts none in flight, never fewer than none: the platform's cap still holds.
    for shop in ["Shop 6", "Shop 7"] {
        stored_merchant(&plain, &p, shop).await;
    }
    let one_per_platform = holdfast_domain::ports::ClaimLimits {
        batch: 100,
        per_subscription: 100,
        per_platform: 1,
    };
    let claimed = q
        .claim_notifications(
            later,
            lease,
            one_per_platform,
            &[],
            &[(hook.id.clone(), 50)],
        )
        .await
        .unwrap();
    assert_eq!(claimed.len(), 1, "an overstated wait lends no place");
}

/// Takes what `handed` was given since the last call: the ids, one per row.
fn received(handed: &mut holdfast_worker::load::HandOffs) -> Vec<NotificationId> {
    let mut ids = Vec::new();
    while let Ok(batch) = handed.try_recv() {
        ids.extend(batch.rows.into_iter().map(|row| row.id));
    }
    ids
}

/// A process's lines hold 64 rows per slot of its concurrency: beyond that, rows are written
/// for the claim, and a place given back is taken again. Another process has lines of its own.
/// (Two loads on one database are two `serve` processes.)
pub async fn hand_offs_wait_in_their_process_until_its_lines_are_full(db: Database) {
    let one_slot = LoadLimits {
        concurrency: 1,
        ..limits(100, 2)
    };
    let (one, mut to_one) = DeliveryLoad::handing_off(one_slot);
    let (two, mut to_two) = DeliveryLoad::handing_off(one_slot);
    let first = db.clone().delivering(one.hints()).stores();
    let second = db.delivering(two.hints()).stores();
    let a = new_platform(&first, "A").await;
    let p = principal(&a, Mode::Test);
    let hook = stored_subscription(&first, &p, "h").await;
    stored_subscription(&first, &p, "i").await;

    for shop in 0..32 {
        stored_merchant(&first, &p, &format!("Shop {shop}")).await;
    }
    assert_eq!(
        received(&mut to_one).len(),
        64,
        "two per merchant, beyond every cap"
    );
    stored_merchant(&first, &p, "Shop 32").await;
    assert!(received(&mut to_one).is_empty(), "the lines are full");
    let q = &first.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::seconds(30);
    let waiting = q
        .claim_notifications(later, lease, UNCAPPED, &[], &[])
        .await
        .unwrap();
    assert_eq!(
        waiting.len(),
        2,
        "the rows beyond the lines were written for the claim"
    );

    stored_merchant(&second, &p, "Shop 33").await;
    assert_eq!(
        received(&mut to_two).len(),
        2,
        "another process has lines of its own"
    );

    one.left_lines([&hook.id]);
    stored_merchant(&first, &p, "Shop 34").await;
    assert_eq!(
        received(&mut to_one).len(),
        1,
        "the place a started row gave back is taken again, and only that"
    );
}
