//! The payment use cases over mocked ports.

use super::*;
use crate::ids::{ConnectionId, KeyId, PlanId, PlatformId, UserId};
use crate::mode::{KeyType, Mode};
use crate::services::fixtures::{clock_at_noon, fixed_ids, shop, visa_bins};

use super::{Created, Renders, RequestKey, TransactionRequest, TransactionRequests};
use crate::idempotency::{Answer, IdempotencyKey, KeyClaim, Recorder, Seen};
use crate::payment::fee::FeeRule;
use crate::payment::lifecycle::{FollowUp, TxnState};
use crate::payment::response_code::ResponseCode;
use crate::payment::routing::ProcessorAccount;
use crate::payment::routing::{Plan, ProcessorConnection};
use crate::payment::transaction::{AuthStatus, AvsCode, CvvCode};
use crate::ports::{Begun, MockIdempotencyStore};
use crate::ports::{
    MockCardVault, MockProcessor, MockRoutingStore, MockTokenStore, MockTransactionStore,
    PaymentSetup, ProcessorError, ProcessorOp, ProcessorReply, Reservation,
};
use crate::scope::Scope;
use crate::services::IdempotencyService;
use crate::services::TokenService;
use std::sync::{Arc, Mutex};
use time::macros::datetime;

fn who() -> Principal {
    Principal {
        scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Test),
        key_type: KeyType::Private,
        key_id: Some(KeyId::from_suffix("1")),
        user_id: UserId::from_suffix("1"),
    }
}

fn connection(name: &str) -> ProcessorConnection {
    ProcessorConnection {
        id: ConnectionId::from_suffix(name),
        platform_id: PlatformId::from_suffix("1"),
        mode: Mode::Test,
        name: name.into(),
        account: ProcessorAccount::Sandbox,
        created_on: datetime!(2026-01-01 0:00 UTC),
    }
}

/// The merchant's plan: 2.9 % + 30, routing to `primary`, falling back to `backup`.
fn plan() -> Plan {
    Plan {
        id: PlanId::from_suffix("1"),
        platform_id: PlatformId::from_suffix("1"),
        mode: Mode::Test,
        name: "Default".into(),
        fee: FeeRule::new(290, 30).unwrap(),
        default_connection: ConnectionId::from_suffix("primary"),
        brand_routes: Vec::new(),
        fallbacks: vec![ConnectionId::from_suffix("backup")],
        is_default: true,
        created_on: datetime!(2026-01-01 0:00 UTC),
        settlement_delay: crate::ledger::SettlementDelay::DEFAULT,
    }
}

/// What each completion wrote: the transaction, its stored reply, the client session it closed.
type Completed = Arc<Mutex<Vec<(Transaction, Option<KeyedAnswer>, Option<SessionClose>)>>>;

/// A store with one merchant on a plan routing to `primary`, falling back to `backup`, read
/// in the scope of `who()`.
fn store() -> (MockTransactionStore, Completed) {
    store_in(who().scope)
}

/// `store()`, answering only reads in `scope` (a read in any other fails the test).
fn store_in(scope: Scope) -> (MockTransactionStore, Completed) {
    let (store, completed, _) = store_claiming(scope, true);
    (store, completed)
}

/// The claims pending rows were written with, in order.
type Claims = Arc<Mutex<Vec<Option<KeyClaim>>>>;

/// `store_in(scope)`, whose pending rows make the claims they carry when `claims` is true (and
/// find their keys taken otherwise), and that keeps what each pending write was asked to claim.
fn store_claiming(scope: Scope, claims: bool) -> (MockTransactionStore, Completed, Claims) {
    let mut store = MockTransactionStore::new();
    // Raw card payments note it on their merchant, in the caller's scope only.
    let noted_in = scope.clone();
    store
        .expect_note_raw_cards()
        .withf(move |asked, _, _| *asked == noted_in)
        .returning(|_, _, _| Ok(()));
    store
        .expect_payment_setup()
        .withf(move |asked, _| *asked == scope)
        .returning(|_, id| {
            Ok(Some(PaymentSetup {
                merchant: shop(id.clone(), PlatformId::from_suffix("1")),
                plan: Some(plan()),
                // In the store's order, not the route's, with one the plan does not name.
                connections: vec![
                    connection("backup"),
                    connection("other"),
                    connection("primary"),
                ],
            }))
        });
    let asked: Claims = Arc::default();
    let asked_sink = asked.clone();
    store
        .expect_insert_pending_transaction()
        .returning(move |_, claim| {
            let free = claim.is_none() || claims;
            asked_sink.lock().unwrap().push(claim);
            Ok(free)
        });
    let completed = Arc::new(Mutex::new(Vec::new()));
    let sink = completed.clone();
    store.expect_complete_transaction_with_event().returning(
        move |txn, _, event, reply, session, journal| {
            assert_eq!(
                event.data.event_type(),
                crate::webhook::EventType::TransactionCreated
            );
            // The completion posts what the ledger's table says of its outcome.
            assert_eq!(
                journal.map(|j| (j.heading.kind, j.heading.source)),
                crate::ledger::journal_for(txn, None, txn.created_on)
                    .map(|j| (j.heading.kind, j.heading.source)),
                "{txn:?}"
            );
            let closes = session.is_some();
            sink.lock().unwrap().push((txn.clone(), reply, session));
            Ok(closes)
        },
    );
    (store, completed, asked)
}

