//! The loan service over mocked stores, time moved by the clock port (never by sleeping): an
//! offer expires at its end and not before; a loan being repaid falls past due when a 30-day
//! minimum passes unmet and comes back once it is made up; a repayment is refused above what is
//! outstanding; a change the store finds moved is never reported as made.

use std::sync::{Arc, Mutex};

use time::{Duration, OffsetDateTime};

use super::*;
use crate::auth::Principal;
use crate::ids::{KeyId, PlatformId, UserId};
use crate::loan::RepaymentKind;
use crate::mode::{KeyType, Mode};
use crate::ports::{
    MockBoardingStore, MockCardVault, MockClock, MockIds, MockLedgerStore, MockLoanStore,
    MockMerchantStore, MockPayoutStore,
};
use crate::services::fixtures::NOON;

fn loan(state: LoanState, repaid: i64) -> Loan {
    Loan {
        id: LoanId::from_suffix("L"),
        platform_id: PlatformId::from_suffix("P"),
        mode: Mode::Test,
        merchant_id: MerchantId::from_suffix("M"),
        currency: crate::merchant::Currency::USD,
        state,
        terms: LoanTerms::new(100_000, 10_000, 1_000, Some(20_000)).unwrap(),
        repaid,
        offer_expires_on: NOON,
        link_hash: None,
        acceptance: None,
        payout_id: None,
        paid_out_on: state.is_repaying().then_some(NOON),
        created_on: NOON - Duration::days(1),
        updated_on: NOON,
    }
}

/// The service at `now` over `loans` and `forms` (the bank accounts its payouts go to).
fn service_over(
    now: OffsetDateTime,
    loans: MockLoanStore,
    forms: MockBoardingStore,
) -> LoanService {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(now);
    let clock: Arc<dyn Clock> = Arc::new(clock);
    let mut ids = MockIds::new();
    let mut n = 0;
    ids.expect_next_id().returning(move || {
        n += 1;
        n.to_string()
    });
    let ids: Arc<dyn Ids> = Arc::new(ids);
    let payouts = PayoutService::new(
        Arc::new(MockPayoutStore::new()),
        Arc::new(MockLedgerStore::new()),
        Arc::new(MockMerchantStore::new()),
        Arc::new(forms),
        Arc::new(MockCardVault::new()),
        clock.clone(),
        ids.clone(),
    );
    LoanService::new(
        Arc::new(loans),
        Arc::new(MockMerchantStore::new()),
        Arc::new(MockLedgerStore::new()),
        payouts,
        clock,
        ids,
    )
}

/// A store that reads `read` and answers each change with `answer`; the changes it was asked
/// to write.
fn store_of(read: Loan, answer: Changed) -> (MockLoanStore, Arc<Mutex<Vec<LoanChange>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let mut loans = MockLoanStore::new();
    loans
        .expect_get_loan()
        .returning(move |_, _| Ok(Some(read.clone())));
    let seen = asked.clone();
    loans.expect_change_loan().returning(move |change, _| {
        seen.lock().unwrap().push(change.clone());
        Ok(answer)
    });
    (loans, asked)
}

/// The service at `now`, its store holding `held` (for the review) and reading a loan with
/// 30,000 of 110,000 repaid, answering each change with `answer`; the changes it was asked to
/// write.
fn service_at(
    now: OffsetDateTime,
    held: Vec<Loan>,
    answer: Changed,
) -> (LoanService, Arc<Mutex<Vec<LoanChange>>>) {
    let (mut loans, asked) = store_of(loan(LoanState::PaidOut, 30_000), answer);
    loans
        .expect_loans_to_review()
        .returning(move |due, after, _| {
            // Offers ended by now; loans paid out a first period ago.
            assert_eq!(
                (due.offers_ended_by, due.paid_out_by),
                (now, now - Duration::days(30))
            );
            Ok(if after.is_none() {
                held.clone()
            } else {
                Vec::new()
            })
        });
    (service_over(now, loans, MockBoardingStore::new()), asked)
}

/// What each change wrote: the loan's new state and the events it sent.
fn written(asked: &Mutex<Vec<LoanChange>>) -> Vec<(LoanState, Vec<String>)> {
    asked
        .lock()
        .unwrap()
        .iter()
        .map(|c| {
            let events = c
                .events
                .iter()
                .map(|e| e.data.event_type().as_str().to_owned())
                .collect();
            (c.loan.state, events)
        })
        .collect()
}

