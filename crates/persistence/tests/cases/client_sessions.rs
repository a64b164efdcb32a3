//! Client sessions: read back as saved, scoped, and closed once.

use holdfast_domain::ids::ClientSessionId;
use holdfast_domain::payment::client_session::{
    ClientSecret, ClientSession, DEFAULT_LIFETIME, PaymentMethod, SessionStatus,
};

use holdfast_domain::ids::TokenId;
use holdfast_domain::payment::token::{HeldSession, SESSION_HOLD, SessionClose, TakeTerms, Taken};

use super::*;

fn session(p: &Principal, m: &Merchant) -> ClientSession {
    let id = ClientSessionId::from_suffix(&CountingIds.next_id());
    ClientSession {
        secret_hash: ClientSecret::new(&id, "ABCDEFGHIJKLMNOPQRSTUVWXYZ").hash(),
        id,
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        merchant_id: m.id.clone(),
        amount: 2500,
        currency: m.details.currency,
        payment_methods: vec![PaymentMethod::Card, PaymentMethod::GooglePay],
        status: SessionStatus::Open,
        transaction_id: None,
        created_on: T0,
        expires_on: T0 + DEFAULT_LIFETIME,
        closed_on: None,
        held_until: None,
    }
}

/// A session reads back as saved in its platform and mode only; of racing closes one wins,
/// and an expired session cannot be closed.
///
/// The payments below complete it as the payment service does: an approved payment's
/// completion closes the session it holds, in the same write.
pub async fn client_sessions_are_scoped_and_closed_once(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let b = new_platform(&stores, "B").await;
    let p = principal(&a, Mode::Test);
    let m = merchant(&p, "Shop");
    stores
        .merchants
        .insert_merchant_with_event(&m, &event_id(), None)
        .await
        .unwrap();
    let sessions = &stores.client_sessions;
    // The first is held by a payment, which completes it below.
    let first = ClientSession {
        held_until: Some(T0 + SESSION_HOLD),
        ..session(&p, &m)
    };
    let held = HeldSession {
        id: first.id.clone(),
        until: T0 + SESSION_HOLD,
    };
    let (second, late) = (session(&p, &m), session(&p, &m));
    let plan = stored_default_plan(&stores, &p.scope).await.unwrap();
    let approved = |scope: &Scope| Transaction {
        platform_id: scope.platform.clone(),
        mode: scope.mode,
        ..txn(&m, &plan, TxnType::Auth, TxnState::Pending, 2500)
    };
    for s in [&first, &second, &late] {
        sessions.save(s, None).await.unwrap();
    }
    assert_eq!(
        sessions.find(&p.scope, &first.id).await.unwrap(),
        Some(first.clone())
    );
    for other in [
        Scope::new(a.platform.id.clone(), Mode::Live),
        Scope::new(b.platform.id.clone(), Mode::Test),
    ] {
        assert_eq!(sessions.find(&other, &first.id).await.unwrap(), None);
        let closed = sessions.cancel(&other, &first.id, T0).await.unwrap();
        assert_eq!(closed, None, "another scope cannot cancel it");
        let completed = pay_closing(&stores, approved(&other), &held).await;
        assert!(!completed, "another scope's payment cannot complete it");
        sessions.release(&other, &held).await.unwrap();
        assert_eq!(
            sessions.find(&p.scope, &first.id).await.unwrap(),
            Some(first.clone()),
            "another scope cannot release it"
        );
    }

    // Four payments race to complete one session: one does, and each payment stands.
    let payments: Vec<Transaction> = (0..4).map(|_| approved(&p.scope)).collect();
    let completes = payments.iter().cloned().map(|payment| {
        let (stores, held) = (stores.clone(), held.clone());
        tokio::spawn(async move { pay_closing(&stores, payment, &held).await })
    });
    let mut won = 0;
    for complete in completes.collect::<Vec<_>>() {
        won += usize::from(complete.await.unwrap());
    }
    assert_eq!(won, 1, "a session is completed once");
    let done = sessions.find(&p.scope, &first.id).await.unwrap().unwrap();
    let by = done.transaction_id.clone().expect("completed by a payment");
    assert!(payments.iter().any(|payment| payment.id == by), "{by}");
    assert_eq!(
        (done.status, done.closed_on, done.held_until),
        (SessionStatus::Completed, Some(CLOSED), None)
    );
    for payment in &payments {
        let read = stores.transactions.get_transaction(&p.scope, &payment.id);
        let state = read.await.unwrap().map(|t| t.state);
        assert_eq!(state, Some(TxnState::Authorized), "every payment stands");
    }
    let cancel = sessions.cancel(&p.scope, &first.id, T0).await.unwrap();
    assert_eq!(cancel, None, "a completed session cannot be canceled");

    let canceled = sessions
        .cancel(&p.scope, &second.id, T0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (canceled.status, canceled.transaction_id),
        (SessionStatus::Canceled, None)
    );
    let expired = sessions
        .cancel(&p.scope, &late.id, late.expires_on)
        .await
        .unwrap();
    assert_eq!(expired, None, "an expired session cannot be canceled");
}

