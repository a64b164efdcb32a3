//! Payouts: made only from what is available, one at a time; each move written once, from the
//! state it leaves, with its journal and event; lists scoped and filtered; the books whole
//! after every step.

use holdfast_domain::ids::PayoutId;
use holdfast_domain::payout::{Payout, PayoutFailure, PayoutMethod, PayoutState, ReturnCode};
use holdfast_domain::ports::{Balance, Made, PayoutFilter, PayoutMove};
use time::Duration;

use super::settlement::{charged, run};
use super::*;

/// A pending payout of `amount` for `m`, made at `at`.
pub(super) fn payout(m: &Merchant, amount: i64, at: OffsetDateTime) -> Payout {
    Payout {
        id: PayoutId::from_suffix(&CountingIds.next_id()),
        platform_id: m.platform_id.clone(),
        mode: m.mode,
        merchant_id: m.id.clone(),
        currency: m.details.currency,
        amount,
        state: PayoutState::Pending,
        method: PayoutMethod::Manual,
        bank_last4: "6789".into(),
        bank_form: None,
        trace_number: None,
        failure: None,
        created_on: at,
        updated_on: at,
    }
}

fn payout_event(p: &Payout, data: fn(Box<Payout>) -> EventData) -> Event {
    Event {
        id: event_id(),
        platform_id: p.platform_id.clone(),
        mode: p.mode,
        created_on: p.updated_on,
        data: data(Box::new(p.clone())),
    }
}

pub(super) async fn make(stores: &Stores, p: &Payout) -> Made {
    let journal = p
        .journal_for(None, PayoutState::Pending, p.created_on)
        .unwrap();
    let event = payout_event(p, EventData::PayoutCreated);
    stores
        .payouts
        .make_payout(p, &journal, &event, None)
        .await
        .unwrap()
}

/// `p` moved to `to` at `at` (with `code`, for a failure), as the service moves it.
pub(super) fn moved(
    p: &Payout,
    to: PayoutState,
    code: Option<&str>,
    at: OffsetDateTime,
) -> PayoutMove {
    let journal = p.journal_for(Some(p.state), to, at);
    let after = Payout {
        state: to,
        failure: code.map(|c| PayoutFailure::new(ReturnCode::parse("code", c).unwrap())),
        updated_on: at,
        ..p.clone()
    };
    let event = match to {
        PayoutState::Paid => Some(payout_event(&after, EventData::PayoutPaid)),
        PayoutState::Failed => Some(payout_event(&after, EventData::PayoutFailed)),
        PayoutState::Canceled => Some(payout_event(&after, EventData::PayoutCanceled)),
        _ => None,
    };
    PayoutMove {
        payout: after,
        from: p.state,
        journal,
        event,
    }
}

pub(super) async fn balance(stores: &Stores, m: &Merchant) -> (i64, i64, i64) {
    let Balance {
        available,
        pending,
        in_transit,
        ..
    } = stores
        .ledger
        .balances(&Scope::new(m.platform_id.clone(), m.mode), &m.id)
        .await
        .unwrap()[0];
    (available, pending, in_transit)
}

pub(super) async fn books_whole(stores: &Stores, at: OffsetDateTime) {
    assert_eq!(
        stores.ledger.check(at).await.unwrap().problems,
        Vec::<String>::new(),
        "at {at}"
    );
}

