//! Client sessions: read back as saved, scoped, and closed once.

use holdfast_domain::ids::{ClientSessionId, TxnId};
use holdfast_domain::payment::client_session::{
    ClientSecret, ClientSession, DEFAULT_LIFETIME, PaymentMethod, SessionStatus,
};

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
    }
}

/// A session reads back as saved in its platform and mode only; of racing closes one wins,
/// and an expired session cannot be closed.
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
    let (first, second, late) = (session(&p, &m), session(&p, &m), session(&p, &m));
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
        let closed = sessions
            .close(&other, &first.id, SessionStatus::Canceled, None, T0)
            .await
            .unwrap();
        assert_eq!(closed, None, "another scope cannot close it");
    }

    // Four payments race to complete one session: one does.
    let txn = TxnId::from_suffix("01T");
    let closes = (0..4).map(|_| {
        let (sessions, scope, id, txn) = (
            sessions.clone(),
            p.scope.clone(),
            first.id.clone(),
            txn.clone(),
        );
        tokio::spawn(async move {
            sessions
                .close(&scope, &id, SessionStatus::Completed, Some(txn), T0)
                .await
                .unwrap()
        })
    });
    let mut won = Vec::new();
    for close in closes.collect::<Vec<_>>() {
        won.extend(close.await.unwrap());
    }
    assert_eq!(won.len(), 1, "a session is completed once");
    assert_eq!(
        (
            won[0].status,
            won[0].transaction_id.as_ref(),
            won[0].closed_on
        ),
        (SessionStatus::Completed, Some(&txn), Some(T0))
    );
    let cancel = sessions
        .close(&p.scope, &first.id, SessionStatus::Canceled, None, T0)
        .await
        .unwrap();
    assert_eq!(cancel, None, "a completed session cannot be canceled");

    let canceled = sessions
        .close(&p.scope, &second.id, SessionStatus::Canceled, None, T0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (canceled.status, canceled.transaction_id),
        (SessionStatus::Canceled, None)
    );
    let expired = sessions
        .close(
            &p.scope,
            &late.id,
            SessionStatus::Completed,
            Some(txn.clone()),
            late.expires_on,
        )
        .await
        .unwrap();
    assert_eq!(expired, None, "an expired session takes nothing");
}
