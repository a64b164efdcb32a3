//! The live rail's files: a file carries the live payouts still pending (to in transit, each
//! with its entry's trace), numbered on from the bank's last file, its modifier the day's next;
//! nothing is written when its writer refuses; files wait to be sent until marked; a return's
//! trace finds its payout; payouts are paid once their file has settled.

use std::sync::{Arc, Mutex};

use holdfast_domain::Invalid;
use holdfast_domain::ids::{AchFileId, PayoutId};
use holdfast_domain::payout::ach::FileNumbers;
use holdfast_domain::payout::nacha::{self, Credit, Originator};
use holdfast_domain::payout::{Payout, PayoutState};
use holdfast_domain::ports::{
    AchHandOver, FileRecorded, Made, Sealed, UnsentAchFile, WriteAchFile,
};
use time::Duration;

use super::payouts::{books_whole, ids, live_platform, make, moved, payout};
use super::settlement::{charged, run};
use super::*;

const ODFI: &str = "021000021";

/// Writes each payout as a credit to one account, "sealed" as its bytes (the store keeps what
/// it is given), and remembers what it was asked.
#[derive(Default)]
struct Writer {
    asked: Mutex<Vec<(FileNumbers, Vec<String>)>>,
    refuse: bool,
}

impl WriteAchFile for Writer {
    fn write(&self, numbers: FileNumbers, payouts: &[Payout]) -> Result<Sealed, Invalid> {
        self.asked.lock().unwrap().push((numbers, ids(payouts)));
        if self.refuse {
            return Err(Invalid::new("credits", "refused"));
        }
        let credits: Vec<Credit<'_>> = payouts
            .iter()
            .map(|p| Credit {
                routing: "091000019",
                account: "12345678",
                savings: false,
                amount: p.amount,
                name: "Shop",
                reference: "ref",
            })
            .collect();
        let originator = Originator {
            destination: ODFI.into(),
            destination_name: "Bank".into(),
            origin: "1234567890".into(),
            origin_name: "Holdfast".into(),
            company_name: "Holdfast".into(),
            company_id: "1234567890".into(),
            odfi: ODFI.into(),
        };
        let file = nacha::credit_file(
            &originator,
            &credits,
            T0,
            T0.date(),
            numbers.modifier,
            numbers.first_trace,
        )?;
        Ok(Sealed {
            key_id: "k1".into(),
            nonce: vec![1, 2, 3],
            ciphertext: file.text.into_bytes(),
        })
    }
}

fn hand_over(payouts: &[&Payout], at: OffsetDateTime) -> AchHandOver {
    AchHandOver {
        id: AchFileId::from_suffix(&CountingIds.next_id()),
        odfi: ODFI.into(),
        created_on: at,
        effective_on: (at + Duration::days(1)).date(),
        payouts: payouts.iter().map(|p| p.id.clone()).collect(),
    }
}

async fn record(
    stores: &Stores,
    hand_over: &AchHandOver,
    writer: &Arc<Writer>,
) -> Result<FileRecorded, holdfast_domain::ports::StoreError> {
    stores.ach.record_ach_file(hand_over, writer.clone()).await
}

async fn stored(stores: &Stores, p: &Payout) -> Payout {
    let scope = Scope::new(p.platform_id.clone(), p.mode);
    stores
        .payouts
        .get_payout(&scope, &p.id)
        .await
        .unwrap()
        .unwrap()
}

/// Live merchants `a` and `b` with 5000 available each on Tuesday `T0 + 2d`, and the test
/// shop with as much.
async fn live_merchants(stores: &Stores) -> (Merchant, Merchant, Merchant) {
    let Shop {
        p: _,
        m: test,
        plan,
    } = shop(stores).await;
    let (live, live_plan) = live_platform(stores, &plan).await;
    let a = stored_merchant(stores, &live, "A").await;
    let b = stored_merchant(stores, &live, "B").await;
    for m in [&a, &b] {
        charged(stores, m, &live_plan, 5000, T0).await;
    }
    charged(stores, &test, &plan, 5000, T0).await;
    run(stores, T0 + Duration::days(2)).await;
    (a, b, test)
}

