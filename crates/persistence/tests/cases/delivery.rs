//! Delivery's own writes: outcomes recorded in batches, and notifications leased at insert and
//! handed to the writing process's deliverers (`holdfast_persistence::hand_off`).

use std::time::Duration;

use holdfast_persistence::hand_off::{DeliveryLoad, LoadLimits};

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

/// A batch is recorded as its outcomes in order: the counter counts the failures after the
/// last success, and an outcome already recorded is left as it was.
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
        .claim_notifications(T0, T0 + time::Duration::minutes(1), UNCAPPED)
        .await
        .unwrap();
    assert_eq!(claimed.len(), count);
    (a, p, hook, claimed)
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

fn limits(per_platform: u32, per_subscription: u32) -> LoadLimits {
    LoadLimits {
        concurrency: 8,
        per_platform,
        per_subscription,
        lease: Duration::from_secs(30),
    }
}

/// A process that delivers leases what it writes while it has room, and hands the rows to its
/// deliverers only once committed, with what a claim would read of them; without room, the rows
/// wait for a claim; and a handed row whose process died is claimed when its lease ends.
pub async fn written_notifications_are_leased_and_handed_off_at_commit(db: Database) {
    let (load, mut handed) = DeliveryLoad::handing_off(limits(2, 8));
    let stores = db.delivering(load.clone()).stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    for suffix in ["h1", "h2"] {
        stored_subscription(&stores, &p, suffix).await;
    }
    stored_merchant(&stores, &p, "Shop 1").await;
    let mut first = handed.try_recv().expect("handed off at commit").rows;
    assert_eq!(first.len(), 2);
    assert_eq!(load.in_flight(), 2);
    let q = &stores.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::minutes(1);
    assert!(
        q.claim_notifications(later, lease, UNCAPPED)
            .await
            .unwrap()
            .is_empty(),
        "a handed-off row is leased: no claim takes it"
    );

    // The platform is at its cap: the next rows are left for the claim.
    stored_merchant(&stores, &p, "Shop 2").await;
    assert!(handed.try_recv().is_err(), "nothing handed beyond the cap");
    assert_eq!(load.in_flight(), 2);
    let claimed = q.claim_notifications(later, lease, UNCAPPED).await.unwrap();
    assert_eq!(claimed.len(), 2, "the unleased rows are claimed");

    // The process that was handed the first rows died: after the lease, a claim takes them.
    let after = T0 + time::Duration::seconds(31);
    let mut orphans = q
        .claim_notifications(after, after + time::Duration::minutes(1), UNCAPPED)
        .await
        .unwrap();
    orphans.sort_by(|x, y| x.id.as_str().cmp(y.id.as_str()));
    first.sort_by(|x, y| x.id.as_str().cmp(y.id.as_str()));
    assert!(first.iter().all(|c| c.subscription.is_some()));
    assert_eq!(
        orphans, first,
        "the claim reads what the hand-off carried, field for field"
    );
}

/// Takes what `handed` was given since the last call: the ids, one per row.
fn received(handed: &mut holdfast_persistence::hand_off::HandOffs) -> Vec<NotificationId> {
    let mut ids = Vec::new();
    while let Ok(batch) = handed.try_recv() {
        ids.extend(batch.rows.into_iter().map(|row| row.id));
    }
    ids
}

/// Hand-offs keep to the subscription's cap in their process: beyond it, rows wait for a claim,
/// and the room an attempt gives back is taken again. Another process counts its own. (Two loads
/// on one database are two `serve` processes.)
pub async fn hand_offs_keep_the_subscription_cap_of_their_process(db: Database) {
    let capped = limits(100, 2);
    let (one, mut to_one) = DeliveryLoad::handing_off(capped);
    let (two, mut to_two) = DeliveryLoad::handing_off(capped);
    let first = db.clone().delivering(one.clone()).stores();
    let second = db.delivering(two.clone()).stores();
    let a = new_platform(&first, "A").await;
    let p = principal(&a, Mode::Test);
    let hook = stored_subscription(&first, &p, "h").await;
    stored_subscription(&first, &p, "i").await;

    for shop in ["Shop 1", "Shop 2", "Shop 3"] {
        stored_merchant(&first, &p, shop).await;
    }
    let handed = received(&mut to_one);
    assert_eq!(
        handed.len(),
        4,
        "two of each subscription: the third of each waits for a claim"
    );
    assert_eq!(one.in_flight(), 4);
    let q = &first.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::seconds(30);
    let waiting = q.claim_notifications(later, lease, UNCAPPED).await.unwrap();
    assert_eq!(
        waiting.len(),
        2,
        "the rows beyond the cap were written for the claim"
    );

    stored_merchant(&second, &p, "Shop 4").await;
    assert_eq!(
        received(&mut to_two).len(),
        2,
        "another process counts its own attempts"
    );

    let owner = holdfast_persistence::hand_off::Owner {
        platform: p.scope.platform.clone(),
        webhook: hook.id.clone(),
    };
    one.ended(&owner, 1);
    stored_merchant(&first, &p, "Shop 5").await;
    let again = received(&mut to_one);
    assert_eq!(
        again.len(),
        1,
        "the room an attempt gave back is taken again, and only that"
    );
}