/// When the payments here close their sessions.
const CLOSED: time::OffsetDateTime = time::macros::datetime!(2026-11-22 12:03 UTC);

/// Writes `payment` pending, then completes it approved as the payment service does, closing
/// session hold `held` with it; whether the session closed.
async fn pay_closing(stores: &Stores, payment: Transaction, held: &HeldSession) -> bool {
    write(stores, &payment).await;
    let done = Transaction {
        state: TxnState::Authorized,
        ..payment
    };
    let close = SessionClose {
        held: held.clone(),
        on: CLOSED,
    };
    stores
        .transactions
        .complete_transaction_with_event(&done, None, &event_for(&done), None, Some(close), None)
        .await
        .unwrap()
}

/// One merchant's checkouts: sessions with single-use tokens made under them.
struct Checkouts {
    stores: holdfast_persistence::Stores,
    principal: Principal,
    merchant: Merchant,
}

impl Checkouts {
    async fn new(db: &Database) -> Self {
        let stores = db.stores();
        let platform = new_platform(&stores, "A").await;
        let principal = principal(&platform, Mode::Test);
        let merchant = merchant(&principal, "Shop");
        stores
            .merchants
            .insert_merchant_with_event(&merchant, &event_id(), None)
            .await
            .unwrap();
        Self {
            stores,
            principal,
            merchant,
        }
    }

    /// A session for 2500 and `n` single-use tokens made under it.
    async fn open(&self, n: usize) -> (ClientSessionId, Vec<TokenId>) {
        let session = session(&self.principal, &self.merchant);
        self.stores
            .client_sessions
            .save(&session, None)
            .await
            .unwrap();
        let mut made = Vec::new();
        for _ in 0..n {
            let mut t = token(
                &self.principal,
                &CountingIds.next_id(),
                TokenKind::SingleUse,
            );
            t.client_session_id = Some(session.id.clone());
            self.stores.tokens.save(&t, None).await.unwrap();
            made.push(t.id);
        }
        (session.id, made)
    }

    fn terms(&self, amount: i64, now: time::OffsetDateTime) -> TakeTerms {
        TakeTerms {
            merchant: self.merchant.id.clone(),
            amount,
            currency: self.merchant.details.currency,
            now,
        }
    }

    async fn take(&self, id: &TokenId, amount: i64, now: time::OffsetDateTime) -> Taken {
        let terms = self.terms(amount, now);
        self.stores
            .tokens
            .take(&self.principal.scope, id, &terms)
            .await
            .unwrap()
    }

    async fn unused(&self, id: &TokenId) -> bool {
        let t = self
            .stores
            .tokens
            .find(&self.principal.scope, id)
            .await
            .unwrap()
            .unwrap();
        t.used_on.is_none() && !t.sealed.ciphertext.is_empty()
    }

    /// An approved payment of 2500 completing hold `held`; whether the session closed.
    async fn pay_closing(&self, held: &HeldSession) -> bool {
        let scope = &self.principal.scope;
        let plan = stored_default_plan(&self.stores, scope).await.unwrap();
        let payment = txn(
            &self.merchant,
            &plan,
            TxnType::Auth,
            TxnState::Pending,
            2500,
        );
        pay_closing(&self.stores, payment, held).await
    }

    async fn held_until(&self, id: &ClientSessionId) -> Option<time::OffsetDateTime> {
        let scope = &self.principal.scope;
        let session = self.stores.client_sessions.find(scope, id).await.unwrap();
        session.unwrap().held_until
    }
}

