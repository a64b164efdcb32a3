//! Random sequences of sales, auths, captures, partial refunds, voids, declines, settlement
//! runs and payouts (made, handed to the bank, paid, returned, canceled), for merchants in
//! several currencies, written through the stores as the services write them: after every step
//! the books check whole, each balance is what a model of the posting, settlement and payout
//! rules says, and what each merchant was paid plus what it holds is its captured net less its
//! refunds (issue 41). With loans (issue 42): a merchant is lent an advance, paid out as a
//! payout of method `loan`, repaid early from its available balance, and each settlement run
//! withholds exactly `min(floor(net × rate / 10,000), outstanding)` of the net it settled; the
//! total withheld never passes the advance and fee, and a loan is repaid exactly when nothing
//! is outstanding.

use holdfast_domain::ids::{LoanId, LoanRepaymentId, SettlementRunId};
use holdfast_domain::ledger::{SettlementDelay, SettlementRun, journal_for};
use holdfast_domain::loan::{Loan, LoanRepayment, LoanState, LoanTerms, RepaymentKind};
use holdfast_domain::payment::follow_up::{OriginalOutcome, Reservation};
use holdfast_domain::payout::{Payout, PayoutState};
use holdfast_domain::ports::{Balance, Changed, LoanChange, Made, Offered};
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
    /// Lends merchant `merchant` an advance (and a fee of `fee_percent` of it, withheld at
    /// `bps`), paid out at once, unless it has a loan being repaid.
    Lend {
        merchant: usize,
        advance: i64,
        fee_percent: i64,
        bps: u32,
    },
    /// Repays `percent` of what the merchant's loan has outstanding early, from its available
    /// balance: taken if that covers it, refused otherwise.
    Repay { merchant: usize, percent: i64 },
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
        2 => (0..3_usize, 1..500_000_i64, 0..=100_i64, 1..=10_000_u32)
            .prop_map(|(merchant, advance, fee_percent, bps)| Step::Lend { merchant, advance, fee_percent, bps }),
        1 => (0..3_usize, 1..=100_i64).prop_map(|(merchant, percent)| Step::Repay { merchant, percent }),
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
    /// Per merchant: its latest loan, as the model says it is.
    loans: Vec<Option<Loan>>,
    /// Per merchant: advances lent, and what was repaid of them (withheld or early).
    lent: Vec<i64>,
    repaid: Vec<i64>,
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
                    .settle(&run, super::settlement::decisions(&run))
                    .await
                    .unwrap();
                let now = self.now;
                let mut nets = vec![0_i64; self.merchants.len()];
                for c in &mut self.charges {
                    if !c.settled && c.delay.cutoff(now) >= c.posted_on {
                        c.settled = true;
                        nets[c.merchant] += c.net;
                    }
                }
                // Each loan being repaid withholds the rule's share of the net this run settled,
                // written out here (not the domain's `Loan::withholding`), so a fault in the
                // rule shows: floor(net × bps / 10,000), at most what is outstanding.
                for (i, net) in nets.into_iter().enumerate() {
                    let Some(loan) = self.loans[i].as_mut().filter(|l| l.state.is_repaying())
                    else {
                        continue;
                    };
                    let outstanding = loan.terms.advance + loan.terms.fee - loan.repaid;
                    let share = i64::try_from(
                        i128::from(net.max(0)) * i128::from(loan.terms.withhold_bps) / 10_000,
                    )
                    .unwrap();
                    let withheld = share.min(outstanding);
                    loan.repaid += withheld;
                    if loan.repaid == loan.terms.advance + loan.terms.fee {
                        loan.state = LoanState::Repaid;
                    }
                    self.repaid[i] += withheld;
                }
            }
            Step::Lend {
                merchant,
                advance,
                fee_percent,
                bps,
            } => self.lend(merchant, advance, fee_percent, bps).await,
            Step::Repay { merchant, percent } => self.repay_early(merchant, percent).await,
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
            settled - self.refunded[i] - in_transit - paid + self.lent[i] - self.repaid[i],
            in_transit,
            paid,
        )
    }

    /// Lends `merchant` an advance as the service does: offered, accepted, then its advance
    /// journal and its payout (method `loan`) in one change.
    async fn lend(&mut self, merchant: usize, advance: i64, fee_percent: i64, bps: u32) {
        if self.loans[merchant]
            .as_ref()
            .is_some_and(|l| !l.state.is_final())
        {
            return;
        }
        let m = &self.merchants[merchant];
        let terms = LoanTerms::new(advance, advance * fee_percent / 100, bps, None).unwrap();
        let offered = Loan {
            id: LoanId::from_suffix(&CountingIds.next_id()),
            platform_id: m.platform_id.clone(),
            mode: m.mode,
            merchant_id: m.id.clone(),
            currency: m.details.currency,
            state: LoanState::Offered,
            terms,
            repaid: 0,
            offer_expires_on: self.now + Duration::days(30),
            link_hash: None,
            acceptance: None,
            payout_id: None,
            paid_out_on: None,
            created_on: self.now,
            updated_on: self.now,
        };
        let event = loan_event(&offered);
        let answer = self.stores.loans.offer_loan(&offered, &event, None).await;
        assert_eq!(answer.unwrap(), Offered::Offered);
        // Accepted and paid out in one change, as the service writes an acceptance.
        let accepted = Loan {
            state: LoanState::Accepted,
            ..offered.clone()
        };
        let mut payout = super::payouts::payout(m, advance, self.now);
        payout.method = holdfast_domain::payout::PayoutMethod::Loan;
        let journals = vec![
            accepted.advance_journal(self.now).unwrap(),
            payout
                .journal_for(None, PayoutState::Pending, self.now)
                .unwrap(),
        ];
        let paid_out = Loan {
            state: LoanState::PaidOut,
            payout_id: Some(payout.id.clone()),
            paid_out_on: Some(self.now),
            ..accepted.clone()
        };
        let mut change = change_of(&offered, paid_out.clone(), journals);
        change.payout = Some(payout.clone());
        self.change(change).await;
        self.payouts.push(payout);
        self.lent[merchant] += advance;
        self.loans[merchant] = Some(paid_out);
    }

    /// Repays `percent` of what the merchant's loan has outstanding, early.
    async fn repay_early(&mut self, merchant: usize, percent: i64) {
        let Some(loan) = self.loans[merchant]
            .clone()
            .filter(|l| l.state.is_repaying())
        else {
            return;
        };
        // Read back: a settlement may have moved it since the model last wrote it.
        let stored = self
            .stores
            .loans
            .get_loan(&self.scope, &loan.id)
            .await
            .unwrap()
            .unwrap();
        let amount = (stored.outstanding() * percent / 100).max(1);
        let after = stored.after_repaying(amount, self.now);
        let repayment = LoanRepayment {
            id: LoanRepaymentId::from_suffix(&CountingIds.next_id()),
            loan_id: stored.id.clone(),
            merchant_id: stored.merchant_id.clone(),
            kind: RepaymentKind::Early,
            amount,
            currency: stored.currency,
            settlement_run_id: None,
            outstanding: after.outstanding(),
            created_on: self.now,
        };
        let journal = stored.repayment_journal(&repayment).unwrap();
        let mut change = change_of(&stored, after.clone(), vec![journal]);
        change.repayment = Some(repayment);
        let (available, ..) = self.model(merchant);
        let answer = self.stores.loans.change_loan(&change, None).await.unwrap();
        if amount <= available {
            assert_eq!(answer, Changed::Changed, "{amount} of {available}");
            self.repaid[merchant] += amount;
            self.loans[merchant] = Some(after);
        } else {
            assert_eq!(
                answer,
                Changed::Short { available },
                "{amount} of {available}"
            );
        }
    }

    async fn change(&self, change: LoanChange) {
        let answer = self.stores.loans.change_loan(&change, None).await.unwrap();
        assert_eq!(answer, Changed::Changed);
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
            // A loan's payout cannot be canceled (the service refuses it).
            (PayoutState::Pending, _)
                if self.payouts[i].method == holdfast_domain::payout::PayoutMethod::Loan =>
            {
                vec![]
            }
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
            // What it was paid out plus what it holds is its captured net less its refunds,
            // and what it was lent less what it repaid.
            let holds = read.available + read.pending + read.in_transit;
            if holds + paid != captured_net - self.refunded[i] + self.lent[i] - self.repaid[i] {
                return Err(format!("merchant {i} holds {holds} and was paid {paid}"));
            }
            if let Some(model) = &self.loans[i] {
                let stored = self
                    .stores
                    .loans
                    .get_loan(&self.scope, &model.id)
                    .await
                    .unwrap()
                    .unwrap();
                if (stored.repaid, stored.state) != (model.repaid, model.state) {
                    return Err(format!(
                        "loan of merchant {i}: stored {} {}, the model says {} {}",
                        stored.repaid, stored.state, model.repaid, model.state
                    ));
                }
                if stored.repaid > stored.terms.total() {
                    return Err(format!("loan of merchant {i} repaid past its total"));
                }
                if (stored.state == LoanState::Repaid) != (stored.outstanding() == 0) {
                    return Err(format!(
                        "loan of merchant {i} is {} with {} outstanding",
                        stored.state,
                        stored.outstanding()
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The change from `loan` to `after`, posting `journals`, as the service writes it.
fn change_of(
    loan: &Loan,
    after: Loan,
    journals: Vec<holdfast_domain::ledger::Journal>,
) -> LoanChange {
    LoanChange {
        events: vec![loan_event(&after)],
        loan: after,
        from: loan.state,
        read_on: loan.updated_on,
        journals,
        payout: None,
        repayment: None,
    }
}

fn loan_event(loan: &Loan) -> Event {
    Event {
        id: event_id(),
        platform_id: loan.platform_id.clone(),
        mode: loan.mode,
        created_on: loan.updated_on,
        data: EventData::Loan(Box::new(holdfast_domain::loan::LoanNews {
            event: holdfast_domain::loan::LoanEvent::of_move(loan.state, loan.state),
            loan: loan.clone(),
        })),
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
        loans: vec![None, None, None],
        lent: vec![0; 3],
        repaid: vec![0; 3],
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