fn service(store: MockTransactionStore, processor: MockProcessor) -> PaymentService {
    service_over(store, routing(), processor)
}

/// Routing reads, in the caller's scope, answering with the connection asked for and `plan()`.
fn routing() -> MockRoutingStore {
    let mut routing = MockRoutingStore::new();
    routing
        .expect_get_connection()
        .withf(|scope, _| *scope == who().scope)
        .returning(|_, id| Ok(Some(connection(id.as_str().trim_start_matches("midCon_")))));
    routing
        .expect_get_plan()
        .withf(|scope, id| *scope == who().scope && *id == plan().id)
        .returning(|_, _| Ok(Some(plan())));
    routing
}

fn service_over(
    store: MockTransactionStore,
    routing: MockRoutingStore,
    processor: MockProcessor,
) -> PaymentService {
    let bins = visa_bins();
    let clock = clock_at_noon();
    let ids = fixed_ids("01");
    let tokens = TokenService::new(
        Arc::new(MockTokenStore::new()),
        Arc::new(crate::ports::MockClientSessionStore::new()),
        Arc::new(crate::ports::MockWalletOpener::new()),
        Arc::new(MockCardVault::new()),
        Arc::new(visa_bins()),
        Arc::new(clock_at_noon()),
        Arc::new(fixed_ids("02")),
    );
    PaymentService::new(
        Arc::new(store),
        Arc::new(routing),
        Arc::new(processor),
        Arc::new(bins),
        Arc::new(clock),
        Arc::new(ids),
        tokens,
    )
}

fn card() -> CardInput {
    CardInput {
        name: None,
        number: Some("4111111111111111".into()),
        cvv: Some("123".into()),
        expiration: Some("1230".into()),
    }
}

fn auth() -> NewPayment {
    NewPayment {
        merchant_id: MerchantId::from_suffix("1"),
        kind: TxnType::Auth,
        amount: Amount::new("amount", 1000).unwrap(),
        source: PaymentSource::Card(card()),
        labels: crate::payment::labels::Labels::default(),
    }
}

fn approved() -> ProcessorReply {
    ProcessorReply {
        approved: true,
        approved_amount: 1000,
        avs: AvsCode::FullMatch,
        cvv: CvvCode::Match,
        code: "00".into(),
        decline: None,
        message: "Approved".into(),
        processor_transaction_id: "p1".into(),
        submitted: false,
    }
}

#[tokio::test]
async fn an_unavailable_processor_falls_back_to_the_next_connection() {
    let (store, completed) = store();
    let mut processor = MockProcessor::new();
    processor
        .expect_call()
        .withf(|c, _| c.name == "primary")
        .times(1)
        .returning(|_, _| Err(ProcessorError::Unavailable("down".into())));
    processor
        .expect_call()
        .withf(|c, _| c.name == "backup")
        .times(1)
        .returning(|_, _| Ok(approved()));
    let txn = service(store, processor)
        .pay(&who(), auth(), None)
        .await
        .unwrap();
    assert_eq!(txn.processor.name, "backup");
    assert_eq!((txn.state, txn.fee), (TxnState::Authorized, 30));
    assert_eq!(completed.lock().unwrap().len(), 1);
}

/// Fail closed: a live payment whose plan reaches only the sandbox is refused before any
/// processor call and before its token is taken (the mocks panic on any call).
#[tokio::test]
async fn a_live_payment_never_reaches_the_sandbox() {
    let mut live = who();
    live.scope.mode = Mode::Live;
    for source in [
        auth().source,
        PaymentSource::Token(crate::ids::TokenId::from_suffix("1")),
    ] {
        let (store, completed) = store_in(live.scope.clone());
        let payment = NewPayment { source, ..auth() };
        let refused = service(store, MockProcessor::new())
            .pay(&live, payment, None)
            .await;
        assert!(
            matches!(&refused, Err(PaymentError::Invalid(i))
                if i.field == "merchantId" && i.message.contains("in this mode")),
            "{refused:?}"
        );
        assert!(completed.lock().unwrap().is_empty());
    }
}