#[tokio::test]
async fn an_offer_expires_at_its_end_and_not_before() {
    let offered = loan(LoanState::Offered, 0);
    let (before, asked) = service_at(
        NOON - Duration::seconds(1),
        vec![offered.clone()],
        Changed::Changed,
    );
    assert_eq!(before.review().await.unwrap(), ReviewReport::default());
    assert!(written(&asked).is_empty());
    let (at_end, asked) = service_at(NOON, vec![offered], Changed::Changed);
    assert_eq!(at_end.review().await.unwrap().expired, 1);
    assert_eq!(
        written(&asked),
        [(LoanState::Expired, vec!["loan.expired".to_owned()])]
    );
    let change = &asked.lock().unwrap()[0];
    assert_eq!(change.from, LoanState::Offered);
    assert_eq!(change.read_on, NOON, "guarded by the loan as read");
    assert_eq!(change.loan.link_hash, None, "its link stops working");
}

/// The 30-day minimum is 20,000, counted from the payout at noon: nothing is due in the first
/// 30 days; after 30 days 20,000 is, after 60 days 40,000.
#[tokio::test]
async fn a_minimum_not_met_is_past_due_and_made_up_is_back() {
    let day = Duration::days(1);
    let cases = [
        (LoanState::PaidOut, 0, 29 * day, None),
        (
            LoanState::PaidOut,
            0,
            30 * day,
            Some((LoanState::PastDue, "loan.past_due")),
        ),
        (LoanState::PaidOut, 20_000, 30 * day, None),
        (
            LoanState::PaidOut,
            20_000,
            60 * day,
            Some((LoanState::PastDue, "loan.past_due")),
        ),
        (
            LoanState::PastDue,
            40_000,
            60 * day,
            Some((LoanState::PaidOut, "loan.updated")),
        ),
        (LoanState::PastDue, 10_000, 31 * day, None),
    ];
    for (state, repaid, after, expected) in cases {
        let (service, asked) =
            service_at(NOON + after, vec![loan(state, repaid)], Changed::Changed);
        let report = service.review().await.unwrap();
        let expected: Vec<(LoanState, Vec<String>)> = expected
            .map(|(to, event)| (to, vec![event.to_owned()]))
            .into_iter()
            .collect();
        assert_eq!(written(&asked), expected, "{state} {repaid} {after}");
        assert_eq!(report.moved, expected.len() as u64);
    }
}

#[tokio::test]
async fn a_change_the_store_found_moved_is_not_counted() {
    let (service, asked) = service_at(
        NOON + Duration::days(31),
        vec![loan(LoanState::PaidOut, 0)],
        Changed::Moved,
    );
    assert_eq!(service.review().await.unwrap(), ReviewReport::default());
    assert_eq!(
        written(&asked).len(),
        1,
        "tried once; the next review tries again"
    );
}

fn owner() -> Principal {
    Principal {
        scope: crate::scope::Scope::new(PlatformId::from_suffix("P"), Mode::Test),
        key_type: KeyType::Private,
        key_id: Some(KeyId::from_suffix("K")),
        user_id: UserId::from_suffix("U"),
    }
}