/// A payout takes only what is available, as the store reads it under its lock: one of more is
/// refused with what there is, and writes nothing; one of all of it leaves nothing for the next.
pub async fn a_payout_takes_only_what_is_available(db: Database) {
    let stores = db.stores();
    let Shop { p: _, m, plan } = shop(&stores).await;
    let day = Duration::days(1);
    charged(&stores, &m, &plan, 1000, T0).await;
    charged(&stores, &m, &plan, 2000, T0 + day).await;
    // Nothing is available before settlement: a payout of any amount is short.
    assert_eq!(
        make(&stores, &payout(&m, 1, T0)).await,
        Made::Short { available: 0 }
    );
    run(&stores, T0 + 2 * day).await;
    assert_eq!(balance(&stores, &m).await, (970, 1970, 0));
    let too_much = payout(&m, 971, T0 + 2 * day);
    assert_eq!(
        make(&stores, &too_much).await,
        Made::Short { available: 970 }
    );
    assert_eq!(
        stores
            .payouts
            .get_payout(&Scope::new(m.platform_id.clone(), m.mode), &too_much.id)
            .await
            .unwrap(),
        None,
        "nothing written"
    );
    let all = payout(&m, 970, T0 + 2 * day);
    assert_eq!(make(&stores, &all).await, Made::Made);
    assert_eq!(balance(&stores, &m).await, (0, 1970, 970));
    assert_eq!(
        make(&stores, &payout(&m, 1, T0 + 2 * day)).await,
        Made::Short { available: 0 }
    );
    assert_eq!(
        stores
            .payouts
            .get_payout(&Scope::new(m.platform_id.clone(), m.mode), &all.id)
            .await
            .unwrap(),
        Some(all.clone())
    );
    let created: Vec<_> = stores
        .events
        .list_events(&Scope::new(m.platform_id.clone(), m.mode))
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event_type == "payout.created")
        .collect();
    assert_eq!(created.len(), 1);
    let data: serde_json::Value = serde_json::from_str(&created[0].data).unwrap();
    assert_eq!(data["id"], all.id.as_str());
    assert_eq!(data["amount"], 970);
    assert_eq!(data["state"], "pending");
    assert!(data.get("bankForm").is_none(), "the form stays inside");
    books_whole(&stores, T0 + 2 * day).await;
}

/// Each move is written once, from the state it leaves, with what the payout's table posts:
/// handed to the bank and paid (in transit back to zero), a return after payment (available
/// again), a cancel while pending; a stale move writes nothing. The books verify at each step.
pub async fn each_payout_move_is_written_once(db: Database) {
    let stores = db.stores();
    let Shop { p: _, m, plan } = shop(&stores).await;
    let day = Duration::days(1);
    charged(&stores, &m, &plan, 3000, T0).await;
    run(&stores, T0 + 2 * day).await;
    let at = T0 + 2 * day;
    let first = payout(&m, 1000, at);
    let second = payout(&m, 500, at);
    assert_eq!(make(&stores, &first).await, Made::Made);
    assert_eq!(make(&stores, &second).await, Made::Made);
    assert_eq!(balance(&stores, &m).await, (1470, 0, 1500));

    let handed = moved(&first, PayoutState::InTransit, None, at);
    assert!(stores.payouts.move_payout(&handed, None).await.unwrap());
    assert!(
        !stores.payouts.move_payout(&handed, None).await.unwrap(),
        "no longer pending"
    );
    let paid = moved(&handed.payout, PayoutState::Paid, None, at + day);
    assert!(stores.payouts.move_payout(&paid, None).await.unwrap());
    assert_eq!(balance(&stores, &m).await, (1470, 0, 500));
    books_whole(&stores, at + day).await;

    let canceled = moved(&second, PayoutState::Canceled, None, at + day);
    assert!(stores.payouts.move_payout(&canceled, None).await.unwrap());
    assert_eq!(balance(&stores, &m).await, (1970, 0, 0));
    let late = moved(&second, PayoutState::InTransit, None, at + day);
    assert!(
        !stores.payouts.move_payout(&late, None).await.unwrap(),
        "a canceled payout is never handed to the bank"
    );
    books_whole(&stores, at + day).await;

    // An ACH return days after payment: the money is available again, the code kept.
    let returned = moved(&paid.payout, PayoutState::Failed, Some("R03"), at + 3 * day);
    assert!(stores.payouts.move_payout(&returned, None).await.unwrap());
    assert_eq!(balance(&stores, &m).await, (2970, 0, 0));
    let after_return = stores
        .payouts
        .get_payout(&Scope::new(m.platform_id.clone(), m.mode), &first.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after_return.state, PayoutState::Failed);
    assert_eq!(
        after_return.failure.map(|f| f.code.as_code()).as_deref(),
        Some("R03")
    );
    books_whole(&stores, at + 3 * day).await;

    let kinds: Vec<String> = stores
        .events
        .list_events(&Scope::new(m.platform_id.clone(), m.mode))
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_type)
        .filter(|t| t.starts_with("payout."))
        .collect();
    assert_eq!(
        kinds,
        [
            "payout.created",
            "payout.created",
            "payout.paid",
            "payout.canceled",
            "payout.failed"
        ]
    );
}

