//! Random sequences of sales, auths, captures, partial refunds, voids, declines, settlement
//! runs and payouts (made, handed to the bank, paid, returned, canceled), for merchants in
//! several currencies, written through the stores as the services write them: after every step
//! the books check whole, each balance is what a model of the posting, settlement and payout
//! rules says, and what each merchant was paid plus what it holds is its captured net less its
//! refunds (issue 41).

use std::sync::Arc;

use holdfast_domain::ids::SettlementRunId;
use holdfast_domain::ledger::{SettlementDelay, SettlementRun, journal_for};
use holdfast_domain::payment::follow_up::{OriginalOutcome, Reservation};
use holdfast_domain::payout::{Payout, PayoutState};
use holdfast_domain::ports::{Balance, Made};
use proptest::prelude::*;
use time::Duration;

use super::*;

/// One step of a sequence; indexes pick among what exists (modulo its count).
#[derive(Debug, Clone)]
pub enum Step {
    /// A sale or an auth of `amount` for merchant `merchant` on plan `plan`; declined unless
    /// `approved`.
    Pay {
        merchant: usize,
        plan: usize,
        sale: bool,
        amount: i64,
        approved: bool,
    },
    /// Captures `percent` of an authorized auth.
    Capture { auth: usize, percent: i64 },
    /// Voids an authorized auth.
    Void { auth: usize },
    /// Refunds `percent` of what is left of a settled sale or capture.
    Refund { charge: usize, percent: i64 },
    /// `hours` pass, then a settlement run.
    Settle { hours: i64 },
    /// A payout of `percent` of what the model says is available (at least 1): made if that
    /// covers it, refused otherwise.
    PayOut { merchant: usize, percent: i64 },
    /// A payout's next move: by `how`, handed over and paid, handed over and returned,
    /// canceled, or returned after it was paid (whichever its state allows).
    Bank { payout: usize, how: u8 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0..3_usize, 0..2_usize, any::<bool>(), 1..200_000_i64, prop::bool::weighted(0.85))
            .prop_map(|(merchant, plan, sale, amount, approved)| Step::Pay {
                merchant, plan, sale, amount, approved
            }),
        2 => (any::<usize>(), 1..=100_i64).prop_map(|(auth, percent)| Step::Capture { auth, percent }),
        1 => any::<usize>().prop_map(|auth| Step::Void { auth }),
        2 => (any::<usize>(), 1..=100_i64).prop_map(|(charge, percent)| Step::Refund { charge, percent }),
        2 => (0..80_i64).prop_map(|hours| Step::Settle { hours }),
        3 => (0..3_usize, 0..=110_i64).prop_map(|(merchant, percent)| Step::PayOut { merchant, percent }),
        3 => (any::<usize>(), 0..4_u8).prop_map(|(payout, how)| Step::Bank { payout, how }),
    ]
}

/// A charge as the model keeps it: whose, its net, when posted, its plan's delay, settled yet.
struct Charge {
    txn: Transaction,
    merchant: usize,
    net: i64,
    posted_on: OffsetDateTime,
    delay: SettlementDelay,
    settled: bool,
    refundable: i64,
}

/// The world of one sequence: its stores, merchants, plans, what was paid, and the clock.
struct World<'a> {
    stores: &'a Stores,
    scope: Scope,
    merchants: Vec<Merchant>,
    plans: Vec<Plan>,
    auths: Vec<Transaction>,
    charges: Vec<Charge>,
    /// Per merchant: what refunds took from available.
    refunded: Vec<i64>,
    /// Every payout made, as it now is.
    payouts: Vec<Payout>,
    now: OffsetDateTime,
}