/// The plan's fixed fee is 30: on a sale of 20 the fee is cut to the 20 charged.
#[tokio::test]
async fn a_fee_never_exceeds_the_amount_charged() {
    for (amount, fee) in [(20, 20), (30, 30), (1000, 59)] {
        let (store, _) = store();
        let mut processor = MockProcessor::new();
        processor.expect_call().returning(move |_, _| {
            Ok(ProcessorReply {
                approved_amount: amount,
                ..approved()
            })
        });
        let sale = NewPayment {
            kind: TxnType::Sale,
            amount: Amount::new("amount", amount).unwrap(),
            ..auth()
        };
        let txn = service(store, processor)
            .pay(&who(), sale, None)
            .await
            .unwrap();
        assert_eq!(txn.fee, fee, "sale of {amount}");
    }
}

/// The response the renderer gives is written with the transaction, whatever its status: a
/// processor failure is a recorded, final transaction too, and a retry must replay it.
#[tokio::test]
async fn the_rendered_response_is_stored_with_the_transaction_whatever_its_status() {
    let key = IdempotencyKey::parse("pay-1").unwrap();
    for (reply, stored) in [
        (Ok(approved()), Some(201)),
        (
            Ok(ProcessorReply {
                approved: false,
                code: "51".into(),
                decline: Some(ResponseCode::decline("51")),
                ..approved()
            }),
            Some(402),
        ),
        (Err(ProcessorError::Unavailable("down".into())), Some(502)),
    ] {
        let (store, completed) = store();
        let mut processor = MockProcessor::new();
        processor.expect_call().returning(move |_, _| reply.clone());
        let render = |txn: &Transaction| Answer {
            status: match txn.authorization.status {
                AuthStatus::Approved => 201,
                AuthStatus::Declined => 402,
                _ => 502,
            },
            body: txn.id.to_string(),
        };
        let recorder = Recorder {
            key: &key,
            render: &render,
            claim_at_first_write: None,
        };
        let txn = service(store, processor)
            .pay(&who(), auth(), Some(&recorder))
            .await
            .unwrap();
        let completed = completed.lock().unwrap();
        let written = completed[0].1.as_ref();
        assert_eq!(
            written.map(|r| (r.answer.status, r.key.as_str())),
            stored.map(|status| (status, "pay-1")),
            "{:?}",
            txn.authorization.status
        );
        assert!(written.is_some_and(|r| r.answer.body == txn.id.to_string()));
    }
}

#[tokio::test]
async fn a_decline_is_an_answer_and_never_falls_back() {
    let (store, _) = store();
    let mut processor = MockProcessor::new();
    processor.expect_call().times(1).returning(|_, _| {
        Ok(ProcessorReply {
            approved: false,
            approved_amount: 0,
            code: "51".into(),
            decline: Some(ResponseCode::decline("51")),
            ..approved()
        })
    });
    let txn = service(store, processor)
        .pay(&who(), auth(), None)
        .await
        .unwrap();
    assert_eq!(
        (txn.state, txn.authorization.status, txn.fee),
        (TxnState::Declined, AuthStatus::Declined, 0)
    );
    assert_eq!(txn.processor.name, "primary");
}

#[tokio::test]
async fn a_timeout_is_reversed_and_recorded_as_failed() {
    let (store, completed) = store();
    let mut processor = MockProcessor::new();
    processor
        .expect_call()
        .withf(|_, r| matches!(r.op, ProcessorOp::Authorize(_)))
        .times(1)
        .returning(|_, _| Err(ProcessorError::Timeout));
    processor
        .expect_call()
        .withf(|c, r| {
            matches!(r.op, ProcessorOp::Reverse)
                && c.name == "primary"
                && r.reference.as_str() == "txn_01"
        })
        .times(1)
        .returning(|_, _| Ok(approved()));
    let txn = service(store, processor)
        .pay(&who(), auth(), None)
        .await
        .unwrap();
    assert_eq!(
        (txn.state, txn.authorization.status),
        (TxnState::Failed, AuthStatus::TimedOut)
    );
    assert!(txn.authorization.processor_message.contains("reversed"));
    assert_eq!(
        completed.lock().unwrap()[0].0.authorization.status,
        AuthStatus::TimedOut
    );
}