/// The id of `p`, as lists are compared.
pub(super) fn id(p: &Payout) -> String {
    p.id.to_string()
}

pub(super) fn ids(payouts: &[Payout]) -> Vec<String> {
    payouts.iter().map(id).collect()
}

/// Three payouts made a second apart, `a1` and `a2` of `m`, `b1` of another merchant, with
/// `a1` handed to the bank; and the time the first was made.
async fn three_payouts(
    stores: &Stores,
    m: &Merchant,
    plan: &Plan,
    p: &Principal,
) -> ([Payout; 3], OffsetDateTime) {
    let other = stored_merchant(stores, p, "Other").await;
    let day = Duration::days(1);
    for shop in [m, &other] {
        charged(stores, shop, plan, 5000, T0).await;
    }
    run(stores, T0 + 2 * day).await;
    let at = T0 + 2 * day;
    let a1 = payout(m, 100, at);
    let a2 = payout(m, 200, at + Duration::seconds(1));
    let b1 = payout(&other, 300, at + Duration::seconds(2));
    for made in [&a1, &a2, &b1] {
        assert_eq!(make(stores, made).await, Made::Made);
    }
    let handed = moved(&a1, PayoutState::InTransit, None, at);
    assert!(stores.payouts.move_payout(&handed, None).await.unwrap());
    ([a1, a2, b1], at)
}

/// Lists are of the scope, newest first, filtered by merchant and state, paged; one payout is
/// read in its own scope only.
pub async fn payouts_are_listed_by_scope_merchant_and_state(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let ([a1, a2, b1], _) = three_payouts(&stores, &m, &plan, &p).await;
    let all = PageRequest {
        limit: 10,
        starting_after: None,
        ending_before: None,
    };
    let list = async |scope: &Scope, filter: PayoutFilter, page: &PageRequest| {
        let found = stores
            .payouts
            .list_payouts(scope, &filter, page)
            .await
            .unwrap();
        (ids(&found.data), found.has_more)
    };
    let mine = |state| PayoutFilter {
        merchant: Some(m.id.clone()),
        state,
    };
    assert_eq!(
        list(&p.scope, PayoutFilter::default(), &all).await,
        (vec![id(&b1), id(&a2), id(&a1)], false)
    );
    assert_eq!(
        list(&p.scope, mine(None), &all).await,
        (vec![id(&a2), id(&a1)], false)
    );
    assert_eq!(
        list(&p.scope, mine(Some(PayoutState::Pending)), &all).await,
        (vec![id(&a2)], false)
    );
    let second_page = PageRequest {
        limit: 1,
        starting_after: Some(id(&b1)),
        ending_before: None,
    };
    assert_eq!(
        list(&p.scope, PayoutFilter::default(), &second_page).await,
        (vec![id(&a2)], true)
    );
    let live = Scope::new(p.scope.platform.clone(), Mode::Live);
    assert_eq!(
        stores.payouts.get_payout(&live, &a1.id).await.unwrap(),
        None
    );
    assert_eq!(
        list(&live, PayoutFilter::default(), &all).await,
        (Vec::new(), false)
    );
}