impl World<'_> {
    async fn complete(
        &self,
        done: &Transaction,
        follows: Option<&Transaction>,
        original: Option<(TxnId, OriginalOutcome)>,
    ) {
        let journal = journal_for(done, follows, self.now);
        self.stores
            .transactions
            .complete_transaction_with_event(done, original, &event_for(done), None, None, journal)
            .await
            .unwrap();
    }

    fn follow_up(of: &Transaction, kind: TxnType, amount: i64) -> Transaction {
        Transaction {
            id: TxnId::from_suffix(&CountingIds.next_id()),
            kind,
            amount,
            fee: 0,
            state: TxnState::Pending,
            parent_id: Some(of.id.clone()),
            refunded_amount: 0,
            authorization: Authorization {
                approved_amount: amount,
                ..of.authorization.clone()
            },
            ..of.clone()
        }
    }

    async fn apply(&mut self, step: &Step) {
        match *step {
            Step::Pay {
                merchant,
                plan,
                sale,
                amount,
                approved,
            } => {
                let (m, plan) = (&self.merchants[merchant], &self.plans[plan]);
                let kind = if sale { TxnType::Sale } else { TxnType::Auth };
                let mut paid = txn(m, plan, kind, TxnState::Pending, amount);
                write(self.stores, &paid).await;
                paid.fee = if approved {
                    plan.fee.charged_on(kind, amount)
                } else {
                    0
                };
                paid.state = match (approved, sale) {
                    (false, _) => TxnState::Declined,
                    (true, true) => TxnState::Settled,
                    (true, false) => TxnState::Authorized,
                };
                self.complete(&paid, None, None).await;
                if paid.state == TxnState::Authorized {
                    self.auths.push(paid);
                } else if paid.state == TxnState::Settled {
                    self.charge(paid, None, merchant, plan.settlement_delay);
                }
            }
            Step::Capture { auth, percent } => self.capture(auth, percent).await,
            Step::Void { auth } => {
                let Some(i) = pick(auth, self.auths.len()) else {
                    return;
                };
                let auth = self.auths.remove(i);
                let mut void = Self::follow_up(&auth, TxnType::Void, auth.amount);
                assert!(self.reserve(&auth, Reservation::CloseAuth, &void).await);
                void.state = TxnState::Settled;
                let closed = OriginalOutcome::Closed(TxnState::Voided);
                self.complete(&void, Some(&auth), Some((auth.id.clone(), closed)))
                    .await;
            }
            Step::Refund { charge, percent } => self.refund(charge, percent).await,
            Step::PayOut { merchant, percent } => self.pay_out(merchant, percent).await,
            Step::Bank { payout, how } => self.bank(payout, how).await,
            Step::Settle { hours } => {
                self.now += Duration::hours(hours);
                let run = SettlementRun {
                    id: SettlementRunId::from_suffix(&CountingIds.next_id()),
                    now: self.now,
                    from_start: false,
                };
                self.stores
                    .ledger
                    .settle(&run, Arc::new(super::settlement::Events))
                    .await
                    .unwrap();
                let now = self.now;
                for c in &mut self.charges {
                    c.settled |= c.delay.cutoff(now) >= c.posted_on;
                }
            }
        }
    }

    /// What the model says merchant `i` has available, and in transit, and was paid.
    fn model(&self, i: usize) -> (i64, i64, i64) {
        let mine = self.charges.iter().filter(|c| c.merchant == i);
        let settled: i64 = mine.filter(|c| c.settled).map(|c| c.net).sum();
        let id = &self.merchants[i].id;
        let sum = |states: &[PayoutState]| -> i64 {
            self.payouts
                .iter()
                .filter(|p| &p.merchant_id == id && states.contains(&p.state))
                .map(|p| p.amount)
                .sum()
        };
        let in_transit = sum(&[PayoutState::Pending, PayoutState::InTransit]);
        let paid = sum(&[PayoutState::Paid]);
        (
            settled - self.refunded[i] - in_transit - paid,
            in_transit,
            paid,
        )
    }

    async fn pay_out(&mut self, merchant: usize, percent: i64) {
        let (available, ..) = self.model(merchant);
        let amount = (available * percent / 100).max(1);
        let made = super::payouts::payout(&self.merchants[merchant], amount, self.now);
        let answer = super::payouts::make(self.stores, &made).await;
        if amount <= available {
            assert_eq!(answer, Made::Made, "{amount} of {available}");
            self.payouts.push(made);
        } else {
            assert_eq!(answer, Made::Short { available }, "{amount} of {available}");
        }
    }

    async fn bank(&mut self, payout: usize, how: u8) {
        let Some(i) = pick(payout, self.payouts.len()) else {
            return;
        };
        let path: Vec<(PayoutState, Option<&str>)> = match (self.payouts[i].state, how) {
            (PayoutState::Pending, 0) => {
                vec![(PayoutState::InTransit, None), (PayoutState::Paid, None)]
            }
            (PayoutState::Pending, 1) => vec![
                (PayoutState::InTransit, None),
                (PayoutState::Failed, Some("R02")),
            ],
            (PayoutState::Pending, _) => vec![(PayoutState::Canceled, None)],
            (PayoutState::InTransit, _) => vec![(PayoutState::Paid, None)],
            (PayoutState::Paid, 3) => vec![(PayoutState::Failed, Some("R16"))],
            _ => vec![],
        };
        for (to, code) in path {
            let change = super::payouts::moved(&self.payouts[i], to, code, self.now);
            assert!(
                self.stores
                    .payouts
                    .move_payout(&change, None)
                    .await
                    .unwrap()
            );
            self.payouts[i] = change.payout;
        }
    }

    async fn capture(&mut self, auth: usize, percent: i64) {
        let Some(i) = pick(auth, self.auths.len()) else {
            return;
        };
        let auth = self.auths.remove(i);
        let amount = (auth.amount * percent / 100).max(1);
        let mut capture = Self::follow_up(&auth, TxnType::Capture, amount);
        assert!(self.reserve(&auth, Reservation::CloseAuth, &capture).await);
        capture.fee = self.plan_of(&auth).fee.charged_on(TxnType::Capture, amount);
        capture.state = TxnState::Settled;
        let closed = OriginalOutcome::Closed(TxnState::Captured);
        self.complete(&capture, Some(&auth), Some((auth.id.clone(), closed)))
            .await;
        let merchant = self.merchant_of(&auth);
        let delay = self.plan_of(&auth).settlement_delay;
        self.charge(capture, Some(&auth), merchant, delay);
    }

    async fn refund(&mut self, charge: usize, percent: i64) {
        let Some(i) = pick(charge, self.charges.len()) else {
            return;
        };
        let amount = self.charges[i].refundable * percent / 100;
        if amount == 0 {
            return;
        }
        let of = self.charges[i].txn.clone();
        let mut refund = Self::follow_up(&of, TxnType::Refund, amount);
        if !self
            .reserve(&of, Reservation::Refund { amount }, &refund)
            .await
        {
            return;
        }
        refund.state = TxnState::Settled;
        let kept = OriginalOutcome::RefundKept;
        self.complete(&refund, None, Some((of.id.clone(), kept)))
            .await;
        self.charges[i].refundable -= amount;
        self.refunded[self.charges[i].merchant] += amount;
    }

    fn charge(
        &mut self,
        txn: Transaction,
        auth: Option<&Transaction>,
        merchant: usize,
        delay: SettlementDelay,
    ) {
        let fees = txn.fee + auth.map_or(0, |a| a.fee);
        self.charges.push(Charge {
            net: txn.authorization.approved_amount - fees,
            refundable: txn.authorization.approved_amount,
            posted_on: self.now,
            txn,
            merchant,
            delay,
            settled: false,
        });
    }

    async fn reserve(
        &self,
        of: &Transaction,
        reservation: Reservation,
        pending: &Transaction,
    ) -> bool {
        self.stores
            .transactions
            .reserve_with_pending(&self.scope, &of.id, reservation, pending)
            .await
            .unwrap()
    }

    fn plan_of(&self, t: &Transaction) -> &Plan {
        self.plans.iter().find(|p| p.id == t.plan.id).unwrap()
    }

    fn merchant_of(&self, t: &Transaction) -> usize {
        self.merchants
            .iter()
            .position(|m| m.id == t.merchant_id)
            .unwrap()
    }

    /// The books are whole, and each merchant's balances are the model's.
    async fn holds(&self) -> Result<(), String> {
        let check = self.stores.ledger.check(self.now).await.unwrap();
        if !check.problems.is_empty() {
            return Err(format!("the books: {:?}", check.problems));
        }
        for (i, m) in self.merchants.iter().enumerate() {
            let mine = self.charges.iter().filter(|c| c.merchant == i);
            let pending: i64 = mine.clone().filter(|c| !c.settled).map(|c| c.net).sum();
            let captured_net: i64 = mine.map(|c| c.net).sum();
            let (available, in_transit, _) = self.model(i);
            // What the stores say it was paid: its paid payouts, as listed.
            let paid: i64 = self
                .stores
                .payouts
                .list_payouts(
                    &self.scope,
                    &holdfast_domain::ports::PayoutFilter {
                        merchant: Some(m.id.clone()),
                        state: Some(PayoutState::Paid),
                    },
                    &PageRequest::new(Some(100), None).unwrap(),
                )
                .await
                .unwrap()
                .data
                .iter()
                .map(|p| p.amount)
                .sum();
            let expected = Balance {
                currency: m.details.currency,
                available,
                pending,
                in_transit,
            };
            let read = self
                .stores
                .ledger
                .balances(&self.scope, &m.id)
                .await
                .unwrap();
            let read = read.first().copied().unwrap_or(Balance {
                currency: m.details.currency,
                available: 0,
                pending: 0,
                in_transit: 0,
            });
            if read != expected {
                return Err(format!(
                    "merchant {i}: read {read:?}, the model says {expected:?}"
                ));
            }
            // What it was paid out plus what it holds is its captured net less its refunds.
            let holds = read.available + read.pending + read.in_transit;
            if holds + paid != captured_net - self.refunded[i] {
                return Err(format!("merchant {i} holds {holds} and was paid {paid}"));
            }
        }
        Ok(())
    }
}