/// Card fields are checked first: a payment with a bad card reads and writes nothing (the store
/// mock has no expectations, so any call fails the test).
#[tokio::test]
async fn a_bad_card_is_refused_before_anything_is_read() {
    for (card, field) in [
        (
            CardInput {
                cvv: None,
                ..card()
            },
            "payment.cvv",
        ),
        (
            CardInput {
                expiration: Some("1025".into()),
                ..card()
            },
            "payment.expiration",
        ),
    ] {
        let payment = NewPayment {
            source: PaymentSource::Card(card),
            ..auth()
        };
        let refused = service(MockTransactionStore::new(), MockProcessor::new())
            .pay(&who(), payment, None)
            .await;
        assert!(
            matches!(&refused, Err(PaymentError::Invalid(i)) if i.field == field),
            "{refused:?}"
        );
    }
}

/// An original whose processor connection is gone is refused before anything is reserved or
/// any processor called: money never moves for an answer that could not be recorded.
#[tokio::test]
async fn a_follow_up_without_its_connection_reserves_nothing() {
    let auth_txn = {
        let (s0, done) = store();
        let mut ok = MockProcessor::new();
        ok.expect_call().returning(|_, _| Ok(approved()));
        service(s0, ok).pay(&who(), auth(), None).await.unwrap();
        done.lock().unwrap()[0].0.clone()
    };
    let original = auth_txn.clone();
    let mut store = MockTransactionStore::new();
    store
        .expect_get_transaction()
        .returning(move |_, _| Ok(Some(original.clone())));
    let mut routing = MockRoutingStore::new();
    routing.expect_get_plan().returning(|_, _| Ok(Some(plan())));
    routing.expect_get_connection().returning(|_, _| Ok(None));
    // No reservation, completion or processor expectation: any of them fails the test.
    let refused = service_over(store, routing, MockProcessor::new())
        .follow_up(&who(), &auth_txn.id, FollowUp::Capture(None), None)
        .await;
    assert!(
        matches!(refused, Err(PaymentError::Store(_))),
        "{refused:?}"
    );
}

/// An approved capture of an authorized auth: the processor captures the auth by its own id,
/// the capture settles with the plan's percentage fee (no fixed part), and the auth leaves its
/// reservation as captured.
/// A capture approved at once settles and closes its auth; one the processor took to decide later
/// (Adyen's `received`) is `processing`, status `S`, and its auth stays reserved.
#[tokio::test]
async fn an_approved_capture_settles_and_closes_its_auth() {
    let cases = [
        (
            false,
            TxnState::Settled,
            AuthStatus::Approved,
            OriginalOutcome::Closed(TxnState::Captured),
        ),
        (
            true,
            TxnState::Processing,
            AuthStatus::Submitted,
            OriginalOutcome::Held,
        ),
    ];
    for (submitted, state, status, outcome) in cases {
        capture_answered(submitted, state, status, outcome).await;
    }
}

async fn capture_answered(
    submitted: bool,
    state: TxnState,
    status: AuthStatus,
    outcome: OriginalOutcome,
) {
    let auth_txn = {
        let (s0, done) = store();
        let mut ok = MockProcessor::new();
        ok.expect_call().returning(|_, _| Ok(approved()));
        service(s0, ok).pay(&who(), auth(), None).await.unwrap();
        done.lock().unwrap()[0].0.clone()
    };
    let original = auth_txn.clone();
    let mut store = MockTransactionStore::new();
    store
        .expect_get_transaction()
        .withf(|scope, _| *scope == who().scope)
        .returning(move |_, _| Ok(Some(original.clone())));
    store
        .expect_reserve_with_pending()
        .withf(|_, _, reservation, pending| {
            *reservation == Reservation::CloseAuth && pending.state == TxnState::Pending
        })
        .times(1)
        .returning(|_, _, _, _| Ok(true));
    let completed = Arc::new(Mutex::new(Vec::new()));
    let sink = completed.clone();
    store
        .expect_complete_transaction_with_event()
        .times(1)
        .returning(move |txn, original, _, _, _, _| {
            sink.lock().unwrap().push((txn.clone(), original));
            Ok(false)
        });
    let mut processor = MockProcessor::new();
    processor
        .expect_call()
        .withf(|c, r| {
            c.id == ConnectionId::from_suffix("primary")
                && r.amount == 1000
                && matches!(&r.op, ProcessorOp::Capture { processor_transaction_id } if processor_transaction_id == "p1")
        })
        .times(1)
        .returning(move |_, _| {
            Ok(ProcessorReply {
                submitted,
                ..approved()
            })
        });
    let capture = service(store, processor)
        .follow_up(&who(), &auth_txn.id, FollowUp::Capture(None), None)
        .await
        .unwrap();
    assert_eq!(
        (
            capture.kind,
            capture.state,
            capture.fee,
            capture.parent_id.as_ref()
        ),
        (TxnType::Capture, state, 29, Some(&auth_txn.id)),
        "2.9 % of 1000, without the fixed 30 the auth carried"
    );
    assert_eq!(capture.authorization.status, status);
    let completed = completed.lock().unwrap();
    assert_eq!(completed[0].1, Some((auth_txn.id.clone(), outcome)));
}