/// The rails read a mode's payouts in one state, made by a time, oldest first, in batches after
/// the last one read.
pub async fn the_rails_read_a_modes_payouts_oldest_first(db: Database) {
    let stores = db.stores();
    let Shop { p, m, plan } = shop(&stores).await;
    let ([a1, a2, b1], at) = three_payouts(&stores, &m, &plan, &p).await;
    let to_hand = async |mode, state, by| {
        ids(&stores
            .payouts
            .payouts_to_hand_over(mode, state, by, None, 10)
            .await
            .unwrap())
    };
    let day = Duration::days(1);
    assert_eq!(
        to_hand(Mode::Test, PayoutState::Pending, at + day).await,
        [id(&a2), id(&b1)]
    );
    assert_eq!(
        to_hand(Mode::Test, PayoutState::Pending, at + Duration::seconds(1)).await,
        [id(&a2)],
        "made later than asked"
    );
    assert_eq!(
        to_hand(Mode::Test, PayoutState::InTransit, at + day).await,
        [id(&a1)]
    );
    assert!(
        to_hand(Mode::Live, PayoutState::Pending, at + day)
            .await
            .is_empty()
    );
    let after = |p: &Payout| {
        let stores = &stores;
        let after = Some((p.created_on, p.id.clone()));
        async move {
            ids(&stores
                .payouts
                .payouts_to_hand_over(Mode::Test, PayoutState::Pending, at + day, after, 1)
                .await
                .unwrap())
        }
    };
    assert_eq!(after(&a2).await, [id(&b1)], "the next batch");
    assert!(after(&b1).await.is_empty(), "the last batch");
    let twin = Payout {
        id: PayoutId::from_suffix(&CountingIds.next_id()),
        ..a2.clone()
    };
    assert_eq!(make(&stores, &twin).await, Made::Made);
    assert_eq!(
        after(&a2).await,
        [id(&twin)],
        "one made at the same time, with a later id"
    );
}

/// Each scheduled payout's event, as the service makes it.
struct Announced;

impl holdfast_domain::ports::AnnouncePayout for Announced {
    fn event_for(&self, payout: &Payout) -> Event {
        payout_event(payout, EventData::PayoutCreated)
    }
}

pub(super) async fn scheduled_run(stores: &Stores, now: OffsetDateTime) -> u64 {
    let run = holdfast_domain::ports::ScheduledRun {
        now,
        id_prefix: CountingIds.next_id()[4..].to_owned(),
    };
    stores
        .payouts
        .pay_out_scheduled(&run, std::sync::Arc::new(Announced))
        .await
        .unwrap()
}

/// A new platform "Live", its principal in live mode, and a live plan like `plan`.
pub(super) async fn live_platform(stores: &Stores, plan: &Plan) -> (Principal, Plan) {
    let live = principal(&new_platform(stores, "Live").await, Mode::Live);
    let live_plan = Plan {
        id: PlanId::from_suffix(&CountingIds.next_id()),
        platform_id: live.scope.platform.clone(),
        mode: Mode::Live,
        ..plan.clone()
    };
    stores.routing.insert_plan(&live_plan, None).await.unwrap();
    (live, live_plan)
}

/// The merchants of the scheduled run's case, each with 970 available on Tuesday `T0 + 2d`
/// but `empty`: `daily` (of `p`), `weekly` on Wednesdays, `manual`, `above` (a minimum of 971),
/// `empty` (daily, nothing), and `unbanked` (daily, live, no bank account).
struct Scheduled {
    p: Principal,
    plan: Plan,
    daily: Merchant,
    weekly: Merchant,
    manual: Merchant,
    above: Merchant,
    unbanked: Merchant,
}

