//! Creating card tokens (spec 5.3): any key may create a single-use token; only a private key
//! may create a vault token.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{ClientSessionId, MerchantId, TokenId, TxnId};
use crate::merchant::Currency;
use crate::mode::KeyType;
use crate::payment::card::{CardInput, CardNumber, CvvRule, Expiration};
use crate::payment::client_session::{ClientSecret, SessionStatus};
use crate::payment::token::{SINGLE_USE_LIFETIME, Token, TokenKind};
use crate::payment::transaction::PaymentSummary;
use crate::ports::{
    BinInfo, BinLookup, CardData, CardVault, ClientSessionStore, Clock, Ids, StoreError, TokenStore,
};

/// Why a token could not be created or read.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A public key asked for a vault token.
    #[error("public keys can only create single-use tokens")]
    VaultNeedsPrivateKey,
    /// A card field is unusable (bad number, past expiration, malformed CVV).
    #[error(transparent)]
    Invalid(#[from] Invalid),
    /// Reading or writing the store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a payment is for, as a token's client session must allow it.
#[derive(Debug, Clone, Copy)]
pub struct PaymentTerms<'a> {
    /// The merchant paid.
    pub merchant: &'a MerchantId,
    /// The amount, in minor units.
    pub amount: i64,
    /// The merchant's currency.
    pub currency: Currency,
}

/// A token's card, handed to one payment, and the client session the token was made under.
#[derive(Debug)]
pub struct Redeemed {
    /// The card, unsealed for the processor call.
    pub card: CardData,
    /// The session the payment completes if it succeeds.
    pub client_session: Option<ClientSessionId>,
}

/// Creates and reads card tokens, sealing each card in the vault.
#[derive(Clone)]
pub struct TokenService {
    tokens: Arc<dyn TokenStore>,
    sessions: Arc<dyn ClientSessionStore>,
    vault: Arc<dyn CardVault>,
    bins: Arc<dyn BinLookup>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

/// The text the vault seals for a card: its number and expiration (`NUMBER|MMYY`), never the
/// CVV. `unsealed_card` reads it back.
pub(crate) fn sealed_text(card: &CardData) -> String {
    format!("{}|{}", card.number.expose(), card.expiration.to_mmyy())
}

/// The number and expiration `sealed_text` wrote; `None` if the text is not that.
fn unsealed_card(text: &str) -> Option<(CardNumber, Expiration)> {
    let (number, expiry) = text.split_once('|')?;
    Some((
        CardNumber::parse(number).ok()?,
        Expiration::parse_mmyy(expiry).ok()?,
    ))
}

impl TokenService {
    /// A service over its ports: the token store, the client sessions tokens are bound to, the
    /// vault, the BIN table, clock and ids.
    pub fn new(
        tokens: Arc<dyn TokenStore>,
        sessions: Arc<dyn ClientSessionStore>,
        vault: Arc<dyn CardVault>,
        bins: Arc<dyn BinLookup>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            tokens,
            sessions,
            vault,
            bins,
            clock,
            ids,
        }
    }

