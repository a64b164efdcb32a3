use super::*;
use crate::load::DeliveryLoad;
use intake::{HandOffSlot, Intake};

/// A run that ends however it ends, a panic included, gives its hand-offs back, so the run
/// started after it still hears them.
#[test]
fn a_run_gives_its_hand_offs_back_even_when_it_panics() {
    let (load, hand_offs) = DeliveryLoad::handing_off(settings(100, 10).load_limits(1));
    let slot = HandOffSlot::new(Some(hand_offs));
    let run = |panics: bool| {
        let intake = Intake {
            hand_offs: slot.take(),
            slot: slot.clone(),
            changes: load.changes(),
        };
        assert!(intake.hand_offs.is_some(), "the run holds the hand-offs");
        assert!(slot.take().is_none(), "while it runs, nobody else does");
        assert!(!panics, "a delivery loop's bug");
    };
    run(false);
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(true)));
    assert!(panicked.is_err());
    assert!(slot.take().is_some(), "given back after the panic");
}

fn settings(timeout_ms: u64, backoff_ms: u64) -> DeliverySettings {
    let timeout = Duration::from_millis(timeout_ms);
    let backoff_base = Duration::from_millis(backoff_ms);
    DeliverySettings {
        timeout,
        backoff_base,
        concurrency: 128,
        per_subscription: 16,
        per_platform: 64,
        poll: Duration::from_millis(50),
        idle_poll: Duration::from_secs(1),
        service_name: "Holdfast".into(),
    }
}

#[test]
fn a_row_started_at_the_end_of_its_wait_keeps_the_claims_margin() {
    for (timeout, backoff) in [(5_000, 1_000), (300, 20), (1, 0)] {
        let s = settings(timeout, backoff);
        let handed_lease = s.load_limits(1).lease;
        let left_at_start = handed_lease.checked_sub(s.line_wait()).unwrap();
        // Four timeouts and three backoffs of at most 1, 2 and 4 times the base.
        let longest_attempt = s.timeout * 4 + s.backoff_base * 7;
        assert!(
            left_at_start >= longest_attempt + s.timeout,
            "{timeout} ms, {backoff} ms: {left_at_start:?} left"
        );
        assert_eq!(
            left_at_start,
            s.lease(),
            "a claim's lease, from the moment it starts"
        );
    }
}