/// A payment's take holds its token's session: no other payment and no cancel takes it until
/// the payment releases or completes it; a refused take changes nothing, neither the token nor
/// the session.
pub async fn a_held_session_takes_no_other_payment_nor_cancel(db: Database) {
    let shop = Checkouts::new(&db).await;
    let (sessions, scope) = (&shop.stores.client_sessions, &shop.principal.scope);
    let (session, t) = shop.open(3).await;
    let first = shop.take(&t[0], 2500, T0).await;
    assert!(matches!(first, Taken::Token(_)), "{first:?}");
    assert_eq!(shop.held_until(&session).await, Some(T0 + SESSION_HOLD));
    assert_eq!(shop.take(&t[1], 2500, T0).await, Taken::SessionHeld);
    assert!(
        shop.unused(&t[1]).await,
        "a refused take leaves its token as it was"
    );
    assert_eq!(sessions.cancel(scope, &session, T0).await.unwrap(), None);
    let hold = |until| HeldSession {
        id: session.clone(),
        until,
    };
    // A payment whose hold lapsed, and that another took since, neither releases nor completes
    // the newer hold.
    let stale = hold(T0 + SESSION_HOLD - time::Duration::seconds(1));
    sessions.release(scope, &stale).await.unwrap();
    assert!(
        !shop.pay_closing(&stale).await,
        "a stale hold completes nothing"
    );
    assert_eq!(shop.held_until(&session).await, Some(T0 + SESSION_HOLD));
    sessions
        .release(scope, &hold(T0 + SESSION_HOLD))
        .await
        .unwrap();
    assert_eq!(shop.held_until(&session).await, None);
    let again = shop.take(&t[1], 2500, T0).await;
    assert!(
        matches!(again, Taken::Token(_)),
        "released, the session pays again"
    );
    // A completion that finds its payment already finished (reconciliation won) writes
    // nothing, the session's close included.
    let plan = stored_default_plan(&shop.stores, scope).await.unwrap();
    let finished = txn(&shop.merchant, &plan, TxnType::Auth, TxnState::Failed, 2500);
    write(&shop.stores, &finished).await;
    let close = SessionClose {
        held: hold(T0 + SESSION_HOLD),
        on: CLOSED,
    };
    let event = event_for(&finished);
    let late = shop.stores.transactions.complete_transaction_with_event(
        &finished,
        None,
        &event,
        None,
        Some(close),
        None,
    );
    assert!(matches!(late.await, Err(StoreError::NotFound)));
    assert_eq!(shop.held_until(&session).await, Some(T0 + SESSION_HOLD));
    assert!(shop.pay_closing(&hold(T0 + SESSION_HOLD)).await);
    assert_eq!(
        shop.held_until(&session).await,
        None,
        "completing ends the hold"
    );
    let Taken::Refused(after) = shop.take(&t[2], 2500, T0).await else {
        panic!("a completed session's token paid");
    };
    assert_eq!(after.field, "payment.token");
    assert!(shop.unused(&t[2]).await);

    // Terms the session refuses: nothing is held or used.
    let (session, t) = shop.open(1).await;
    let Taken::Refused(wrong) = shop.take(&t[0], 2400, T0).await else {
        panic!("a wrong amount paid");
    };
    assert_eq!(wrong.field, "amount");
    assert_eq!(shop.held_until(&session).await, None);
    assert!(shop.unused(&t[0]).await);
}

/// Four payments, each with its own token of one session, race: one holds the session and the
/// other tokens stay unused. A hold outlived by its payment (the process died) lapses at its
/// time.
pub async fn racing_payments_of_one_session_hold_it_once(db: Database) {
    let shop = std::sync::Arc::new(Checkouts::new(&db).await);
    let (session, t) = shop.open(4).await;
    let takes = t.iter().map(|id| {
        let (shop, id) = (shop.clone(), id.clone());
        tokio::spawn(async move { shop.take(&id, 2500, T0).await })
    });
    let mut outcomes = Vec::new();
    for take in takes.collect::<Vec<_>>() {
        outcomes.push(take.await.unwrap());
    }
    let won = outcomes
        .iter()
        .filter(|o| matches!(o, Taken::Token(_)))
        .count();
    let held = outcomes
        .iter()
        .filter(|o| **o == Taken::SessionHeld)
        .count();
    assert_eq!((won, held), (1, 3), "{outcomes:?}");
    let mut still_unused = Vec::new();
    for id in &t {
        if shop.unused(id).await {
            still_unused.push(id.clone());
        }
    }
    assert_eq!(still_unused.len(), 3);

    let lapse = T0 + SESSION_HOLD;
    assert_eq!(
        shop.take(&still_unused[0], 2500, lapse - time::Duration::seconds(1))
            .await,
        Taken::SessionHeld
    );
    assert!(matches!(
        shop.take(&still_unused[0], 2500, lapse).await,
        Taken::Token(_)
    ));
    assert_eq!(shop.held_until(&session).await, Some(lapse + SESSION_HOLD));
}
