//! Creating card tokens (spec 5.3): any key may create a single-use token; only a private key
//! may create a vault token.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::TokenId;
use crate::mode::KeyType;
use crate::payment::card::{CardInput, CardNumber, CvvRule, Expiration};
use crate::payment::token::{SINGLE_USE_LIFETIME, Token, TokenKind};
use crate::payment::transaction::PaymentSummary;
use crate::ports::{BinInfo, BinLookup, CardData, CardVault, Clock, Ids, StoreError, TokenStore};

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

/// Creates and reads card tokens, sealing each card in the vault.
#[derive(Clone)]
pub struct TokenService {
    tokens: Arc<dyn TokenStore>,
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
    /// A service over its ports: the token store, the vault, the BIN table, clock and ids.
    pub fn new(
        tokens: Arc<dyn TokenStore>,
        vault: Arc<dyn CardVault>,
        bins: Arc<dyn BinLookup>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            tokens,
            vault,
            bins,
            clock,
            ids,
        }
    }

    /// The card behind token `id` of the caller's platform and mode, for a payment; a
    /// single-use token is used up by this call.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn redeem(&self, who: &Principal, id: &TokenId) -> Result<CardData, TokenError> {
        let unusable = || {
            Invalid::new(
                "payment.token",
                "no such token, or it was used or has expired",
            )
        };
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
        Ok(CardData {
            number,
            cvv: None,
            expiration,
        })
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
    /// a public key; a single-use token expires after `SINGLE_USE_LIFETIME`.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        kind: TokenKind,
        card: CardInput,
        reply: Option<&Recorder<'_, Token>>,
    ) -> Result<Token, TokenError> {
        let card = &card.check(self.clock.now(), CvvRule::Optional)?;
        if kind == TokenKind::Vault && who.key_type == KeyType::Public {
            return Err(TokenError::VaultNeedsPrivateKey);
        }
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

    use crate::ports::{MockCardVault, MockTokenStore, Sealed};

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
                .create(&who(key_type), kind, input(), None)
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

    /// A payment's token: taken in the caller's scope at the service's clock, opened by the
    /// vault, and refused when unknown or used up, or when the card inside has expired (the
    /// single-use token is then spent all the same: the take is what spends it).
    #[tokio::test]
    async fn redeeming_a_token_for_a_payment() {
        let id = TokenId::from_suffix("01");
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
                .expect_take()
                .withf(|scope, id, now| {
                    *scope == who(KeyType::Private).scope
                        && id.as_str() == "tkn_01"
                        && *now == crate::services::fixtures::NOON
                })
                .times(1)
                .returning(move |_, _, _| {
                    Ok(found.then(|| Token {
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
                    }))
                });
            let mut vault = MockCardVault::new();
            vault
                .expect_open()
                .withf(|context, _| context == "tkn_01")
                .returning(move |_, _| Ok(sealed.to_owned()));
            let service = TokenService::new(
                Arc::new(tokens),
                Arc::new(vault),
                Arc::new(visa_bins()),
                Arc::new(clock_at_noon()),
                Arc::new(fixed_ids("01")),
            );
            let got = service.redeem(&who(KeyType::Private), &id).await;
            match (got, expect) {
                (Ok(card), Ok(last4)) => {
                    assert_eq!(card.number.last4(), last4);
                    assert!(card.cvv.is_none(), "a token never holds a CVV");
                }
                (Err(TokenError::Invalid(i)), Err(message)) => {
                    assert_eq!((i.field, i.message.as_str()), ("payment.token", message));
                }
                (got, expect) => panic!("{sealed}: {got:?} against {expect:?}"),
            }
        }
    }
}