async fn scheduled(stores: &Stores) -> Scheduled {
    use holdfast_domain::payout::{PayoutInterval, PayoutSchedule};
    use time::Weekday;
    let Shop { p, m: daily, plan } = shop(stores).await;
    let (live, live_plan) = live_platform(stores, &plan).await;
    let weekly = stored_merchant(stores, &p, "Weekly").await;
    let manual = stored_merchant(stores, &p, "Manual").await;
    let above = stored_merchant(stores, &p, "Above").await;
    let empty = stored_merchant(stores, &p, "Empty").await;
    let unbanked = stored_merchant(stores, &live, "Unbanked").await;
    for shop in [&daily, &weekly, &manual, &above] {
        charged(stores, shop, &plan, 1000, T0).await;
    }
    charged(stores, &unbanked, &live_plan, 1000, T0).await;
    run(stores, T0 + Duration::days(2)).await;
    let every =
        |interval, weekday, minimum| PayoutSchedule::new(interval, weekday, minimum).unwrap();
    for (shop, who, set) in [
        (&daily, &p, every(PayoutInterval::Daily, None, 0)),
        (
            &weekly,
            &p,
            every(PayoutInterval::Weekly, Some(Weekday::Wednesday), 0),
        ),
        (&manual, &p, PayoutSchedule::MANUAL),
        (&above, &p, every(PayoutInterval::Daily, None, 971)),
        (&empty, &p, every(PayoutInterval::Daily, None, 0)),
        (&unbanked, &live, every(PayoutInterval::Daily, None, 0)),
    ] {
        stores
            .payouts
            .set_schedule(&who.scope, &shop.id, set, T0, None)
            .await
            .unwrap();
        assert_eq!(
            stores.payouts.schedule(&who.scope, &shop.id).await.unwrap(),
            Some(set)
        );
    }
    Scheduled {
        p,
        plan,
        daily,
        weekly,
        manual,
        above,
        unbanked,
    }
}

/// A run pays out each schedule due on its day, once a day, all that is available if it is at
/// least the minimum; a manual merchant, a weekly one on another day, one below its minimum or
/// with nothing available, and a live one without a bank account are left; each payout posts
/// its journal and announces itself, and the books verify.
pub async fn a_scheduled_run_pays_out_what_each_schedule_says_once_a_day(db: Database) {
    let stores = db.stores();
    let Scheduled {
        p,
        plan,
        daily: m,
        weekly,
        manual,
        above,
        unbanked,
    } = scheduled(&stores).await;
    let day = Duration::days(1);
    let tuesday: OffsetDateTime = T0 + 2 * day;
    assert_eq!(tuesday.weekday(), time::Weekday::Tuesday);
    assert_eq!(
        scheduled_run(&stores, tuesday + Duration::hours(1)).await,
        1
    );
    assert_eq!(balance(&stores, &m).await, (0, 0, 970));
    assert_eq!(
        scheduled_run(&stores, tuesday + Duration::hours(2)).await,
        0,
        "once a day"
    );
    let listed = stores
        .payouts
        .list_payouts(
            &p.scope,
            &PayoutFilter::default(),
            &PageRequest {
                limit: 10,
                starting_after: None,
                ending_before: None,
            },
        )
        .await
        .unwrap()
        .data;
    assert_eq!(listed.len(), 1);
    let made = &listed[0];
    assert_eq!(
        (
            made.merchant_id.clone(),
            made.amount,
            made.method,
            made.state,
            made.bank_last4.as_str()
        ),
        (
            m.id.clone(),
            970,
            PayoutMethod::Scheduled,
            PayoutState::Pending,
            "6789"
        )
    );
    assert!(made.id.as_str().starts_with("po_"));
    books_whole(&stores, tuesday + Duration::hours(2)).await;

    // Wednesday: the weekly merchant's day; the daily one is paid what settled since.
    charged(&stores, &m, &plan, 500, tuesday).await;
    run(&stores, tuesday + 2 * day).await;
    assert_eq!(scheduled_run(&stores, tuesday + day).await, 2);
    assert_eq!(balance(&stores, &weekly).await, (0, 0, 970));
    assert_eq!(balance(&stores, &m).await, (0, 0, 970 + 470));
    assert_eq!(
        balance(&stores, &above).await,
        (970, 0, 0),
        "below its minimum"
    );
    assert_eq!(balance(&stores, &manual).await, (970, 0, 0));
    assert_eq!(
        balance(&stores, &unbanked).await,
        (970, 0, 0),
        "no bank account"
    );
    let created = stores
        .events
        .list_events(&p.scope)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.event_type == "payout.created")
        .count();
    assert_eq!(created, 3);
    books_whole(&stores, tuesday + day).await;
}