/// The loan read has 80,000 outstanding (30,000 of 110,000 repaid).
#[tokio::test]
async fn an_early_repayment_is_refused_above_what_is_outstanding_and_moves_what_it_repays() {
    let (service, asked) = service_at(NOON, Vec::new(), Changed::Changed);
    let id = LoanId::from_suffix("L");
    for (amount, field) in [
        (Some(0), "amount"),
        (Some(-5), "amount"),
        (Some(80_001), "amount"),
    ] {
        let refused = service
            .repay(&owner(), &id, amount, None)
            .await
            .unwrap_err();
        let named = match refused {
            ServiceError::Invalid(i) => i.field,
            ServiceError::Conflict { field, message } => {
                assert!(message.contains("80000"), "{message}");
                field
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(named, field);
    }
    assert!(written(&asked).is_empty(), "nothing refused was written");
    let repaid = service.repay(&owner(), &id, None, None).await.unwrap();
    assert_eq!((repaid.state, repaid.outstanding()), (LoanState::Repaid, 0));
    let change = asked.lock().unwrap()[0].clone();
    let repayment = change.repayment.unwrap();
    assert_eq!(
        (repayment.kind, repayment.amount),
        (RepaymentKind::Early, 80_000)
    );
    let journal = &change.journals[0];
    assert_eq!(journal.heading.source, repayment.id.as_str());
    assert_eq!(
        journal.amount_to(crate::ledger::Purpose::MerchantAvailable),
        80_000
    );
    assert_eq!(
        journal.amount_to(crate::ledger::Purpose::LoanReceivable),
        -80_000
    );
    let events: Vec<&str> = change
        .events
        .iter()
        .map(|e| e.data.event_type().as_str())
        .collect();
    assert_eq!(events, ["loan.repayment", "loan.repaid"]);
}

#[tokio::test]
async fn a_repayment_the_store_found_short_or_moved_is_refused_in_words() {
    let (short, _) = service_at(NOON, Vec::new(), Changed::Short { available: 12 });
    let refused = short
        .repay(&owner(), &LoanId::from_suffix("L"), Some(100), None)
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, ServiceError::Conflict { field: "amount", message } if message.ends_with("12")),
        "{refused:?}"
    );
    let (moved, _) = service_at(NOON, Vec::new(), Changed::Moved);
    let refused = moved
        .repay(&owner(), &LoanId::from_suffix("L"), Some(100), None)
        .await
        .unwrap_err();
    assert!(matches!(refused, ServiceError::Busy(_)), "{refused:?}");
}

/// Accepting an offer in test mode (the sandbox paying account stands in for a bank account)
/// is one change from `offered` to `paid_out`: the acceptance recorded, the advance journal and
/// the loan's payout, and the three events in order; in live mode without a bank account, the
/// loan is accepted alone.
#[tokio::test]
async fn an_acceptance_pays_out_in_the_same_change_or_waits_for_a_bank_account() {
    for mode in [Mode::Test, Mode::Live] {
        let offered = Loan {
            mode,
            ..loan(LoanState::Offered, 0)
        };
        let (loans, asked) = store_of(offered.clone(), Changed::Changed);
        let mut forms = MockBoardingStore::new();
        forms.expect_payout_account().returning(|_, _| Ok(None));
        let service = service_over(NOON - Duration::hours(1), loans, forms);
        let who = Principal {
            scope: crate::scope::Scope::new(PlatformId::from_suffix("P"), mode),
            ..owner()
        };
        let consent = Consent {
            name: " Ada Lovelace ".into(),
            reference: "signed-terms-7".into(),
        };
        let done = service
            .accept_for_merchant(&who, &offered.id, &consent, "192.0.2.1", None)
            .await
            .unwrap();
        let changes = asked.lock().unwrap().clone();
        assert_eq!(changes.len(), 1, "{mode}: one change");
        let change = &changes[0];
        assert_eq!(change.from, LoanState::Offered);
        let acceptance = done.acceptance.clone().unwrap();
        assert_eq!(
            (acceptance.name.as_str(), acceptance.address.as_str()),
            ("Ada Lovelace", "192.0.2.1")
        );
        let events: Vec<&str> = change
            .events
            .iter()
            .map(|e| e.data.event_type().as_str())
            .collect();
        match mode {
            Mode::Test => {
                assert_eq!(done.state, LoanState::PaidOut);
                assert_eq!(events, ["loan.accepted", "loan.paid_out", "payout.created"]);
                let kinds: Vec<_> = change.journals.iter().map(|j| j.heading.kind).collect();
                assert_eq!(
                    kinds,
                    [
                        crate::ledger::JournalKind::LoanAdvance,
                        crate::ledger::JournalKind::Payout
                    ]
                );
                let payout = change.payout.clone().unwrap();
                assert_eq!(payout.method, crate::payout::PayoutMethod::Loan);
                assert_eq!(payout.amount, 100_000);
                assert_eq!(done.payout_id, Some(payout.id));
            }
            Mode::Live => {
                assert_eq!(done.state, LoanState::Accepted, "no bank account yet");
                assert_eq!(events, ["loan.accepted"]);
                assert!(change.journals.is_empty() && change.payout.is_none());
            }
        }
    }
}
