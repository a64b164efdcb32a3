//! The live rail over mocked ports: a file recorded before a crash is sent first; payouts the
//! rail cannot write are left out of the file, the others written and sealed; a file within the
//! hour of the last waits; a file that cannot be made does not stop returns and payments;
//! returns fail their payouts once, an unreadable return file is set aside.

use std::sync::{Arc, Mutex};

use super::super::tests::{counting_ids, form_paying_to, us_form_paying_to};
use super::*;
use crate::boarding::form::BoardingForm;
use crate::ids::{BoardingFormId, MerchantId, PlatformId};
use crate::payout::PayoutMethod;
use crate::ports::{
    FileRecorded, MockAchStore, MockBankDrop, MockBoardingStore, MockCardVault, MockLedgerStore,
    MockMerchantStore, MockPayoutStore, PayoutMove, ReturnFile, UnsentAchFile,
};
use crate::services::fixtures::{NOON, clock_at_noon};

fn originator() -> Originator {
    Originator {
        destination: "091000019".into(),
        destination_name: "Bank".into(),
        origin: "1234567890".into(),
        origin_name: "Holdfast".into(),
        company_name: "Holdfast".into(),
        company_id: "1234567890".into(),
        odfi: "091000019".into(),
    }
}

fn live_payout(id: &str, currency: Currency, state: PayoutState) -> Payout {
    Payout {
        id: PayoutId::from_suffix(id),
        platform_id: PlatformId::from_suffix("P"),
        mode: Mode::Live,
        merchant_id: MerchantId::from_suffix("M"),
        currency,
        amount: 1000,
        state,
        method: PayoutMethod::Manual,
        bank_last4: "6789".into(),
        bank_form: Some(BoardingFormId::from_suffix("F")),
        trace_number: None,
        failure: None,
        created_on: NOON,
        updated_on: NOON,
    }
}

/// A vault that "seals" a text as its bytes and opens the form's account as `000123456789`.
fn vault() -> MockCardVault {
    let mut vault = MockCardVault::new();
    vault.expect_seal().returning(|_, text| Sealed {
        key_id: "k".into(),
        nonce: Vec::new(),
        ciphertext: text.as_bytes().to_vec(),
    });
    vault.expect_open().returning(|context, sealed| {
        Ok(if context.ends_with(":ach_file") {
            String::from_utf8(sealed.ciphertext.clone()).unwrap()
        } else {
            "000123456789".into()
        })
    });
    vault
}

/// The world of a run: the pending live payouts, the form, the rail's store and drop, and the
/// payouts' moves it writes.
struct World {
    pending: Vec<Payout>,
    form: BoardingForm,
    files: MockAchStore,
    drop: MockBankDrop,
}