fn pick(any: usize, count: usize) -> Option<usize> {
    (count > 0).then(|| any % count)
}

/// Plays `steps` from `start`, then lets every plan's delay pass and settles; the time it
/// ended at. Runs are global, so each sequence starts after the one before it ended.
async fn play(
    stores: &Stores,
    n: usize,
    start: OffsetDateTime,
    steps: &[Step],
) -> Result<OffsetDateTime, String> {
    let created = new_platform(stores, &format!("Sequence {n}")).await;
    let p = principal(&created, Mode::Test);
    let mut merchants = Vec::new();
    for code in ["USD", "EUR", "JPY"] {
        let mut m = merchant(&p, code);
        m.details.currency = Currency::parse(code).unwrap();
        stores
            .merchants
            .insert_merchant_with_event(&m, &event_id(), None)
            .await
            .unwrap();
        merchants.push(m);
    }
    let default = stored_default_plan(stores, &p.scope).await.unwrap();
    let at_once = Plan {
        id: PlanId::from_suffix(&CountingIds.next_id()),
        name: "At once".into(),
        is_default: false,
        settlement_delay: SettlementDelay::new("days", 0).unwrap(),
        ..default.clone()
    };
    stores.routing.insert_plan(&at_once, None).await.unwrap();
    let mut world = World {
        stores,
        scope: p.scope.clone(),
        merchants,
        plans: vec![default, at_once],
        auths: Vec::new(),
        charges: Vec::new(),
        refunded: vec![0; 3],
        payouts: Vec::new(),
        now: start,
    };
    // Then every plan's delay passes, and each merchant is paid out, paid, and one paid payout
    // is returned: every sequence ends with payouts in each state.
    for (i, step) in steps.iter().enumerate() {
        world.apply(step).await;
        world
            .holds()
            .await
            .map_err(|e| format!("after step {i} ({step:?}): {e}"))?;
    }
    // Then every plan's delay passes; each merchant is paid out and paid, and the last of those
    // payouts is returned after it was paid: every sequence ends with payouts in those states.
    world
        .apply(&Step::Settle {
            hours: 24 * i64::from(SettlementDelay::MAX_DAYS) + 1,
        })
        .await;
    let before = world.payouts.len();
    for merchant in 0..3 {
        world
            .apply(&Step::PayOut {
                merchant,
                percent: 60,
            })
            .await;
    }
    let made = world.payouts.len();
    for payout in before..made {
        world.apply(&Step::Bank { payout, how: 0 }).await;
    }
    if made > before {
        world
            .apply(&Step::Bank {
                payout: made - 1,
                how: 3,
            })
            .await;
    }
    world
        .holds()
        .await
        .map_err(|e| format!("at the end: {e}"))?;
    Ok(world.now)
}

/// The property, over `cases` random sequences of up to 30 steps, each on a platform of its
/// own in `db`.
pub fn random_sequences_keep_the_books(
    runtime: &tokio::runtime::Runtime,
    db: &Database,
    cases: u32,
) {
    let stores = db.stores();
    let n = std::sync::atomic::AtomicUsize::new(0);
    let clock = std::sync::Mutex::new(T0);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(steps in prop::collection::vec(step(), 1..30))| {
        let case = n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let start = *clock.lock().unwrap() + Duration::days(1);
        let played = runtime.block_on(play(&stores, case, start, &steps));
        prop_assert!(played.is_ok(), "{}", played.clone().unwrap_err());
        *clock.lock().unwrap() = played.unwrap();
    });
}
