//! The rules of `lifecycle`, row by row.

use super::*;
use FollowUp::{Capture, Refund, Void};
use TxnState::{Authorized, Captured, Declined, Failed, Processing, Settled, Voided};
use TxnType::{Auth, Sale};

fn amount(n: i64) -> Amount {
    Amount::new("amount", n).unwrap()
}

fn original(kind: TxnType, state: TxnState, refunded: i64) -> Original {
    Original {
        kind,
        state,
        approved_amount: 1000,
        refunded_amount: refunded,
    }
}

#[test]
fn every_allowed_transition() {
    let rows = [
        (original(Auth, Authorized, 0), Capture(None), 1000),
        (
            original(Auth, Authorized, 0),
            Capture(Some(amount(400))),
            400,
        ),
        (
            original(Auth, Authorized, 0),
            Capture(Some(amount(1000))),
            1000,
        ),
        (original(Auth, Authorized, 0), Void, 1000),
        (original(Sale, Settled, 0), Refund(None), 1000),
        (original(Sale, Settled, 0), Refund(Some(amount(1))), 1),
        (original(Sale, Settled, 600), Refund(None), 400),
        (original(Sale, Settled, 600), Refund(Some(amount(400))), 400),
        (
            original(TxnType::Capture, Settled, 0),
            Refund(Some(amount(250))),
            250,
        ),
    ];
    for (orig, follow_up, moved) in rows {
        assert_eq!(orig.allows(follow_up), Ok(moved), "{orig:?} {follow_up:?}");
    }
}

#[test]
fn every_refused_transition_of_an_auth() {
    let rows = [
        (
            original(Auth, Authorized, 0),
            Capture(Some(amount(1001))),
            Refused::AmountTooHigh { remaining: 1000 },
        ),
        (
            original(Auth, Captured, 0),
            Capture(None),
            Refused::AlreadyCaptured,
        ),
        (original(Auth, Captured, 0), Void, Refused::AlreadyCaptured),
        (
            original(Auth, Voided, 0),
            Capture(None),
            Refused::AlreadyVoided,
        ),
        (original(Auth, Voided, 0), Void, Refused::AlreadyVoided),
        (
            original(Auth, Declined, 0),
            Capture(None),
            Refused::NotApproved,
        ),
        (
            original(Auth, TxnState::Pending, 0),
            Capture(None),
            Refused::NotApproved,
        ),
        (
            original(Auth, TxnState::Closing, 0),
            Capture(None),
            Refused::InFlight,
        ),
        (
            original(Auth, TxnState::Closing, 0),
            Void,
            Refused::InFlight,
        ),
        (
            original(Sale, TxnState::Pending, 0),
            Refund(None),
            Refused::NotApproved,
        ),
        (original(Auth, Failed, 0), Void, Refused::NotApproved),
        (
            original(Auth, Authorized, 0),
            Refund(None),
            Refused::NotRefundable,
        ),
        (
            original(Auth, Captured, 0),
            Refund(None),
            Refused::NotRefundable,
        ),
    ];
    for (orig, follow_up, refused) in rows {
        assert_eq!(
            orig.allows(follow_up),
            Err(refused),
            "{orig:?} {follow_up:?}"
        );
    }
}

#[test]
fn every_refused_transition_of_other_types() {
    let rows = [
        (
            original(Sale, Settled, 0),
            Capture(None),
            Refused::NotAnAuth,
        ),
        (original(Sale, Settled, 0), Void, Refused::NotAnAuth),
        (
            original(Sale, Declined, 0),
            Refund(None),
            Refused::NotApproved,
        ),
        (
            original(Sale, Settled, 1000),
            Refund(None),
            Refused::FullyRefunded,
        ),
        (
            original(Sale, Settled, 600),
            Refund(Some(amount(401))),
            Refused::AmountTooHigh { remaining: 400 },
        ),
        (
            original(TxnType::Capture, Settled, 0),
            Capture(None),
            Refused::NotAnAuth,
        ),
        (
            original(TxnType::Capture, Processing, 0),
            Refund(None),
            Refused::AwaitingProcessor,
        ),
        (
            original(Auth, Processing, 0),
            Capture(None),
            Refused::NotApproved,
        ),
        (
            original(TxnType::Capture, Settled, 0),
            Void,
            Refused::NotAnAuth,
        ),
        (
            original(TxnType::Void, Settled, 0),
            Refund(None),
            Refused::NotRefundable,
        ),
        (
            original(TxnType::Refund, Settled, 0),
            Refund(None),
            Refused::NotRefundable,
        ),
        (
            original(TxnType::Refund, Settled, 0),
            Void,
            Refused::NotAnAuth,
        ),
    ];
    for (orig, follow_up, refused) in rows {
        assert_eq!(
            orig.allows(follow_up),
            Err(refused),
            "{orig:?} {follow_up:?}"
        );
    }
}

#[test]
fn the_words_stored_and_shown() {
    assert_eq!(
        TxnType::ALL
            .iter()
            .copied()
            .map(TxnType::as_str)
            .collect::<Vec<_>>(),
        ["auth", "sale", "capture", "void", "refund"]
    );
    assert_eq!(
        TxnState::ALL
            .iter()
            .copied()
            .map(TxnState::as_str)
            .collect::<Vec<_>>(),
        [
            "pending",
            "authorized",
            "closing",
            "captured",
            "voided",
            "processing",
            "settled",
            "declined",
            "failed"
        ]
    );
    for &t in TxnType::ALL {
        assert_eq!(t.as_str().parse::<TxnType>(), Ok(t));
    }
    for &s in TxnState::ALL {
        assert_eq!(s.as_str().parse::<TxnState>(), Ok(s));
    }
}