fn service(world: World) -> (PayoutService, Arc<Mutex<Vec<PayoutMove>>>) {
    let World {
        pending,
        form,
        files,
        drop,
    } = world;
    let mut payouts = MockPayoutStore::new();
    payouts
        .expect_payouts_to_hand_over()
        .returning(move |mode, state, _, _, _| {
            assert_eq!((mode, state), (Mode::Live, PayoutState::Pending));
            Ok(pending.clone())
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
        .returning(move |_, _| Ok(Some(form.clone())));
    let service = PayoutService::new(
        Arc::new(payouts),
        Arc::new(MockLedgerStore::new()),
        Arc::new(MockMerchantStore::new()),
        Arc::new(forms),
        Arc::new(vault()),
        Arc::new(clock_at_noon()),
        Arc::new(counting_ids()),
    )
    .with_ach_rail(AchRail {
        originator: originator(),
        files: Arc::new(files),
        drop: Arc::new(drop),
    });
    (service, moves)
}

/// A drop with no return file waiting.
fn quiet_drop() -> MockBankDrop {
    let mut drop = MockBankDrop::new();
    drop.expect_waiting_returns().returning(|| Ok(Vec::new()));
    drop
}

/// An ACH store with no file unsent, none made before, nothing arrived.
fn files() -> MockAchStore {
    let mut files = MockAchStore::new();
    files.expect_unsent_ach_files().returning(|| Ok(Vec::new()));
    files.expect_last_ach_file_on().returning(|_| Ok(None));
    files
        .expect_payouts_arrived()
        .returning(|_, _, _| Ok(Vec::new()));
    files
}

fn world(pending: Vec<Payout>, files: MockAchStore, drop: MockBankDrop) -> World {
    World {
        pending,
        form: us_form_paying_to("6789"),
        files,
        drop,
    }
}

#[tokio::test]
async fn a_file_recorded_before_a_stop_is_sent_and_marked() {
    let mut files = MockAchStore::new();
    let file = AchFileId::from_suffix("1");
    let unsent = UnsentAchFile {
        id: file.clone(),
        sealed: Sealed {
            key_id: "k".into(),
            nonce: Vec::new(),
            ciphertext: b"101 RECORDS\n".to_vec(),
        },
    };
    let mut once = Some(unsent);
    files
        .expect_unsent_ach_files()
        .returning(move || Ok(once.take().into_iter().collect()));
    files
        .expect_ach_file_sent()
        .withf(move |id, at| *id == file && *at == NOON)
        .times(1)
        .returning(|_, _| Ok(()));
    files
        .expect_payouts_arrived()
        .returning(|_, _, _| Ok(Vec::new()));
    let mut drop = quiet_drop();
    drop.expect_send()
        .withf(|name, text| name == "achf_1.ach" && text == "101 RECORDS\n")
        .times(1)
        .returning(|_, _| Ok(()));
    let (service, _) = service(world(Vec::new(), files, drop));
    let rail = service.ach.clone().unwrap();
    assert_eq!(
        service.run_ach_rail(&rail).await.unwrap(),
        RailReport::default()
    );
}

#[tokio::test]
async fn payouts_the_rail_cannot_write_are_left_out_and_the_file_is_sealed() {
    let usd = live_payout("A", Currency::USD, PayoutState::Pending);
    let euros = live_payout("B", Currency::parse("EUR").unwrap(), PayoutState::Pending);
    let mut files = files();
    let written = Arc::new(Mutex::new(String::new()));
    let kept = written.clone();
    let handed = usd.clone();
    files
        .expect_record_ach_file()
        .times(1)
        .returning(move |hand_over, writer| {
            assert_eq!(
                hand_over.payouts,
                std::slice::from_ref(&handed.id),
                "the euros left out"
            );
            assert_eq!(hand_over.odfi, "091000019");
            assert_eq!(hand_over.effective_on, effective_date(NOON.date()));
            let numbers = FileNumbers {
                first_trace: 1,
                modifier: 'A',
            };
            let sealed = writer
                .write(numbers, std::slice::from_ref(&handed))
                .unwrap();
            *kept.lock().unwrap() = String::from_utf8(sealed.ciphertext).unwrap();
            Ok(FileRecorded {
                payouts: 1,
                total: 1000,
            })
        });
    let (service, _) = service(world(vec![usd, euros], files, quiet_drop()));
    let rail = service.ach.clone().unwrap();
    let report = service.run_ach_rail(&rail).await.unwrap();
    assert_eq!(report.sent, 1);
    let text = written.lock().unwrap().clone();
    assert!(text.lines().all(|l| l.len() == 94), "{text}");
    let entry = text.lines().find(|l| l.starts_with('6')).unwrap();
    assert_eq!(&entry[3..12], "021000021", "the form's routing number");
    assert_eq!(entry[12..29].trim(), "000123456789", "the account, opened");
    assert_eq!(&entry[29..39], "0000001000");
}

#[tokio::test]
async fn a_non_us_account_is_left_pending() {
    let mut files = files();
    files.expect_record_ach_file().times(0);
    let mut iban = world(
        vec![live_payout("A", Currency::USD, PayoutState::Pending)],
        files,
        quiet_drop(),
    );
    iban.form = form_paying_to("6789");
    let (service, moves) = service(iban);
    let rail = service.ach.clone().unwrap();
    assert_eq!(service.run_ach_rail(&rail).await.unwrap().sent, 0);
    assert!(moves.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_file_within_the_hour_of_the_last_waits() {
    let mut files = MockAchStore::new();
    files.expect_unsent_ach_files().returning(|| Ok(Vec::new()));
    files
        .expect_last_ach_file_on()
        .returning(|_| Ok(Some(NOON - time::Duration::minutes(30))));
    files.expect_record_ach_file().times(0);
    files
        .expect_payouts_arrived()
        .returning(|_, _, _| Ok(Vec::new()));
    let (service, _) = service(world(
        vec![live_payout("A", Currency::USD, PayoutState::Pending)],
        files,
        quiet_drop(),
    ));
    let rail = service.ach.clone().unwrap();
    assert_eq!(service.run_ach_rail(&rail).await.unwrap().sent, 0);
}

/// A return addenda naming `trace` with `code`, as a 94-character record.
fn addenda(code: &str, trace: &str) -> String {
    format!("799{code}{trace:<15}{:73}", "")
}

#[tokio::test]
async fn a_file_that_cannot_be_made_still_lets_returns_and_payments_through() {
    let mut files = MockAchStore::new();
    files.expect_unsent_ach_files().returning(|| Ok(Vec::new()));
    files.expect_last_ach_file_on().returning(|_| Ok(None));
    files
        .expect_record_ach_file()
        .returning(|_, _| Err(StoreError::Unexpected("36 files today".into())));
    let returned = live_payout("R", Currency::USD, PayoutState::Paid);
    files
        .expect_payout_by_trace()
        .returning(move |trace| Ok((trace == "091000010000007").then(|| returned.clone())));
    let arrived = live_payout("S", Currency::USD, PayoutState::InTransit);
    files
        .expect_payouts_arrived()
        .returning(move |day, after, _| {
            assert_eq!(day, NOON.date());
            Ok(if after.is_none() {
                vec![arrived.clone()]
            } else {
                Vec::new()
            })
        });
    let mut drop = MockBankDrop::new();
    let record = |first: char| format!("{first}{:93}", "");
    let returns = format!(
        "{}\n{}\n{}\n{}\n",
        record('1'),
        addenda("R03", "091000010000007"),
        addenda("R02", "091000019999999"),
        record('9'),
    );
    // Its file control not yet written: it waits, neither read nor set aside.
    let partial = format!("{}\n{}\n", record('1'), addenda("R03", "091000010000007"));
    drop.expect_waiting_returns().returning(move || {
        Ok(vec![
            ReturnFile {
                name: "returns.ach".into(),
                text: returns.clone(),
            },
            ReturnFile {
                name: "garbage".into(),
                text: "1 short\n9 short\n".into(),
            },
            ReturnFile {
                name: "partial".into(),
                text: partial.clone(),
            },
        ])
    });
    drop.expect_returns_done()
        .withf(|name, read| (name, *read) == ("returns.ach", true))
        .times(1)
        .returning(|_, _| Ok(()));
    drop.expect_returns_done()
        .withf(|name, read| (name, *read) == ("garbage", false))
        .times(1)
        .returning(|_, _| Ok(()));
    drop.expect_returns_done()
        .withf(|name, _| name == "partial")
        .times(0);
    let (service, moves) = service(world(
        vec![live_payout("A", Currency::USD, PayoutState::Pending)],
        files,
        drop,
    ));
    let rail = service.ach.clone().unwrap();
    let report = service.run_ach_rail(&rail).await.unwrap();
    assert_eq!((report.sent, report.failed, report.paid), (0, 1, 1));
    let moves = moves.lock().unwrap();
    let seen: Vec<(&str, PayoutState, PayoutState, Option<String>)> = moves
        .iter()
        .map(|m| {
            (
                m.payout.id.as_str(),
                m.from,
                m.payout.state,
                m.payout.failure.map(|f| f.code.as_code()),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "po_R",
                PayoutState::Paid,
                PayoutState::Failed,
                Some("R03".into())
            ),
            ("po_S", PayoutState::InTransit, PayoutState::Paid, None),
        ]
    );
}