/// A file takes the live payouts still pending, in the order of their ids, moves them to in
/// transit with their entries' traces, and waits to be sent until marked; the next file's
/// traces count on and its modifier is the day's next; a refused file writes nothing; a file
/// of no pending payout is not written.
#[expect(clippy::too_many_lines, reason = "one scenario, read top to bottom")]
pub async fn an_ach_file_carries_the_pending_live_payouts_once(db: Database) {
    let stores = db.stores();
    let (a, b, test) = live_merchants(&stores).await;
    let tuesday = T0 + Duration::days(2);
    let (p1, p2, p3) = (
        payout(&a, 100, tuesday),
        payout(&a, 200, tuesday),
        payout(&b, 300, tuesday),
    );
    let canceled = payout(&b, 400, tuesday);
    let in_test = payout(&test, 500, tuesday);
    for p in [&p1, &p2, &p3, &canceled, &in_test] {
        assert_eq!(make(&stores, p).await, Made::Made);
    }
    let cancel = moved(&canceled, PayoutState::Canceled, None, tuesday);
    assert!(stores.payouts.move_payout(&cancel, None).await.unwrap());

    let writer = Arc::new(Writer::default());
    let first = hand_over(&[&p3, &p1, &canceled, &in_test, &p2], tuesday);
    assert_eq!(
        record(&stores, &first, &writer).await.unwrap(),
        FileRecorded {
            payouts: 3,
            total: 600
        }
    );
    let asked = writer.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].0.first_trace, asked[0].0.modifier),
        (1, 'A'),
        "the bank's first file"
    );
    let mut in_file = ids(&[p1.clone(), p2.clone(), p3.clone()]);
    in_file.sort();
    assert_eq!(asked[0].1, in_file, "the payouts still pending, by id");
    let traces: Vec<String> = (1..=3).map(|n| format!("02100002{n:07}")).collect();
    for (id, trace) in in_file.iter().zip(&traces) {
        let p = [&p1, &p2, &p3]
            .into_iter()
            .find(|p| p.id.as_str() == id)
            .unwrap();
        let now = stored(&stores, p).await;
        assert_eq!(now.state, PayoutState::InTransit, "{id}");
        assert_eq!(now.trace_number.as_deref(), Some(trace.as_str()), "{id}");
    }
    assert_eq!(
        stored(&stores, &canceled).await.state,
        PayoutState::Canceled
    );
    assert_eq!(stored(&stores, &in_test).await.state, PayoutState::Pending);
    assert_eq!(stored(&stores, &in_test).await.trace_number, None);

    let unsent = stores.ach.unsent_ach_files().await.unwrap();
    assert_eq!(unsent.len(), 1);
    assert_eq!(unsent[0].id, first.id);
    assert_eq!(
        (
            unsent[0].sealed.key_id.as_str(),
            &unsent[0].sealed.nonce[..]
        ),
        ("k1", &[1, 2, 3][..]),
        "kept as sealed"
    );
    let records = String::from_utf8(unsent[0].sealed.ciphertext.clone()).unwrap();
    assert!(records.starts_with("101 021000021"), "the file's text");
    assert_eq!(records.lines().count() % 10, 0);
    stores.ach.ach_file_sent(&first.id, tuesday).await.unwrap();
    assert_eq!(
        stores.ach.unsent_ach_files().await.unwrap(),
        Vec::<UnsentAchFile>::new()
    );

    // Again with the same payouts: none is pending, nothing is written.
    let again = hand_over(&[&p1, &p2, &p3], tuesday);
    assert_eq!(
        record(&stores, &again, &writer).await.unwrap(),
        FileRecorded {
            payouts: 0,
            total: 0
        }
    );
    assert_eq!(writer.asked.lock().unwrap().len(), 1, "not asked to write");

    // A refused file writes nothing: its payout stays pending, no file waits.
    let p4 = payout(&a, 50, tuesday);
    assert_eq!(make(&stores, &p4).await, Made::Made);
    let refusing = Arc::new(Writer {
        refuse: true,
        ..Writer::default()
    });
    assert!(
        record(&stores, &hand_over(&[&p4], tuesday), &refusing)
            .await
            .is_err()
    );
    assert_eq!(stored(&stores, &p4).await.state, PayoutState::Pending);
    assert_eq!(stored(&stores, &p4).await.trace_number, None);
    assert!(stores.ach.unsent_ach_files().await.unwrap().is_empty());

    // The day's second file counts on; the next day's takes modifier A again.
    let second = hand_over(&[&p4], tuesday + Duration::hours(1));
    assert_eq!(record(&stores, &second, &writer).await.unwrap().payouts, 1);
    let p5 = payout(&b, 60, tuesday);
    assert_eq!(make(&stores, &p5).await, Made::Made);
    let wednesday = tuesday + Duration::days(1);
    assert_eq!(
        record(&stores, &hand_over(&[&p5], wednesday), &writer)
            .await
            .unwrap()
            .payouts,
        1
    );
    let numbers: Vec<(u32, char)> = writer
        .asked
        .lock()
        .unwrap()
        .iter()
        .map(|(n, _)| (n.first_trace, n.modifier))
        .collect();
    assert_eq!(numbers, [(1, 'A'), (4, 'B'), (5, 'A')]);
    assert_eq!(
        stores.ach.last_ach_file_on(ODFI).await.unwrap(),
        Some(wednesday),
        "the bank's newest file"
    );
    assert_eq!(
        stores.ach.last_ach_file_on("091000019").await.unwrap(),
        None
    );
    assert_eq!(
        stores
            .ach
            .unsent_ach_files()
            .await
            .unwrap()
            .iter()
            .map(|f| f.id.clone())
            .collect::<Vec<_>>(),
        [second.id.clone(), hand_over_id_of(&stores, &p5).await],
        "oldest first"
    );
    books_whole(&stores, wednesday).await;
}

