use super::*;

fn limits(concurrency: u32) -> LoadLimits {
    LoadLimits {
        concurrency,
        per_platform: 6,
        per_subscription: 4,
        lease: Duration::from_secs(30),
    }
}

fn platform(n: u8) -> PlatformId {
    PlatformId::from_trusted(format!("pfm_{n}"))
}

fn owner(p: u8, w: &str) -> AttemptOwner {
    AttemptOwner {
        platform: platform(p),
        webhook: WebhookId::from_trusted(w.to_owned()),
    }
}

fn rows(webhooks: &[&str]) -> Vec<Claimed> {
    webhooks
        .iter()
        .enumerate()
        .map(|(i, w)| Claimed {
            id: NotificationId::from_trusted(format!("ntf_{i}")),
            event_id: holdfast_domain::ids::EventId::from_trusted(format!("evt_{i}")),
            platform_id: platform(1),
            webhook_id: WebhookId::from_trusted((*w).to_owned()),
            event_type: "merchant.created".into(),
            event_data: "{}".into(),
            created_on: time::OffsetDateTime::UNIX_EPOCH,
            subscription: None,
        })
        .collect()
}

fn starts(load: &DeliveryLoad, p: u8, webhooks: &[&str]) -> usize {
    webhooks
        .iter()
        .filter(|w| load.try_start(&owner(p, w)))
        .count()
}

#[test]
fn an_attempt_starts_only_under_the_subscription_platform_and_process_caps() {
    let load = DeliveryLoad::claiming(limits(10));
    assert_eq!(starts(&load, 1, &["wh_a"; 5]), 4, "the subscription's cap");
    assert_eq!(starts(&load, 1, &["wh_b"; 3]), 2, "the platform's cap");
    assert_eq!(
        starts(&load, 2, &["wh_c", "wh_c", "wh_d", "wh_d", "wh_d"]),
        4,
        "another platform has room until the process is full"
    );
    assert_eq!(load.free(), 0);
    assert!(!load.try_start(&owner(3, "wh_e")), "the process is full");
    load.ended(&owner(2, "wh_c"), 1);
    assert!(
        load.try_start(&owner(3, "wh_e")),
        "an ended attempt's place"
    );
}

#[test]
fn claims_count_against_started_attempts() {
    let load = DeliveryLoad::claiming(limits(10));
    for w in ["wh_a", "wh_a", "wh_b", "wh_b", "wh_c", "wh_c"] {
        load.claimed(&owner(1, w));
    }
    assert!(!load.try_start(&owner(1, "wh_d")), "the platform's cap");
    assert_eq!(load.free(), 4);
}

#[test]
fn a_hand_off_waits_beyond_the_caps_and_holds_its_place_until_it_leaves_the_lines() {
    let (load, mut rx) = DeliveryLoad::handing_off(limits(10));
    let reservation = load
        .reserve(&["wh_a", "wh_b", "wh_c"])
        .expect("room in the lines");
    assert!(reservation.admits("wh_a") && reservation.admits("wh_c"));
    assert_eq!(load.waiting(), 3);
    assert!(
        load.waiting_counts().is_empty(),
        "not committed yet: the claim cannot see their leases"
    );
    assert_eq!(load.in_flight(), 0, "nothing started yet");
    reservation.hand(rows(&["wh_b", "wh_x"]));
    assert_eq!(
        load.waiting(),
        1,
        "one handed; one not admitted; two given back"
    );
    let handed = rx.try_recv().expect("handed off");
    let ids: Vec<_> = handed
        .rows
        .iter()
        .map(|row| row.webhook_id.as_str())
        .collect();
    assert_eq!(ids, ["wh_b"]);
    assert_eq!(
        load.waiting_counts(),
        [(handed.rows[0].webhook_id.clone(), 1)]
    );
    load.left_lines([&handed.rows[0].webhook_id]);
    assert_eq!(load.waiting(), 0);
    assert!(load.waiting_counts().is_empty());
}

#[tokio::test]
async fn an_attempt_that_ends_while_rows_wait_wakes_the_lines() {
    let (load, _rx) = DeliveryLoad::handing_off(limits(10));
    assert!(load.try_start(&owner(1, "wh_a")));
    load.ended(&owner(1, "wh_a"), 1);
    let idle = tokio::time::timeout(Duration::from_millis(20), load.wait_room()).await;
    assert!(idle.is_err(), "nothing waits: nobody is woken");
    let _held = load.reserve(&["wh_a"]).expect("room in the lines");
    assert!(load.try_start(&owner(1, "wh_b")));
    load.ended(&owner(1, "wh_b"), 1);
    tokio::time::timeout(Duration::from_secs(5), load.wait_room())
        .await
        .expect("woken for the row that waits");
}

#[test]
fn full_lines_leave_the_rows_for_the_claim() {
    let (load, _rx) = DeliveryLoad::handing_off(limits(1));
    let held = load.reserve(&["wh_a"; WAITING_PER_SLOT]).expect("room");
    assert!(load.reserve(&["wh_b"]).is_none(), "the lines are full");
    drop(held);
    assert!(
        load.reserve(&["wh_b"]).is_some(),
        "a dropped reservation's room"
    );
}

#[test]
fn an_ended_attempt_is_unrecorded_until_its_outcome_is_written() {
    let load = DeliveryLoad::claiming(limits(10));
    let ids: Vec<_> = rows(&["wh_a", "wh_a", "wh_b"])
        .into_iter()
        .map(|row| row.id)
        .collect();
    for id in &ids {
        load.awaits_recording(id.clone());
    }
    load.recorded(&ids[..2]);
    assert_eq!(load.unrecorded(), [ids[2].clone()]);
    load.recorded(&ids);
    assert!(load.unrecorded().is_empty());
}

#[test]
fn a_claiming_process_hands_nothing_off() {
    let load = DeliveryLoad::claiming(limits(10));
    assert!(load.reserve(&["wh_a"]).is_none());
}

#[test]
fn a_hand_off_to_a_loop_stopped_since_its_reservation_gives_its_place_back() {
    let (load, rx) = DeliveryLoad::handing_off(limits(10));
    let reservation = load.reserve(&["wh_a", "wh_b"]).expect("room");
    drop(rx);
    reservation.hand(rows(&["wh_a", "wh_b"]));
    assert_eq!(load.waiting(), 0);
}

#[test]
fn a_stopped_loop_is_reserved_nothing() {
    let (load, rx) = DeliveryLoad::handing_off(limits(10));
    drop(rx);
    assert!(load.reserve(&["wh_a"]).is_none(), "rows go to the claim");
    assert_eq!(load.waiting(), 0);
}
