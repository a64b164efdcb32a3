//! The payout service over mocked stores: what a payout is made of (amount, account), when it
//! is refused, and how the sandbox rail moves it.

use std::sync::{Arc, Mutex};

use super::*;
use crate::api_key::KeyHash;
use crate::auth::Principal;
use crate::boarding::form::{BoardingForm, FormStatus, SealedValue};
use crate::ids::{BoardingFormId, KeyId, PlatformId, UserId};
use crate::ledger::JournalKind;
use crate::mode::{KeyType, Mode};
use crate::ports::{
    Balance, MockBoardingStore, MockCardVault, MockLedgerStore, MockMerchantStore, MockPayoutStore,
    Sealed,
};
use crate::scope::Scope;
use crate::services::fixtures::{NOON, clock_at_noon, shop};

fn who(mode: Mode) -> Principal {
    Principal {
        scope: Scope::new(PlatformId::from_suffix("P"), mode),
        key_type: KeyType::Private,
        key_id: Some(KeyId::from_suffix("K")),
        user_id: UserId::from_suffix("U"),
    }
}

/// An approved form of merchant `M` holding an account ending in `last4`.
pub(super) fn form_paying_to(last4: &str) -> BoardingForm {
    BoardingForm {
        id: BoardingFormId::from_suffix("F"),
        platform_id: PlatformId::from_suffix("P"),
        mode: Mode::Test,
        merchant_id: MerchantId::from_suffix("M"),
        status: FormStatus::Approved,
        link_hash: KeyHash::from_bytes([0; 32]),
        expires_on: NOON,
        answers: crate::boarding::answers::Answers::default(),
        tax_id: None,
        bank_account: Some(SealedValue {
            sealed: Sealed {
                key_id: "k".into(),
                nonce: vec![0],
                ciphertext: vec![0],
            },
            last4: last4.into(),
        }),
        requested_fields: Vec::new(),
        reason: None,
        submission: None,
        created_on: NOON,
        updated_on: NOON,
    }
}

/// An approved form of a US merchant `M`: a routing number, and an account ending in `last4`.
pub(super) fn us_form_paying_to(last4: &str) -> BoardingForm {
    let mut form = form_paying_to(last4);
    form.answers.routing_number = Some("021000021".into());
    form
}

/// Ids `1`, `2`, … in the order asked for.
pub(super) fn counting_ids() -> crate::ports::MockIds {
    let mut ids = crate::ports::MockIds::new();
    let mut n = 0;
    ids.expect_next_id().returning(move || {
        n += 1;
        n.to_string()
    });
    ids
}

struct World {
    available: Vec<i64>,
    made: Vec<Made>,
    form: Option<BoardingForm>,
    merchant_exists: bool,
}

/// The service over a merchant `M` of the test platform whose available balance reads as
/// `available` one read after another, whose store answers `made` one make after another, with
/// `form` its payout account; and the payouts the store was asked to make.
fn service(world: World) -> (PayoutService, Arc<Mutex<Vec<Payout>>>) {
    let World {
        available,
        made,
        form,
        merchant_exists,
    } = world;
    let mut merchants = MockMerchantStore::new();
    merchants.expect_get_merchant().returning(move |scope, id| {
        Ok(merchant_exists.then(|| shop(id.clone(), scope.platform.clone())))
    });
    let mut forms = MockBoardingStore::new();
    forms
        .expect_payout_account()
        .returning(move |_, _| Ok(form.clone()));
    let mut ledger = MockLedgerStore::new();
    let mut reads = available.into_iter();
    ledger.expect_balances().returning(move |_, _| {
        Ok(vec![Balance {
            currency: Currency::USD,
            available: reads.next().expect("no more reads expected"),
            pending: 0,
            in_transit: 0,
        }])
    });
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let mut answers = made.into_iter();
    let mut payouts = MockPayoutStore::new();
    payouts
        .expect_make_payout()
        .returning(move |payout, journal, event, _| {
            assert_eq!(journal.heading.kind, JournalKind::Payout);
            assert_eq!(journal.heading.source, payout.id.as_str());
            assert_eq!(event.data.event_type().as_str(), "payout.created");
            seen.lock().unwrap().push(payout.clone());
            Ok(answers.next().expect("no more makes expected"))
        });
    let service = PayoutService::new(
        Arc::new(payouts),
        Arc::new(ledger),
        Arc::new(merchants),
        Arc::new(forms),
        Arc::new(MockCardVault::new()),
        Arc::new(clock_at_noon()),
        Arc::new(counting_ids()),
    );
    (service, asked)
}