    /// The card behind token `id` of the caller's platform and mode, for a payment on `terms`;
    /// a single-use token is used up by this call. A token made under a client session is
    /// refused, and left unused, unless the session is open and `terms` are the session's.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn redeem(
        &self,
        who: &Principal,
        id: &TokenId,
        terms: PaymentTerms<'_>,
    ) -> Result<Redeemed, TokenError> {
        let unusable = || {
            Invalid::new(
                "payment.token",
                "no such token, or it was used or has expired",
            )
        };
        let found = self
            .tokens
            .find(&who.scope, id)
            .await?
            .ok_or_else(unusable)?;
        if let Some(session) = &found.client_session_id {
            let session = self
                .sessions
                .find(&who.scope, session)
                .await?
                .ok_or_else(|| StoreError::Unexpected(format!("token {id}: no session")))?;
            session.admits(
                terms.merchant,
                terms.amount,
                terms.currency,
                self.clock.now(),
            )?;
        }
        let token = self
            .tokens
            .take(&who.scope, id, self.clock.now())
            .await?
            .ok_or_else(unusable)?;
        let corrupt = |what: &str| StoreError::Unexpected(format!("token {id}: {what}"));
        let text = self
            .vault
            .open(id.as_str(), &token.sealed)
            .map_err(|e| corrupt(&e.to_string()))?;
        let (number, expiration) = unsealed_card(&text).ok_or_else(|| corrupt("sealed card"))?;
        if expiration.is_past(self.clock.now()) {
            return Err(Invalid::new("payment.token", "the tokenized card has expired").into());
        }
        Ok(Redeemed {
            card: CardData {
                number,
                cvv: None,
                expiration,
            },
            client_session: token.client_session_id,
        })
    }

    /// Completes client session `id` with `transaction`, its first successful payment; `false`
    /// when it was no longer open (canceled, expired or completed while the payment ran).
    pub async fn complete_session(
        &self,
        who: &Principal,
        id: &ClientSessionId,
        transaction: &TxnId,
    ) -> Result<bool, StoreError> {
        let closed = self
            .sessions
            .close(
                &who.scope,
                id,
                SessionStatus::Completed,
                Some(transaction.clone()),
                self.clock.now(),
            )
            .await?;
        Ok(closed.is_some())
    }

    /// The open session a client secret names, for a token made under it; anything else (a
    /// malformed or wrong secret, another platform's or mode's session, one that is closed or
    /// expired) is one refusal that names `clientSecret` and says nothing more.
    async fn session_for(
        &self,
        who: &Principal,
        secret: &str,
    ) -> Result<ClientSessionId, TokenError> {
        let refused = || {
            Invalid::new(
                "clientSecret",
                "is not the secret of an open client session of this key's platform and mode",
            )
        };
        let (id, secret) = ClientSecret::parse(secret).ok_or_else(refused)?;
        let session = self
            .sessions
            .find(&who.scope, &id)
            .await?
            .filter(|s| s.has_secret(&secret))
            .ok_or_else(refused)?;
        match session.status_at(self.clock.now()) {
            SessionStatus::Open => Ok(session.id),
            _ => Err(refused().into()),
        }
    }

    /// One token of the caller's platform and mode.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn get(&self, who: &Principal, id: &TokenId) -> Result<Option<Token>, TokenError> {
        Ok(self.tokens.find(&who.scope, id).await?)
    }

    /// Erases the sealed card of every single-use token that expired unused; returns how many
    /// (retention: a card kept sealed is still a card kept).
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn erase_expired(&self) -> Result<usize, TokenError> {
        Ok(self.tokens.erase_expired(self.clock.now()).await?)
    }

    /// What the BIN table knows of a card's first digits.
    #[tracing::instrument(level = "debug", skip_all)]
    pub fn bin(&self, bin: &str) -> BinInfo {
        self.bins.lookup(bin)
    }

    /// Checks the card and stores a single-use or vault token for it, refusing a vault token to
    /// a public key; a single-use token expires after `SINGLE_USE_LIFETIME`. With a client
    /// secret, the single-use token is bound to that open session.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        kind: TokenKind,
        card: CardInput,
        client_secret: Option<&str>,
        reply: Option<&Recorder<'_, Token>>,
    ) -> Result<Token, TokenError> {
        let card = &card.check(self.clock.now(), CvvRule::Optional)?;
        if kind == TokenKind::Vault && who.key_type == KeyType::Public {
            return Err(TokenError::VaultNeedsPrivateKey);
        }
        let client_session_id = match client_secret {
            None => None,
            Some(_) if kind == TokenKind::Vault => {
                return Err(Invalid::new(
                    "clientSecret",
                    "binds single-use tokens only, not vault tokens",
                )
                .into());
            }
            Some(secret) => Some(self.session_for(who, secret).await?),
        };
        let now = self.clock.now();
        let id = TokenId::from_suffix(&self.ids.next_id());
        let bin = self.bins.lookup(card.number.bin());
        let token = Token {
            sealed: self.vault.seal(id.as_str(), &sealed_text(card)),
            id,
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            kind,
            card: PaymentSummary {
                bin: card.number.bin().to_owned(),
                brand: bin.brand,
                last4: card.number.last4().to_owned(),
                funding: bin.funding,
            },
            created_on: now,
            expires_on: (kind == TokenKind::SingleUse).then(|| now + SINGLE_USE_LIFETIME),
            used_on: None,
            client_session_id,
        };
        self.tokens.save(&token, reply_for(reply, &token)).await?;
        Ok(token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{KeyId, PlatformId, UserId};
    use crate::mode::Mode;
    use crate::services::fixtures::{clock_at_noon, fixed_ids, visa_bins};

    use crate::ports::{MockCardVault, MockClientSessionStore, MockTokenStore, Sealed};

    /// Retention erases what expired by the service's own clock, not a caller's.
    #[tokio::test]
    async fn expired_tokens_are_erased_as_of_the_services_clock() {
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_erase_expired()
            .withf(|now| *now == crate::services::fixtures::NOON)
            .times(1)
            .returning(|_| Ok(2));
        let service = TokenService::new(
            Arc::new(tokens),
            Arc::new(MockClientSessionStore::new()),
            Arc::new(MockCardVault::new()),
            Arc::new(visa_bins()),
            Arc::new(clock_at_noon()),
            Arc::new(fixed_ids("01")),
        );
        assert_eq!(service.erase_expired().await.unwrap(), 2);
    }

    fn who(key_type: KeyType) -> Principal {
        Principal {
            scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Test),
            key_type,
            key_id: KeyId::from_suffix("1"),
            user_id: UserId::from_suffix("1"),
        }
    }

    fn service(tokens: MockTokenStore) -> TokenService {
        service_with(tokens, MockClientSessionStore::new())
    }

    fn service_with(tokens: MockTokenStore, sessions: MockClientSessionStore) -> TokenService {
        let mut vault = MockCardVault::new();
        vault
            .expect_seal()
            .withf(|context, secret| context == "tkn_01" && secret == "4111111111111111|1230")
            .returning(|_, _| Sealed {
                key_id: "k1".into(),
                nonce: vec![0; 12],
                ciphertext: vec![1; 40],
            });
        let bins = visa_bins();
        let clock = clock_at_noon();
        let ids = fixed_ids("01");
        TokenService::new(
            Arc::new(tokens),
            Arc::new(sessions),
            Arc::new(vault),
            Arc::new(bins),
            Arc::new(clock),
            Arc::new(ids),
        )
    }

    fn card() -> CardData {
        input()
            .check(crate::services::fixtures::NOON, CvvRule::Optional)
            .unwrap()
    }

    fn input() -> CardInput {
        CardInput {
            number: Some("4111111111111111".into()),
            cvv: None,
            expiration: Some("1230".into()),
        }
    }

    #[tokio::test]
    async fn which_key_may_create_which_token() {
        let table = [
            (KeyType::Public, TokenKind::SingleUse, true),
            (KeyType::Private, TokenKind::SingleUse, true),
            (KeyType::Private, TokenKind::Vault, true),
            (KeyType::Public, TokenKind::Vault, false),
        ];
        for (key_type, kind, allowed) in table {
            let mut tokens = MockTokenStore::new();
            tokens
                .expect_save()
                .times(usize::from(allowed))
                .returning(|_, _| Ok(()));
            let got = service(tokens)
                .create(&who(key_type), kind, input(), None, None)
                .await;
            match (allowed, got) {
                (true, Ok(token)) => {
                    assert_eq!(token.kind, kind);
                    let lifetime = crate::payment::token::SINGLE_USE_LIFETIME;
                    let expires = (kind == TokenKind::SingleUse)
                        .then(|| crate::services::fixtures::NOON + lifetime);
                    assert_eq!(token.expires_on, expires, "by the service's clock");
                    assert_eq!(
                        (token.card.bin.as_str(), token.card.last4.as_str()),
                        ("411111", "1111")
                    );
                }
                (false, Err(TokenError::VaultNeedsPrivateKey)) => {}
                (_, other) => panic!("{key_type:?} {kind:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn sealed_text_round_trips_and_refuses_anything_else() {
        let text = sealed_text(&card());
        assert_eq!(text, "4111111111111111|1230");
        let (number, expiration) = unsealed_card(&text).unwrap();
        assert_eq!(
            (number.expose(), expiration.to_mmyy()),
            ("4111111111111111", "1230".to_owned())
        );
        for bad in [
            "4111111111111111",
            "4111111111111112|1230",
            "4111111111111111|1330",
            "|",
        ] {
            assert!(unsealed_card(bad).is_none(), "{bad}");
        }
    }

    fn token(client_session_id: Option<ClientSessionId>) -> Token {
        Token {
            id: TokenId::from_suffix("01"),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            kind: TokenKind::SingleUse,
            card: PaymentSummary {
                bin: "411111".into(),
                brand: crate::payment::brand::CardBrand::Visa,
                last4: "1111".into(),
                funding: crate::payment::brand::FundingType::Credit,
            },
            sealed: Sealed {
                key_id: "k1".into(),
                nonce: vec![0; 12],
                ciphertext: vec![1; 40],
            },
            created_on: crate::services::fixtures::NOON,
            expires_on: None,
            used_on: None,
            client_session_id,
        }
    }

    fn opening(sealed: &'static str) -> MockCardVault {
        let mut vault = MockCardVault::new();
        vault
            .expect_open()
            .withf(|context, _| context == "tkn_01")
            .returning(move |_, _| Ok(sealed.to_owned()));
        vault
    }

    fn terms(merchant: &MerchantId, amount: i64) -> PaymentTerms<'_> {
        PaymentTerms {
            merchant,
            amount,
            currency: Currency::USD,
        }
    }

    /// A payment's token: taken in the caller's scope at the service's clock, opened by the
    /// vault, and refused when unknown or used up, or when the card inside has expired (the
    /// single-use token is then spent all the same: the take is what spends it).
    #[tokio::test]
    async fn redeeming_a_token_for_a_payment() {
        let id = TokenId::from_suffix("01");
        let merchant = MerchantId::from_suffix("1");
        for (found, sealed, expect) in [
            (true, "4111111111111111|1230", Ok("1111")),
            (
                true,
                "4111111111111111|1025",
                Err("the tokenized card has expired"),
            ),
            (
                false,
                "",
                Err("no such token, or it was used or has expired"),
            ),
        ] {
            let mut tokens = MockTokenStore::new();
            tokens
                .expect_find()
                .returning(move |_, _| Ok(found.then(|| token(None))));
            tokens
                .expect_take()
                .withf(|scope, id, now| {
                    *scope == who(KeyType::Private).scope
                        && id.as_str() == "tkn_01"
                        && *now == crate::services::fixtures::NOON
                })
                .times(usize::from(found))
                .returning(move |_, _, _| Ok(Some(token(None))));
            let service = TokenService::new(
                Arc::new(tokens),
                Arc::new(MockClientSessionStore::new()),
                Arc::new(opening(sealed)),
                Arc::new(visa_bins()),
                Arc::new(clock_at_noon()),
                Arc::new(fixed_ids("01")),
            );
            let got = service
                .redeem(&who(KeyType::Private), &id, terms(&merchant, 100))
                .await;
            match (got, expect) {
                (Ok(redeemed), Ok(last4)) => {
                    assert_eq!(redeemed.card.number.last4(), last4);
                    assert!(redeemed.card.cvv.is_none(), "a token never holds a CVV");
                    assert!(redeemed.client_session.is_none());
                }
                (Err(TokenError::Invalid(i)), Err(message)) => {
                    assert_eq!((i.field, i.message.as_str()), ("payment.token", message));
                }
                (got, expect) => panic!("{sealed}: {got:?} against {expect:?}"),
            }
        }
    }

    fn open_session(secret: &ClientSecret) -> crate::payment::client_session::ClientSession {
        use crate::payment::client_session::{ClientSession, PaymentMethod};
        ClientSession {
            id: ClientSessionId::from_suffix("01S"),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("1"),
            amount: 2500,
            currency: Currency::USD,
            payment_methods: vec![PaymentMethod::Card],
            secret_hash: secret.hash(),
            status: SessionStatus::Open,
            transaction_id: None,
            created_on: crate::services::fixtures::NOON,
            expires_on: crate::services::fixtures::NOON + time::Duration::minutes(30),
            closed_on: None,
        }
    }

    fn secret() -> ClientSecret {
        ClientSecret::new(
            &ClientSessionId::from_suffix("01S"),
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        )
    }

    /// A token made under a client session pays only the session's merchant and amount; a
    /// refused payment leaves the token unused, so the checkout can still pay with it.
    #[tokio::test]
    async fn a_session_token_pays_only_on_the_sessions_terms() {
        let session_id = ClientSessionId::from_suffix("01S");
        for (merchant, amount, refused) in [
            ("1", 2500, None),
            ("1", 2400, Some("amount")),
            ("2", 2500, Some("merchantId")),
        ] {
            let mut tokens = MockTokenStore::new();
            let bound = session_id.clone();
            tokens
                .expect_find()
                .returning(move |_, _| Ok(Some(token(Some(bound.clone())))));
            let bound = session_id.clone();
            tokens
                .expect_take()
                .times(usize::from(refused.is_none()))
                .returning(move |_, _, _| Ok(Some(token(Some(bound.clone())))));
            let mut sessions = MockClientSessionStore::new();
            sessions
                .expect_find()
                .returning(|_, _| Ok(Some(open_session(&secret()))));
            let service = TokenService::new(
                Arc::new(tokens),
                Arc::new(sessions),
                Arc::new(opening("4111111111111111|1230")),
                Arc::new(visa_bins()),
                Arc::new(clock_at_noon()),
                Arc::new(fixed_ids("01")),
            );
            let merchant = MerchantId::from_suffix(merchant);
            let got = service
                .redeem(
                    &who(KeyType::Private),
                    &TokenId::from_suffix("01"),
                    terms(&merchant, amount),
                )
                .await;
            match (got, refused) {
                (Ok(redeemed), None) => {
                    assert_eq!(redeemed.client_session, Some(session_id.clone()));
                }
                (Err(TokenError::Invalid(i)), Some(field)) => assert_eq!(i.field, field),
                (got, refused) => panic!("{merchant} {amount}: {got:?} against {refused:?}"),
            }
        }
    }

    /// A public key binds its token to an open session by its secret; a wrong secret, or one
    /// given for a vault token, is refused by name and nothing is written.
    #[tokio::test]
    async fn a_client_secret_binds_the_token_to_its_open_session() {
        let right = secret();
        let wrong = ClientSecret::new(
            &ClientSessionId::from_suffix("01S"),
            "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
        );
        let cases = [
            (
                KeyType::Public,
                TokenKind::SingleUse,
                right.expose().to_owned(),
                true,
            ),
            (
                KeyType::Public,
                TokenKind::SingleUse,
                wrong.expose().to_owned(),
                false,
            ),
            (
                KeyType::Public,
                TokenKind::SingleUse,
                "cs_01S".to_owned(),
                false,
            ),
            (
                KeyType::Private,
                TokenKind::Vault,
                right.expose().to_owned(),
                false,
            ),
        ];
        for (key_type, kind, given, bound) in cases {
            let mut tokens = MockTokenStore::new();
            tokens
                .expect_save()
                .withf(|t, _| t.client_session_id == Some(ClientSessionId::from_suffix("01S")))
                .times(usize::from(bound))
                .returning(|_, _| Ok(()));
            let mut sessions = MockClientSessionStore::new();
            sessions
                .expect_find()
                .returning(|_, _| Ok(Some(open_session(&secret()))));
            let got = service_with(tokens, sessions)
                .create(&who(key_type), kind, input(), Some(&given), None)
                .await;
            match (got, bound) {
                (Ok(token), true) => assert!(token.client_session_id.is_some()),
                (Err(TokenError::Invalid(i)), false) => assert_eq!(i.field, "clientSecret"),
                (got, _) => panic!("{given}: {got:?}"),
            }
        }
    }
}