#[tokio::test]
async fn a_lost_reservation_is_refused_without_calling_the_processor() {
    let (mut store, _) = store();
    let mut original = None;
    {
        // An authorized auth, as the store returns it.
        let (s2, done) = self::store();
        let mut processor = MockProcessor::new();
        processor.expect_call().returning(|_, _| Ok(approved()));
        service(s2, processor)
            .pay(&who(), auth(), None)
            .await
            .unwrap();
        original.replace(done.lock().unwrap()[0].0.clone());
    }
    let original = original.unwrap();
    store
        .expect_get_transaction()
        .withf(|scope, _| *scope == who().scope)
        .returning(move |_, _| Ok(Some(original.clone())));
    store
        .expect_reserve_with_pending()
        .withf(|scope, _, _, _| *scope == who().scope)
        .times(1)
        .returning(|_, _, _, _| Ok(false));
    let mut processor = MockProcessor::new();
    processor.expect_call().never();
    let err = service(store, processor)
        .follow_up(
            &who(),
            &TxnId::from_suffix("01"),
            FollowUp::Capture(None),
            None,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, PaymentError::Refused(Refused::InFlight)),
        "{err:?}"
    );
}

#[tokio::test]
async fn reconciliation_reverses_stale_pending_rows_and_releases_reservations() {
    // A real auth to build from, as the store returns it.
    let (s0, done) = store();
    let mut ok = MockProcessor::new();
    ok.expect_call().returning(|_, _| Ok(approved()));
    service(s0, ok).pay(&who(), auth(), None).await.unwrap();
    let auth_txn = done.lock().unwrap()[0].0.clone();
    let capture = Transaction {
        id: TxnId::from_suffix("cap"),
        kind: TxnType::Capture,
        state: TxnState::Pending,
        parent_id: Some(auth_txn.id.clone()),
        ..auth_txn.clone()
    };
    let stuck = Transaction {
        id: TxnId::from_suffix("stuck"),
        state: TxnState::Pending,
        ..auth_txn.clone()
    };

    let (mut store, _) = store();
    // Only what reconciliation does may happen: no new payments' expectations.
    store.checkpoint();
    let stale = vec![capture.clone(), stuck.clone()];
    store
        .expect_stale_pending()
        .withf(|before, limit| *before == datetime!(2026-11-22 11:00 UTC) && *limit == 50)
        .return_once(move |_, _| Ok(stale));
    let released = Arc::new(Mutex::new(Vec::new()));
    let sink = released.clone();
    store.expect_complete_transaction_with_event().returning(
        move |txn, original, _, _, session, _| {
            assert_eq!(session, None, "reconciliation closes no client session");
            sink.lock().unwrap().push((txn.clone(), original));
            Ok(false)
        },
    );
    let mut processor = MockProcessor::new();
    // The capture's reversal goes through; the other's fails, so it stays pending.
    processor
        .expect_call()
        .withf(|_, request| matches!(request.op, ProcessorOp::Reverse))
        .returning(|_, request| {
            if request.reference.as_str() == "txn_cap" {
                Ok(approved())
            } else {
                Err(ProcessorError::Unavailable("down".into()))
            }
        });
    let report = service(store, processor)
        .reconcile(datetime!(2026-11-22 11:00 UTC), 50)
        .await
        .unwrap();
    assert_eq!(report.reversed, std::slice::from_ref(&capture.id));
    assert_eq!(report.still_pending, std::slice::from_ref(&stuck.id));
    let released = released.lock().unwrap();
    let (txn, original) = &released[0];
    assert_eq!(
        (txn.state, txn.authorization.status),
        (TxnState::Failed, AuthStatus::TimedOut)
    );
    assert_eq!(
        original,
        &Some((auth_txn.id.clone(), OriginalOutcome::Reopened))
    );
    assert_eq!(
        released.len(),
        1,
        "nothing recorded for the one still pending"
    );
}

