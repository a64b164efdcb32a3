//! Client sessions (spec 1, "client session creation"): a merchant's server opens one per
//! checkout with a private key and hands its client secret to the page; the page's public key
//! tokenizes under it; the first successful payment with such a token completes it.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{ClientSessionId, MerchantId};
use crate::merchant::Currency;
use crate::payment::amount::Amount;
use crate::payment::client_session::{
    ClientSecret, ClientSession, PaymentMethod, SessionStatus, lifetime,
};
use crate::ports::{ClientSessionStore, Clock, Ids, MerchantStore};

use super::ServiceError;

/// What a merchant's server asks for.
#[derive(Debug, Clone)]
pub struct NewClientSession {
    /// The merchant the checkout pays.
    pub merchant_id: MerchantId,
    /// What the checkout pays.
    pub amount: Amount,
    /// Must be the merchant's currency when given.
    pub currency: Option<Currency>,
    /// `card` when not given.
    pub payment_methods: Option<Vec<PaymentMethod>>,
    /// Seconds to live; 30 minutes when not given.
    pub expires_in: Option<i64>,
}

/// A session just created, with the secret that is shown this once.
#[derive(Debug, Clone)]
pub struct CreatedSession {
    /// The session.
    pub session: ClientSession,
    /// Its client secret; only its hash is stored.
    pub secret: ClientSecret,
}

/// Opens, reads, cancels and completes client sessions.
#[derive(Clone)]
pub struct ClientSessionService {
    sessions: Arc<dyn ClientSessionStore>,
    merchants: Arc<dyn MerchantStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl ClientSessionService {
    /// A service over its ports.
    pub fn new(
        sessions: Arc<dyn ClientSessionStore>,
        merchants: Arc<dyn MerchantStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            sessions,
            merchants,
            clock,
            ids,
        }
    }

    /// Opens a session for one checkout of a merchant of the caller's platform and mode.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        new: NewClientSession,
        reply: Option<&Recorder<'_, CreatedSession>>,
    ) -> Result<CreatedSession, ServiceError> {
        let lifetime = lifetime(new.expires_in)?;
        let payment_methods = methods(new.payment_methods)?;
        let merchant = self
            .merchants
            .get_merchant(&who.scope, &new.merchant_id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or_else(|| Invalid::new("merchantId", "no such merchant"))?;
        let currency = merchant.details.currency;
        if new.currency.is_some_and(|asked| asked != currency) {
            return Err(Invalid::new("currency", "must be the merchant's currency").into());
        }
        let now = self.clock.now();
        let id = ClientSessionId::from_suffix(&self.ids.next_id());
        let secret = ClientSecret::new(&id, &self.ids.key_secret());
        let created = CreatedSession {
            session: ClientSession {
                secret_hash: secret.hash(),
                id,
                platform_id: who.scope.platform.clone(),
                mode: who.scope.mode,
                merchant_id: merchant.id,
                amount: new.amount.minor_units(),
                currency,
                payment_methods,
                status: SessionStatus::Open,
                transaction_id: None,
                created_on: now,
                expires_on: now + lifetime,
                closed_on: None,
                held_until: None,
            },
            secret,
        };
        self.sessions
            .save(&created.session, reply_for(reply, &created))
            .await
            .map_err(ServiceError::Store)?;
        Ok(created)
    }

    /// A session of the caller's platform and mode, its status as of now.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn get(
        &self,
        who: &Principal,
        id: &ClientSessionId,
    ) -> Result<ClientSession, ServiceError> {
        let session = self
            .sessions
            .find(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("client session"))?;
        Ok(self.as_of_now(session))
    }

    /// Cancels an open session; one that is not open is a conflict that says what it is.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn cancel(
        &self,
        who: &Principal,
        id: &ClientSessionId,
    ) -> Result<ClientSession, ServiceError> {
        let now = self.clock.now();
        let canceled = self
            .sessions
            .cancel(&who.scope, id, now)
            .await
            .map_err(ServiceError::Store)?;
        if let Some(session) = canceled {
            return Ok(session);
        }
        let session = self.get(who, id).await?;
        let message = if session.status == SessionStatus::Open && session.is_held_at(now) {
            "a payment under the client session is in progress; cancel it after the payment \
             ends, if it did not complete the session"
                .to_owned()
        } else {
            format!(
                "the client session is {}; only an open session can be canceled",
                session.status
            )
        };
        Err(ServiceError::Conflict {
            field: "id",
            message,
        })
    }

    fn as_of_now(&self, session: ClientSession) -> ClientSession {
        ClientSession {
            status: session.status_at(self.clock.now()),
            ..session
        }
    }
}