/// A case of `create`: its name, the key's mode, what is asked, the world, and the amount made
/// with its account's last four, or the refused field and a word of its message.
type Case = (
    &'static str,
    Mode,
    NewPayout,
    World,
    Result<(i64, &'static str), (&'static str, &'static str)>,
);

#[rustfmt::skip]
fn cases() -> Vec<Case> {
    let ask = |amount| NewPayout {
        merchant: MerchantId::from_suffix("M"),
        currency: None,
        amount,
    };
    let world = |available: Vec<i64>, made: Vec<Made>, form| World {
        available,
        made,
        form,
        merchant_exists: true,
    };
    let short = |available| Made::Short { available };
    vec![
        ("an amount asked", Mode::Test, ask(Some(500)), world(vec![], vec![Made::Made], None), Ok((500, "6789"))),
        ("everything available", Mode::Test, ask(None), world(vec![700], vec![Made::Made], None), Ok((700, "6789"))),
        ("a refund took some meanwhile", Mode::Test, ask(None), world(vec![700, 300], vec![short(300), Made::Made], None), Ok((300, "6789"))),
        ("the form's account", Mode::Test, ask(Some(5)), world(vec![], vec![Made::Made], Some(form_paying_to("1116"))), Ok((5, "1116"))),
        ("a live merchant's US form", Mode::Live, ask(Some(5)), world(vec![], vec![Made::Made], Some(us_form_paying_to("4321"))), Ok((5, "4321"))),
        ("a live merchant's IBAN", Mode::Live, ask(Some(5)), world(vec![], vec![], Some(form_paying_to("4321"))), Err(("merchantId", "US accounts only"))),
        ("a live payout in euros", Mode::Live, NewPayout { currency: Some(Currency::parse("EUR").unwrap()), ..ask(Some(5)) }, world(vec![], vec![], Some(us_form_paying_to("4321"))), Err(("currency", "USD only"))),
        ("more than available", Mode::Test, ask(Some(800)), world(vec![], vec![short(700)], None), Err(("amount", "700"))),
        ("nothing available", Mode::Test, ask(None), world(vec![0], vec![], None), Err(("amount", "nothing"))),
        ("nothing left by a refund", Mode::Test, ask(None), world(vec![700], vec![short(0)], None), Err(("amount", "nothing"))),
        ("below zero", Mode::Test, ask(None), world(vec![-40], vec![], None), Err(("amount", "nothing"))),
        ("zero asked", Mode::Test, ask(Some(0)), world(vec![], vec![], None), Err(("amount", "at least 1"))),
        ("a live merchant without an account", Mode::Live, ask(Some(5)), world(vec![], vec![], None), Err(("merchantId", "bank account"))),
        ("no such merchant", Mode::Test, ask(Some(5)), World { merchant_exists: false, ..world(vec![], vec![], None) }, Err(("merchantId", "no such merchant"))),
        ("a balance that never stops changing", Mode::Test, ask(None), world(vec![9, 8, 7], vec![short(5), short(4), short(3)], None), Err(("busy", "send the request again"))),
    ]
}

/// Every way a payout is made or refused: by what is asked, what is available when the store
/// reads it, and where the merchant's money can go.
#[tokio::test]
async fn a_payout_is_made_of_what_is_available_to_an_account_it_has() {
    for (case, mode, new, world, expected) in cases() {
        let (service, asked) = service(world);
        let got = service.create(&who(mode), new, None).await;
        match (got, expected) {
            (Ok(payout), Ok((amount, last4))) => {
                assert_eq!(
                    (payout.amount, payout.bank_last4.as_str()),
                    (amount, last4),
                    "{case}"
                );
                assert_eq!(payout.state, PayoutState::Pending, "{case}");
                assert_eq!(payout.mode, mode, "{case}");
                assert_eq!(payout.bank_form.is_some(), last4 != "6789", "{case}");
                assert_eq!(asked.lock().unwrap().last(), Some(&payout), "{case}");
            }
            (Err(ServiceError::Busy(message)), Err((refused, says))) => {
                assert_eq!(refused, "busy", "{case}");
                assert!(message.contains(says), "{case}: {message}");
            }
            (
                Err(
                    ServiceError::Conflict { field, message }
                    | ServiceError::Invalid(Invalid { field, message }),
                ),
                Err((refused, says)),
            ) => {
                assert_eq!(field, refused, "{case}");
                assert!(message.contains(says), "{case}: {message}");
            }
            (got, expected) => panic!("{case}: {got:?}, expected {expected:?}"),
        }
    }
}

/// The sandbox rail finishes what a stopped run left in transit, then hands each pending test
/// payout over and ends it by its account number: the form's account opened from the vault
/// (one that returns R03 fails with it, posting the return), the paying account otherwise.
#[tokio::test]
async fn the_sandbox_rail_ends_each_payout_by_its_account() {
    let payout = |id: &str, state, form: Option<&str>| Payout {
        id: PayoutId::from_suffix(id),
        platform_id: PlatformId::from_suffix("P"),
        mode: Mode::Test,
        merchant_id: MerchantId::from_suffix("M"),
        currency: Currency::USD,
        amount: 250,
        state,
        method: crate::payout::PayoutMethod::Manual,
        bank_last4: "1116".into(),
        bank_form: form.map(BoardingFormId::from_suffix),
        trace_number: None,
        failure: None,
        created_on: NOON,
        updated_on: NOON,
    };
    let stranded = payout("A", PayoutState::InTransit, None);
    let returning = payout("B", PayoutState::Pending, Some("F"));
    let mut payouts = MockPayoutStore::new();
    let (in_transit, pending) = (stranded.clone(), returning.clone());
    payouts
        .expect_payouts_to_hand_over()
        .returning(move |mode, state, by, after, _| {
            assert_eq!((mode, by, after), (Mode::Test, NOON, None));
            Ok(match state {
                PayoutState::InTransit => vec![in_transit.clone()],
                _ => vec![pending.clone()],
            })
        });
    let moves = Arc::new(Mutex::new(Vec::new()));
    let seen = moves.clone();
    payouts.expect_move_payout().returning(move |change, _| {
        seen.lock().unwrap().push(change.clone());
        Ok(true)
    });
    let mut forms = MockBoardingStore::new();
    forms
        .expect_get_form()
        .returning(|_, _| Ok(Some(form_paying_to("1116"))));
    let mut vault = MockCardVault::new();
    vault
        .expect_open()
        .withf(|context, _| context == "bf_F:bankAccount")
        .returning(|_, _| Ok("000111111116".into()));
    let service = PayoutService::new(
        Arc::new(payouts),
        Arc::new(MockLedgerStore::new()),
        Arc::new(MockMerchantStore::new()),
        Arc::new(forms),
        Arc::new(vault),
        Arc::new(clock_at_noon()),
        Arc::new(counting_ids()),
    );
    let report = service.run_sandbox_rail().await.unwrap();
    assert_eq!((report.made, report.paid, report.failed), (0, 1, 1));
    let moves = moves.lock().unwrap();
    let summary: Vec<_> = moves
        .iter()
        .map(|m| {
            (
                m.payout.id.to_string(),
                m.from,
                m.payout.state,
                m.journal.as_ref().map(|j| j.heading.kind),
                m.event.as_ref().map(|e| e.data.event_type().as_str()),
                m.payout.failure.map(|f| f.code.as_code()),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "po_A".into(),
                PayoutState::InTransit,
                PayoutState::Paid,
                Some(JournalKind::PayoutPaid),
                Some("payout.paid"),
                None
            ),
            (
                "po_B".into(),
                PayoutState::Pending,
                PayoutState::InTransit,
                None,
                None,
                None
            ),
            (
                "po_B".into(),
                PayoutState::InTransit,
                PayoutState::Failed,
                Some(JournalKind::PayoutReturned),
                Some("payout.failed"),
                Some("R03".into())
            ),
        ]
    );
}