/// A payment with a token made under a client session: the session, held from the take, is
/// completed by an approval in the same write as the payment, and released by a decline or
/// processors down, so that the checkout can pay again with a new token; after a timeout (the
/// charge may stand) the hold lapses.
#[tokio::test]
async fn a_session_token_payment_completes_or_releases_its_session() {
    use crate::ids::TokenId;
    use crate::payment::token::{HeldSession, SessionClose, Taken};
    use crate::ports::MockClientSessionStore;
    type Reply = fn() -> Result<ProcessorReply, ProcessorError>;
    // (name, the processor's answer, completes, releases)
    let cases: [(&str, Reply, bool, bool); 4] = [
        ("approved", || Ok(approved()), true, false),
        (
            "declined",
            || {
                Ok(ProcessorReply {
                    approved: false,
                    code: "05".into(),
                    decline: Some(ResponseCode::decline("05")),
                    message: "Do not honor".into(),
                    ..approved()
                })
            },
            false,
            true,
        ),
        (
            "processors down",
            || Err(ProcessorError::Unavailable("down".into())),
            false,
            true,
        ),
        // The charge may stand at the processor: the hold lapses by itself.
        ("timeout", || Err(ProcessorError::Timeout), false, false),
    ];
    for (name, reply, completes, releases) in cases {
        let (store, completed) = store();
        let mut processor = MockProcessor::new();
        processor.expect_call().returning(move |_, request| {
            if matches!(request.op, ProcessorOp::Reverse) {
                Ok(approved())
            } else {
                reply()
            }
        });
        let mut tokens = MockTokenStore::new();
        tokens.expect_take().times(1).returning(|_, _, _| {
            Ok(Taken::Token(Box::new(crate::services::fixtures::token(
                Some("01S"),
            ))))
        });
        let mut vault = MockCardVault::new();
        vault
            .expect_open()
            .returning(|_, _| Ok("4111111111111111|1230".to_owned()));
        let mut sessions = MockClientSessionStore::new();
        sessions
            .expect_release()
            .withf(|scope, held| *scope == who().scope && held.id.as_str() == "cs_01S")
            .times(usize::from(releases))
            .returning(|_, _| Ok(()));
        let tokens = TokenService::new(
            Arc::new(tokens),
            Arc::new(sessions),
            Arc::new(crate::ports::MockWalletOpener::new()),
            Arc::new(vault),
            Arc::new(visa_bins()),
            Arc::new(clock_at_noon()),
            Arc::new(fixed_ids("02")),
        );
        let service = PaymentService::new(
            Arc::new(store),
            Arc::new(routing()),
            Arc::new(processor),
            Arc::new(visa_bins()),
            Arc::new(clock_at_noon()),
            Arc::new(fixed_ids("01")),
            tokens,
        );
        let payment = NewPayment {
            source: PaymentSource::Token(TokenId::from_suffix("1")),
            ..auth()
        };
        let txn = service.pay(&who(), payment, None).await.unwrap();
        assert_eq!(
            txn.state == TxnState::Authorized,
            completes,
            "{name}: {txn:?}"
        );
        let closed = completed.lock().unwrap()[0].2.clone();
        let expected = completes.then(|| SessionClose {
            held: HeldSession {
                id: crate::ids::ClientSessionId::from_suffix("01S"),
                until: crate::services::fixtures::NOON + crate::payment::token::SESSION_HOLD,
            },
            on: crate::services::fixtures::NOON,
        });
        assert_eq!(
            closed, expected,
            "{name}: the session closed with the payment"
        );
    }
}

/// Key `pay-1`, and the claim on it not yet made.
fn unclaimed_key() -> (IdempotencyKey, KeyClaim) {
    let key = IdempotencyKey::parse("pay-1").unwrap();
    let claim = KeyClaim {
        key: key.clone(),
        fingerprint: [9; 32],
        at: datetime!(2026-11-27 12:00 UTC),
    };
    (key, claim)
}

/// A 201 whose body is the transaction's id.
fn id_as_answer(txn: &Transaction) -> Answer {
    Answer {
        status: 201,
        body: txn.id.to_string(),
    }
}