/// The id of the file that carried `p`, as the unsent list names it (found by its trace).
async fn hand_over_id_of(stores: &Stores, p: &Payout) -> AchFileId {
    let trace = stored(stores, p).await.trace_number.unwrap();
    let unsent = stores.ach.unsent_ach_files().await.unwrap();
    unsent
        .into_iter()
        .find(|f| String::from_utf8_lossy(&f.sealed.ciphertext).contains(&trace))
        .unwrap()
        .id
}

/// A return's trace finds the live payout its entry carried (whatever its state since); the
/// payouts whose file was put in the outbox and settled by a day are read by id, in batches
/// after the last one read.
pub async fn a_trace_finds_its_payout_and_settled_files_pay(db: Database) {
    let stores = db.stores();
    let (a, b, _) = live_merchants(&stores).await;
    let tuesday = T0 + Duration::days(2);
    let made: Vec<Payout> = [(&a, 100), (&a, 200), (&b, 300)]
        .into_iter()
        .map(|(m, amount)| payout(m, amount, tuesday))
        .collect();
    for p in &made {
        assert_eq!(make(&stores, p).await, Made::Made);
    }
    let writer = Arc::new(Writer::default());
    let refs: Vec<&Payout> = made.iter().collect();
    record(&stores, &hand_over(&refs, tuesday), &writer)
        .await
        .unwrap();
    let mut by_id = made.clone();
    by_id.sort_by(|x, y| x.id.as_str().cmp(y.id.as_str()));
    let second = stored(&stores, &by_id[1]).await;
    let trace = second.trace_number.clone().unwrap();
    assert_eq!(
        stores.ach.payout_by_trace(&trace).await.unwrap(),
        Some(second.clone())
    );
    assert_eq!(
        stores.ach.payout_by_trace("021000029999999").await.unwrap(),
        None
    );

    let arrived = async |day: OffsetDateTime, after: Option<PayoutId>, limit| {
        ids(&stores
            .ach
            .payouts_arrived(day.date(), after, limit)
            .await
            .unwrap())
    };
    assert!(
        arrived(tuesday, None, 10).await.is_empty(),
        "not before the effective day"
    );
    let wednesday = tuesday + Duration::days(1);
    assert!(
        arrived(wednesday, None, 10).await.is_empty(),
        "not before its file is in the outbox"
    );
    for file in stores.ach.unsent_ach_files().await.unwrap() {
        stores.ach.ach_file_sent(&file.id, tuesday).await.unwrap();
    }
    assert_eq!(arrived(wednesday, None, 10).await, ids(&by_id));
    assert_eq!(
        arrived(wednesday, Some(by_id[0].id.clone()), 1).await,
        ids(&by_id[1..2]),
        "the next batch"
    );
    let returned = moved(&second, PayoutState::Failed, Some("R03"), wednesday);
    assert!(stores.payouts.move_payout(&returned, None).await.unwrap());
    assert_eq!(
        stores
            .ach
            .payout_by_trace(&trace)
            .await
            .unwrap()
            .map(|p| p.state),
        Some(PayoutState::Failed),
        "a return found after it failed"
    );
    assert_eq!(
        arrived(wednesday, None, 10).await,
        ids(&[by_id[0].clone(), by_id[2].clone()]),
        "a failed payout is not paid"
    );
    books_whole(&stores, wednesday).await;
}

