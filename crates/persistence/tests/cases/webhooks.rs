//! Webhooks: the outbox fan-out, the failure counter, fair claims, secret rotation, the cap and deletion.

use super::*;

/// Merchant writes emit their events with the fan-out, in the same transaction: one
/// notification per active subscription of the platform and mode that names the type.
#[expect(
    clippy::too_many_lines,
    reason = "one story: three writes, their events, their fan-out"
)]
pub async fn merchant_events_fan_out_to_matching_active_subscriptions(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let all = ["merchant.created", "merchant.updated", "merchant.deleted"];
    let hooks = &stores.webhooks;
    hooks
        .insert_webhook(&subscription(&p, "all", &all, true), u32::MAX, None)
        .await
        .unwrap();
    hooks
        .insert_webhook(
            &subscription(&p, "created", &["merchant.created"], true),
            u32::MAX,
            None,
        )
        .await
        .unwrap();
    hooks
        .insert_webhook(&subscription(&p, "off", &all, false), u32::MAX, None)
        .await
        .unwrap();
    hooks
        .insert_webhook(
            &subscription(&principal(&a, Mode::Live), "live", &all, true),
            u32::MAX,
            None,
        )
        .await
        .unwrap();

    let m = stored_merchant(&stores, &p, "Shop").await;
    let rename = MerchantPatch {
        name: Some(MerchantName::parse("Renamed").unwrap()),
        ..MerchantPatch::default()
    };
    stores
        .merchants
        .update_merchant_with_event(&p.scope, &m.id, &rename, T0, &event_id())
        .await
        .unwrap();
    stores
        .merchants
        .delete_merchant_with_event(&p.scope, &m.id, T0, &event_id())
        .await
        .unwrap();
    let again = stores
        .merchants
        .delete_merchant_with_event(&p.scope, &m.id, T0, &event_id())
        .await;
    assert!(
        matches!(again, Err(StoreError::NotFound)),
        "a second delete reports nothing"
    );

    let events = stores.events.list_events(&p.scope).await.unwrap();
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types, all,
        "one event per change, none for the refused delete"
    );
    assert!(
        events[1].data.contains(r#""name":"Renamed""#),
        "{}",
        events[1].data
    );
    assert_eq!(
        events[2].data,
        format!(r#"{{"id":"{}","deleted":true}}"#, m.id)
    );

    let later = T0 + time::Duration::seconds(1);
    let claimed = stores
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
    let mut got: Vec<(String, String)> = claimed
        .iter()
        .map(|c| {
            (
                c.subscription.as_ref().unwrap().id.to_string(),
                c.event_type.clone(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        [
            ("wh_all".into(), "merchant.created".into()),
            ("wh_all".into(), "merchant.deleted".into()),
            ("wh_all".into(), "merchant.updated".into()),
            ("wh_created".into(), "merchant.created".into()),
        ],
        "the inactive and the live subscription get nothing"
    );
    // Leased: not claimed again until the lease ends.
    assert!(claim_all_due(&stores, later).await.is_empty());
    let after_lease = later + time::Duration::minutes(2);
    assert_eq!(claim_all_due(&stores, after_lease).await.len(), 4);

    // Only transaction notifications can be resent.
    let refused = stores
        .notifications
        .resend(
            &p.scope.platform,
            &claimed[0].id,
            &NotificationId::from_suffix("again"),
            later,
        )
        .await;
    assert!(
        matches!(refused, Err(ResendError::NotTransaction)),
        "{refused:?}"
    );
}

/// Spec 3.2: +1 per failed notification, reset by a success, inactive at 25 with one email
/// to the creator; an outcome is recorded once.
pub async fn the_counter_disables_at_twenty_five_and_queues_one_email(db: Database) {
    let stores = db.stores();
    let (a, p, _, claimed) = claimed_merchant_notifications(&stores, 28).await;
    let q = &stores.notifications;
    let success = Finished {
        outcome: Outcome::Succeeded,
        ..failed(T0)
    };
    let first = complete_one(q, &claimed[0].id, &failed(T0)).await.unwrap();
    assert_eq!((first.recorded, first.disabled), (true, false));
    let repeat = complete_one(q, &claimed[0].id, &success).await.unwrap();
    assert!(
        !repeat.recorded,
        "a notification's outcome is recorded once"
    );
    let wh = WebhookId::from_suffix("h");
    let counter = |s: Subscription| (s.active, s.consecutive_failures);
    let state_now = async || {
        let now = stores.webhooks.get_webhook(&p.scope, &wh).await.unwrap();
        counter(now.unwrap())
    };
    assert_eq!(
        state_now().await,
        (true, 1),
        "the repeated success changed nothing"
    );
    complete_one(q, &claimed[1].id, &success).await.unwrap();
    assert_eq!(state_now().await, (true, 0), "a success resets the counter");
    for (n, c) in claimed[2..27].iter().enumerate() {
        let r = complete_one(q, &c.id, &failed(T0)).await.unwrap();
        assert_eq!(
            r.disabled,
            n == 24,
            "disabled exactly at the 25th failure ({n})"
        );
        assert_eq!(r.email_queued, n == 24);
    }
    assert_eq!(state_now().await, (false, 25));
    let emails = stores.emails.claim_emails(T0, T0, 10).await.unwrap();
    assert_eq!(emails.len(), 1);
    assert_eq!(
        emails[0].email.subject,
        "Acme - Webhook Subscription Automatically Disabled"
    );
    assert_eq!(emails[0].email.to, a.owner.email.as_str());
    assert!(emails[0].email.body.contains("wh_h") && emails[0].email.body.contains("Orders"));
    // Another failure while inactive (a notification already claimed) sends no second email.
    let late = complete_one(q, &claimed[27].id, &failed(T0)).await.unwrap();
    assert!(!late.disabled && !late.email_queued);
    // The dashboard toggle: setting inactive keeps the counter, setting active resets it.
    let off = stores
        .webhooks
        .toggle_webhook(&p.scope.platform, &wh, false, T0)
        .await
        .unwrap();
    assert_eq!(counter(off), (false, 26));
    let on = stores
        .webhooks
        .toggle_webhook(&p.scope.platform, &wh, true, T0)
        .await
        .unwrap();
    assert_eq!(counter(on), (true, 0));
}

/// Fair claims: a subscription never holds more than its cap of attempts in flight, nor a
/// platform more than its cap, and the least-loaded platform goes first, so another
/// platform's notification is taken at once however large one platform's backlog is.
pub async fn claims_cap_in_flight_and_interleave_platforms(db: Database) {
    let stores = db.stores();
    let a = principal(&new_platform(&stores, "A").await, Mode::Test);
    let b = principal(&new_platform(&stores, "B").await, Mode::Test);
    for suffix in ["a1", "a2", "a3"] {
        stored_subscription(&stores, &a, suffix).await;
    }
    stored_subscription(&stores, &b, "b").await;
    let created = async |p: &Principal, name: &str| {
        stores
            .merchants
            .insert_merchant_with_event(&merchant(p, name), &event_id(), None)
            .await
            .unwrap();
    };
    for i in 0..4 {
        created(&a, &format!("A {i}")).await;
    }
    created(&b, "B 0").await;

    let q = &stores.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::minutes(1);
    let caps = ClaimLimits {
        batch: 100,
        per_subscription: 2,
        per_platform: 5,
    };
    let by_subscription = |claimed: &[holdfast_domain::ports::Claimed]| {
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        for c in claimed {
            let id = c.subscription.as_ref().unwrap().id.to_string();
            *counts.entry(id).or_default() += 1;
        }
        counts
    };
    let first = q
        .claim_notifications(later, lease, caps, &[], &[])
        .await
        .unwrap();
    let counts = by_subscription(&first);
    assert_eq!(first.len(), 6, "five of A (its cap) and B's: {counts:?}");
    assert_eq!(counts.get("wh_b"), Some(&1), "{counts:?}");
    assert!(
        counts.values().all(|&n| n <= 2),
        "no subscription above its cap: {counts:?}"
    );
    assert!(
        q.claim_notifications(later, lease, caps, &[], &[])
            .await
            .unwrap()
            .is_empty(),
        "A is at its platform cap and B has nothing more: the same claim takes nothing"
    );
    // With room on the platform, only the subscription below its cap takes more.
    let per_subscription = ClaimLimits {
        per_platform: 100,
        ..caps
    };
    let topped = q
        .claim_notifications(later, lease, per_subscription, &[], &[])
        .await
        .unwrap();
    let before = by_subscription(&first);
    let topped_up = by_subscription(&topped);
    assert_eq!(topped.len(), 1, "{topped_up:?}");
    let (sub, _) = topped_up.iter().next().unwrap();
    assert_eq!(
        before.get(sub),
        Some(&1),
        "the one with a free place: {before:?}"
    );

    // A has 6 in flight and 6 waiting, all older than B's new row; B has 1 in flight. A
    // claim of one takes B's, the least loaded platform's, first.
    created(&b, "B 1").await;
    let one = ClaimLimits {
        batch: 1,
        ..UNCAPPED
    };
    let next = q
        .claim_notifications(later, lease, one, &[], &[])
        .await
        .unwrap();
    assert_eq!(
        by_subscription(&next).keys().collect::<Vec<_>>(),
        ["wh_b"],
        "B before A's older backlog"
    );

    // Leases over: everything is due again, and nothing is lost.
    let after = lease + time::Duration::seconds(1);
    let all = q
        .claim_notifications(after, after, UNCAPPED, &[], &[])
        .await
        .unwrap();
    assert_eq!(all.len(), 14, "4 × 3 of A and 2 of B");
}

/// The claiming process's attempts that have ended, their outcomes not yet recorded, stay
/// leased (never claimed again) but no longer count against the caps: the claim fills their
/// places at once instead of waiting for the recording.
pub async fn a_claim_does_not_count_ended_attempts_against_the_caps(db: Database) {
    let stores = db.stores();
    let a = principal(&new_platform(&stores, "A").await, Mode::Test);
    stored_subscription(&stores, &a, "h").await;
    for i in 0..4 {
        stored_merchant(&stores, &a, &format!("Shop {i}")).await;
    }
    let q = &stores.notifications;
    let later = T0 + time::Duration::seconds(1);
    let lease = later + time::Duration::minutes(1);
    let two = ClaimLimits {
        batch: 100,
        per_subscription: 2,
        per_platform: 100,
    };
    let first = q
        .claim_notifications(later, lease, two, &[], &[])
        .await
        .unwrap();
    assert_eq!(first.len(), 2, "the subscription's cap");
    assert!(
        q.claim_notifications(later, lease, two, &[], &[])
            .await
            .unwrap()
            .is_empty(),
        "both places are taken while the attempts are in flight"
    );
    let ended: Vec<NotificationId> = first.iter().map(|c| c.id.clone()).collect();
    let next = q
        .claim_notifications(later, lease, two, &ended[..1], &[])
        .await
        .unwrap();
    assert_eq!(next.len(), 1, "one ended attempt frees one place");
    let rest = q
        .claim_notifications(later, lease, two, &ended, &[])
        .await
        .unwrap();
    assert_eq!(rest.len(), 1, "the other ended attempt frees the other");
    let taken: Vec<&NotificationId> = first
        .iter()
        .chain(&next)
        .chain(&rest)
        .map(|c| &c.id)
        .collect();
    let mut unique = taken.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        4,
        "an ended attempt's row stays leased: never claimed twice"
    );
}

/// A rotation writes both secrets if nobody rotated first, with its answer; a stale one
/// writes nothing; another platform's or mode's subscription is unknown. The claim hands the
/// worker both secrets.
pub async fn a_secret_rotation_keeps_the_previous_one_and_happens_once(db: Database) {
    let stores = db.stores();
    let a = principal(&new_platform(&stores, "A").await, Mode::Test);
    let b = principal(&new_platform(&stores, "B").await, Mode::Test);
    let hook = stored_subscription(&stores, &a, "h").await;
    let day = holdfast_domain::webhook::SECRET_OVERLAP;
    let rotated = hook.rotated("whsec_bmV3".into(), T0, day);
    let store = &stores.webhooks;
    assert!(
        store
            .rotate_secret(&rotated, &hook.secret, None)
            .await
            .unwrap()
    );
    let read = store
        .get_webhook(&a.scope, &hook.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, rotated, "both secrets round-trip");
    let again = rotated.rotated("whsec_YWdhaW4=".into(), T0, day);
    assert!(
        !store
            .rotate_secret(&again, &hook.secret, None)
            .await
            .unwrap(),
        "made from a stale read: refused"
    );
    let elsewhere = Subscription {
        platform_id: b.scope.platform.clone(),
        ..again.clone()
    };
    assert!(matches!(
        store.rotate_secret(&elsewhere, &rotated.secret, None).await,
        Err(StoreError::NotFound)
    ));
    let live = Subscription {
        mode: Mode::Live,
        ..again
    };
    assert!(matches!(
        store.rotate_secret(&live, &rotated.secret, None).await,
        Err(StoreError::NotFound)
    ));

    stores
        .merchants
        .insert_merchant_with_event(&merchant(&a, "Shop"), &event_id(), None)
        .await
        .unwrap();
    let later = T0 + time::Duration::seconds(1);
    let claimed = claim_all_due(&stores, later).await;
    let signing = claimed[0]
        .subscription
        .as_ref()
        .unwrap()
        .signing_secrets(later);
    assert_eq!(signing, ["whsec_bmV3", "whsec_c2VjcmV0"]);
}

/// At most `max` subscriptions per platform and mode, even when created at once; another
/// mode or platform has its own room, and a deleted one frees a place.
pub async fn subscriptions_are_capped_per_platform_and_mode(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let test = principal(&a, Mode::Test);
    let attempts: Vec<_> = (0..10)
        .map(|i| {
            let hooks = stores.webhooks.clone();
            let s = subscription(&test, &format!("c{i}"), &["merchant.created"], true);
            tokio::spawn(async move { hooks.insert_webhook(&s, 4, None).await.unwrap() })
        })
        .collect();
    let mut inserted = 0;
    for attempt in attempts {
        inserted += usize::from(attempt.await.unwrap());
    }
    assert_eq!(inserted, 4, "concurrent creates never exceed the cap");
    let hooks = &stores.webhooks;
    let page = PageRequest::new(None, None).unwrap();
    let listed = hooks
        .list_webhooks(&Scope::new(a.platform.id.clone(), Mode::Test), &page)
        .await
        .unwrap();
    assert_eq!(listed.data.len(), 4);
    let live = principal(&a, Mode::Live);
    let other = principal(&new_platform(&stores, "B").await, Mode::Test);
    for (who, suffix) in [(&live, "live"), (&other, "other")] {
        let s = subscription(who, suffix, &["merchant.created"], true);
        assert!(hooks.insert_webhook(&s, 4, None).await.unwrap(), "{suffix}");
    }
    let first = listed.data[0].id.clone();
    hooks
        .delete_webhook(&Scope::new(a.platform.id.clone(), Mode::Test), &first)
        .await
        .unwrap();
    let again = subscription(&test, "again", &["merchant.created"], true);
    assert!(hooks.insert_webhook(&again, 4, None).await.unwrap());
    let over = subscription(&test, "over", &["merchant.created"], true);
    assert!(!hooks.insert_webhook(&over, 4, None).await.unwrap());
}

/// Deleting a subscription deletes its history, and only in the caller's platform and mode.
pub async fn webhook_delete_is_scoped_and_takes_the_history(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let live = principal(&a, Mode::Live);
    stores
        .webhooks
        .insert_webhook(
            &subscription(&live, "h", &["merchant.created"], true),
            u32::MAX,
            None,
        )
        .await
        .unwrap();
    stores
        .merchants
        .insert_merchant_with_event(&merchant(&live, "Shop"), &event_id(), None)
        .await
        .unwrap();
    let wh = WebhookId::from_suffix("h");
    let page = PageRequest::new(None, None).unwrap();
    let history = |mode| {
        stores
            .webhooks
            .list_deliveries(&live.scope.platform, Some(mode), &wh, &page)
    };
    assert_eq!(history(Mode::Live).await.unwrap().data.len(), 1);
    let other = new_platform(&stores, "B").await;
    for (platform, mode) in [
        (&live.scope.platform, Mode::Test),
        (&other.platform.id, Mode::Live),
    ] {
        let refused = stores
            .webhooks
            .delete_webhook(&Scope::new(platform.clone(), mode), &wh)
            .await;
        assert!(matches!(refused, Err(StoreError::NotFound)), "{refused:?}");
    }
    assert_eq!(
        history(Mode::Live).await.unwrap().data.len(),
        1,
        "nothing deleted from outside the scope"
    );
    stores
        .webhooks
        .delete_webhook(&live.scope, &wh)
        .await
        .unwrap();
    assert!(matches!(
        history(Mode::Live).await,
        Err(StoreError::NotFound)
    ));
    let left = claim_all_due(&stores, T0).await;
    assert!(left.is_empty(), "the history went with the subscription");
    let orphans = stores.notifications.delete_orphaned_deliveries().await;
    assert_eq!(orphans.unwrap(), 0, "the delete left no record behind");
}