/// A card payment under a key not yet claimed claims it with its pending row, and says so,
/// and the answer is stored with the completion. When the key turns out taken, nothing more
/// happens: no processor call, no completion.
#[tokio::test]
async fn a_card_payment_claims_its_key_with_its_pending_row() {
    for key_free in [true, false] {
        let (store, completed, asked) = store_claiming(who().scope, key_free);
        let mut processor = MockProcessor::new();
        processor
            .expect_call()
            .times(usize::from(key_free))
            .returning(|_, _| Ok(approved()));
        let (key, claim) = unclaimed_key();
        let recorder = Recorder {
            key: &key,
            render: &id_as_answer,
            claim_at_first_write: Some(&claim),
        };
        let charged = service(store, processor)
            .charge_for(&who(), auth(), Some(&recorder))
            .await;
        let paid = charged.result;
        assert_eq!(*asked.lock().unwrap(), vec![Some(claim)]);
        assert_eq!(charged.key_claimed, key_free);
        let completed = completed.lock().unwrap();
        if key_free {
            let txn = paid.unwrap();
            let reply = completed[0].1.as_ref().unwrap();
            assert_eq!(
                (reply.key.as_str(), &reply.answer.body),
                ("pay-1", &txn.id.to_string())
            );
        } else {
            assert!(matches!(paid, Err(PaymentError::KeyNotClaimed)), "{paid:?}");
            assert!(completed.is_empty());
        }
    }
}

/// A token payment and a follow-up cannot claim a key with their first write (a token's
/// redemption, a reservation): under a key not yet claimed they stop before anything is read
/// or written (the mocks panic on any call).
#[tokio::test]
async fn only_a_card_payment_claims_its_key_as_it_writes() {
    let (key, claim) = unclaimed_key();
    let recorder = Recorder {
        key: &key,
        render: &id_as_answer,
        claim_at_first_write: Some(&claim),
    };
    let token = NewPayment {
        source: PaymentSource::Token(crate::ids::TokenId::from_suffix("1")),
        ..auth()
    };
    let paid = nothing().charge_for(&who(), token, Some(&recorder)).await;
    assert!(
        matches!(paid.result, Err(PaymentError::KeyNotClaimed)) && !paid.key_claimed,
        "{paid:?}"
    );
    let captured = nothing()
        .follow_up(
            &who(),
            &TxnId::from_suffix("1"),
            FollowUp::Capture(None),
            Some(&recorder),
        )
        .await;
    assert!(
        matches!(captured, Err(PaymentError::KeyNotClaimed)),
        "{captured:?}"
    );
}

/// A service whose ports fail the test on any call: what must stop before anything is read.
fn nothing() -> PaymentService {
    service_over(
        MockTransactionStore::new(),
        MockRoutingStore::new(),
        MockProcessor::new(),
    )
}

/// The renders of the tests' door: a transaction's id, a refusal's status with its message.
fn renders() -> Renders<'static> {
    fn refused(err: &PaymentError) -> Answer {
        let status = match err {
            PaymentError::Store(_) | PaymentError::KeyNotClaimed => 500,
            _ => 400,
        };
        Answer {
            status,
            body: err.to_string(),
        }
    }
    Renders {
        made: &id_as_answer,
        refused: &refused,
    }
}

/// An idempotency store that answers `begin` with `begun`, once, and keeps what is completed
/// and released; any other call fails the test.
fn keys(begun: Option<Begun>) -> (IdempotencyService, Arc<Mutex<Vec<String>>>) {
    let settled: Arc<Mutex<Vec<String>>> = Arc::default();
    let mut store = MockIdempotencyStore::new();
    if let Some(begun) = begun {
        store
            .expect_begin()
            .times(1)
            .return_once(move |_, _, _, _| Ok(begun));
    }
    let completed = settled.clone();
    store.expect_complete().returning(move |_, key, answer| {
        completed
            .lock()
            .unwrap()
            .push(format!("{} kept {}", key.as_str(), answer.status));
        Ok(())
    });
    let released = settled.clone();
    store.expect_release().returning(move |_, key| {
        released
            .lock()
            .unwrap()
            .push(format!("{} released", key.as_str()));
        Ok(())
    });
    let service = IdempotencyService::new(Arc::new(store), Arc::new(clock_at_noon()), [7; 32]);
    (service, settled)
}

fn at_first_write() -> RequestKey {
    let (_, claim) = unclaimed_key();
    RequestKey::AtFirstWrite(claim)
}