/// A live merchant of `p` named `name`, in `currency`, with an approved boarding form: holding
/// a US routing number when `us`, an IBAN's last four otherwise.
async fn boarded(stores: &Stores, p: &Principal, name: &str, currency: &str, us: bool) -> Merchant {
    use holdfast_domain::boarding::answers::Answers;
    use holdfast_domain::boarding::form::{BoardingForm, FormStatus, SealedValue};
    use holdfast_domain::ids::BoardingFormId;
    use holdfast_domain::ports::FormWrite;
    let mut m = merchant(p, name);
    m.details.currency = Currency::parse(currency).unwrap();
    stores
        .merchants
        .insert_merchant_with_event(&m, &event_id(), None)
        .await
        .unwrap();
    let form = BoardingForm {
        id: BoardingFormId::from_suffix(&CountingIds.next_id()),
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        merchant_id: m.id.clone(),
        status: FormStatus::Approved,
        link_hash: holdfast_domain::api_key::KeyHash::of(name),
        expires_on: T0,
        answers: Answers {
            routing_number: us.then(|| "021000021".to_owned()),
            ..Answers::default()
        },
        tax_id: None,
        bank_account: Some(SealedValue {
            sealed: Sealed {
                key_id: "k1".into(),
                nonce: vec![1; 12],
                ciphertext: vec![2; 24],
            },
            last4: "6789".into(),
        }),
        requested_fields: Vec::new(),
        reason: None,
        submission: None,
        created_on: T0,
        updated_on: T0,
    };
    assert!(
        stores
            .boarding
            .write_form(&form, FormWrite::default())
            .await
            .unwrap()
    );
    m
}

/// A scheduled run pays a live balance out by ACH only in USD to a US account (its form names a
/// routing number), as `POST /v1/payouts` refuses the others: a euro balance and an IBAN are
/// left available, without an error.
pub async fn a_scheduled_run_pays_live_balances_only_in_usd_to_us_accounts(db: Database) {
    use holdfast_domain::payout::{PayoutInterval, PayoutSchedule};
    let stores = db.stores();
    let Shop { plan, .. } = shop(&stores).await;
    let (live, live_plan) = live_platform(&stores, &plan).await;
    let us = boarded(&stores, &live, "Us", "USD", true).await;
    let iban = boarded(&stores, &live, "Iban", "USD", false).await;
    let euros = boarded(&stores, &live, "Euros", "EUR", true).await;
    let daily = PayoutSchedule::new(PayoutInterval::Daily, None, 0).unwrap();
    for m in [&us, &iban, &euros] {
        charged(&stores, m, &live_plan, 1000, T0).await;
        stores
            .payouts
            .set_schedule(&live.scope, &m.id, daily, T0, None)
            .await
            .unwrap();
    }
    let tuesday = T0 + Duration::days(2);
    run(&stores, tuesday).await;
    let made = super::payouts::scheduled_run(&stores, tuesday).await;
    assert_eq!(made, 1, "only the USD balance to the US account");
    let listed = stores
        .payouts
        .list_payouts(
            &live.scope,
            &holdfast_domain::ports::PayoutFilter::default(),
            &holdfast_domain::page::PageRequest::new(Some(10), None).unwrap(),
        )
        .await
        .unwrap()
        .data;
    assert_eq!(
        listed.iter().map(|p| &p.merchant_id).collect::<Vec<_>>(),
        [&us.id]
    );
    for left in [&iban, &euros] {
        assert!(
            super::payouts::balance(&stores, left).await.0 > 0,
            "{} keeps its balance available",
            left.details.name.as_str()
        );
    }
    books_whole(&stores, tuesday).await;
}