/// The methods asked for, each once, in the order given; `card` when none is named.
fn methods(asked: Option<Vec<PaymentMethod>>) -> Result<Vec<PaymentMethod>, Invalid> {
    let Some(asked) = asked else {
        return Ok(vec![PaymentMethod::Card]);
    };
    let mut methods = Vec::new();
    for method in asked {
        if !methods.contains(&method) {
            methods.push(method);
        }
    }
    if methods.is_empty() {
        return Err(Invalid::new(
            "paymentMethods",
            "must name at least one of card, apple_pay, google_pay",
        ));
    }
    Ok(methods)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{KeyId, PlatformId, UserId};
    use crate::merchant::Merchant;
    use crate::mode::{KeyType, Mode};
    use crate::ports::{MockClientSessionStore, MockMerchantStore};
    use crate::scope::Scope;
    use crate::services::fixtures::{NOON, clock_at_noon, shop};

    fn who() -> Principal {
        Principal {
            scope: Scope::new(PlatformId::from_suffix("01P"), Mode::Test),
            key_type: KeyType::Private,
            key_id: Some(KeyId::from_suffix("01K")),
            user_id: UserId::from_suffix("01U"),
        }
    }

    fn merchant() -> Merchant {
        shop(
            MerchantId::from_suffix("01M"),
            PlatformId::from_suffix("01P"),
        )
    }

    fn service(sessions: MockClientSessionStore) -> ClientSessionService {
        let mut merchants = MockMerchantStore::new();
        merchants
            .expect_get_merchant()
            .returning(|_, id| Ok((*id == merchant().id).then(merchant)));
        let mut ids = crate::ports::MockIds::new();
        ids.expect_next_id().return_const("01S".to_owned());
        ids.expect_key_secret()
            .return_const("ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned());
        ClientSessionService::new(
            Arc::new(sessions),
            Arc::new(merchants),
            Arc::new(clock_at_noon()),
            Arc::new(ids),
        )
    }

    fn new_session() -> NewClientSession {
        NewClientSession {
            merchant_id: merchant().id,
            amount: Amount::new("amount", 2500).unwrap(),
            currency: None,
            payment_methods: None,
            expires_in: None,
        }
    }

    #[tokio::test]
    async fn a_session_is_saved_with_its_secrets_hash_only() {
        let mut sessions = MockClientSessionStore::new();
        sessions
            .expect_save()
            .withf(|s, _| {
                s.status == SessionStatus::Open
                    && s.currency == Currency::USD
                    && s.payment_methods == [PaymentMethod::Card]
                    && s.expires_on == NOON + time::Duration::minutes(30)
                    && s.secret_hash.len() == 32
            })
            .times(1)
            .returning(|_, _| Ok(()));
        let created = service(sessions)
            .create(&who(), new_session(), None)
            .await
            .unwrap();
        assert_eq!(
            created.secret.expose(),
            "cs_01S_secret_ABCDEFGHIJKLMNOPQRSTUVWXYZ"
        );
        assert!(created.session.has_secret(&created.secret));
    }

    /// A cancel the store refused says why: the session's state, or a payment holding it.
    #[tokio::test]
    async fn a_refused_cancel_says_why() {
        let stored = |status, held_until| ClientSession {
            held_until,
            ..crate::services::fixtures::client_session(status)
        };
        let held = Some(NOON + time::Duration::minutes(5));
        let cases = [
            (
                stored(SessionStatus::Open, held),
                "a payment under the client session is in progress",
            ),
            (
                stored(SessionStatus::Completed, None),
                "the client session is completed",
            ),
            (
                stored(SessionStatus::Canceled, None),
                "the client session is canceled",
            ),
        ];
        for (session, expected) in cases {
            let mut sessions = MockClientSessionStore::new();
            sessions
                .expect_cancel()
                .withf(|scope, id, now| {
                    *scope == who().scope && id.as_str() == "cs_01S" && *now == NOON
                })
                .returning(|_, _, _| Ok(None));
            sessions
                .expect_find()
                .return_once(move |_, _| Ok(Some(session)));
            let refused = service(sessions)
                .cancel(&who(), &ClientSessionId::from_suffix("01S"))
                .await;
            match refused {
                Err(ServiceError::Conflict { field, message }) => {
                    assert_eq!(field, "id");
                    assert!(message.starts_with(expected), "{message}");
                }
                other => panic!("{expected}: {other:?}"),
            }
        }
    }

    #[tokio::test]
    async fn a_bad_request_names_its_field_and_writes_nothing() {
        let cases = [
            (
                NewClientSession {
                    merchant_id: MerchantId::from_suffix("02M"),
                    ..new_session()
                },
                "merchantId",
            ),
            (
                NewClientSession {
                    currency: Some(Currency::parse("EUR").unwrap()),
                    ..new_session()
                },
                "currency",
            ),
            (
                NewClientSession {
                    payment_methods: Some(vec![]),
                    ..new_session()
                },
                "paymentMethods",
            ),
            (
                NewClientSession {
                    expires_in: Some(90_000),
                    ..new_session()
                },
                "expiresIn",
            ),
        ];
        for (new, field) in cases {
            let mut sessions = MockClientSessionStore::new();
            sessions.expect_save().never();
            match service(sessions).create(&who(), new, None).await {
                Err(ServiceError::Invalid(invalid)) => assert_eq!(invalid.field, field),
                other => panic!("{field}: {other:?}"),
            }
        }
    }

    #[test]
    fn methods_are_kept_once_in_order() {
        let got = methods(Some(vec![
            PaymentMethod::GooglePay,
            PaymentMethod::Card,
            PaymentMethod::GooglePay,
        ]))
        .unwrap();
        assert_eq!(got, [PaymentMethod::GooglePay, PaymentMethod::Card]);
    }
}