#[tokio::test]
async fn a_payment_whose_key_is_free_claims_it_as_it_writes_and_stores_its_answer_with_it() {
    let (store, completed, asked) = store_claiming(who().scope, true);
    let mut processor = MockProcessor::new();
    processor.expect_call().returning(|_, _| Ok(approved()));
    let (keys, settled) = keys(None);
    let requests = TransactionRequests::new(service(store, processor), keys);
    let created = requests
        .create(
            &who(),
            TransactionRequest::Payment(auth()),
            at_first_write(),
            &renders(),
        )
        .await;
    let Created::Ran {
        result: Ok(txn),
        key_settled: true,
    } = created
    else {
        panic!("{created:?}");
    };
    assert_eq!(
        asked.lock().unwrap().len(),
        1,
        "one pending write, claiming"
    );
    let reply = completed.lock().unwrap()[0].1.clone().unwrap();
    assert_eq!(reply.answer.body, txn.id.to_string(), "stored with it");
    assert!(settled.lock().unwrap().is_empty(), "nothing else settled");
}

#[tokio::test]
async fn a_payment_whose_key_is_taken_answers_what_the_earlier_request_left() {
    let (store, completed, _) = store_claiming(who().scope, false);
    let stored = Answer {
        status: 201,
        body: "txn_earlier".into(),
    };
    let (keys, settled) = keys(Some(Begun::Seen(Seen::Replay(stored.clone()))));
    // No processor call: the mock has no expectation.
    let requests = TransactionRequests::new(service(store, MockProcessor::new()), keys);
    let created = requests
        .create(
            &who(),
            TransactionRequest::Payment(auth()),
            at_first_write(),
            &renders(),
        )
        .await;
    assert!(
        matches!(&created, Created::Seen(Seen::Replay(answer)) if *answer == stored),
        "{created:?}"
    );
    assert!(completed.lock().unwrap().is_empty());
    assert!(settled.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_follow_up_claims_its_key_the_ordinary_way_first() {
    let nothing = nothing();
    let (keys, _) = keys(Some(Begun::Seen(Seen::InProgress)));
    let created = TransactionRequests::new(nothing, keys)
        .create(
            &who(),
            TransactionRequest::FollowUp {
                original: TxnId::from_suffix("1"),
                follow_up: FollowUp::Capture(None),
                labels: crate::payment::labels::Labels::default(),
            },
            at_first_write(),
            &renders(),
        )
        .await;
    assert!(
        matches!(created, Created::Seen(Seen::InProgress)),
        "{created:?}"
    );
}

#[tokio::test]
async fn a_refusal_before_the_first_write_leaves_the_key_to_the_door() {
    let nothing = nothing();
    let (keys, settled) = keys(None);
    let expired = NewPayment {
        source: PaymentSource::Card(CardInput {
            expiration: Some("0120".into()),
            ..card()
        }),
        ..auth()
    };
    let created = TransactionRequests::new(nothing, keys)
        .create(
            &who(),
            TransactionRequest::Payment(expired),
            at_first_write(),
            &renders(),
        )
        .await;
    assert!(
        matches!(
            created,
            Created::Ran {
                result: Err(PaymentError::Invalid(_)),
                key_settled: false
            }
        ),
        "{created:?}"
    );
    assert!(
        settled.lock().unwrap().is_empty(),
        "the key was never claimed"
    );
}

#[tokio::test]
async fn a_transient_refusal_after_the_claim_releases_the_key_for_the_retry() {
    // The completion fails after the pending row claimed the key: a transient failure, so the
    // key is released for the retry.
    let mut store = MockTransactionStore::new();
    store.expect_note_raw_cards().returning(|_, _, _| Ok(()));
    store.expect_payment_setup().returning(|_, id| {
        Ok(Some(PaymentSetup {
            merchant: shop(id.clone(), PlatformId::from_suffix("1")),
            plan: Some(plan()),
            connections: vec![connection("primary")],
        }))
    });
    store
        .expect_insert_pending_transaction()
        .returning(|_, _| Ok(true));
    store
        .expect_complete_transaction_with_event()
        .returning(|_, _, _, _, _, _| Err(StoreError::Unexpected("the database went away".into())));
    let mut processor = MockProcessor::new();
    processor.expect_call().returning(|_, _| Ok(approved()));
    let (keys, settled) = keys(None);
    let created = TransactionRequests::new(service(store, processor), keys)
        .create(
            &who(),
            TransactionRequest::Payment(auth()),
            at_first_write(),
            &renders(),
        )
        .await;
    assert!(
        matches!(
            created,
            Created::Ran {
                result: Err(PaymentError::Store(_)),
                key_settled: true
            }
        ),
        "{created:?}"
    );
    assert_eq!(*settled.lock().unwrap(), ["pay-1 released"]);
}
