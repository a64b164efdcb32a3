//! Creating card tokens (spec 5.3): any key may create a single-use token; only a private key
//! may create a vault token.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{ClientSessionId, MerchantId, TokenId};
use crate::merchant::Currency;
use crate::mode::KeyType;
use crate::payment::card::{CardInput, CardNumber, CardholderName, CvvRule, Expiration};
use crate::payment::client_session::{ClientSecret, PaymentMethod, SessionStatus};
use crate::payment::token::{HeldSession, SINGLE_USE_LIFETIME, TakeTerms, Taken, Token, TokenKind};
use crate::payment::transaction::PaymentSummary;
use crate::payment::wallet::{
    DISPLAY_NAME_MAX_CHARS, GatewayFailure, MerchantSession, MerchantValidation, SandboxSession,
    WalletKind, WalletProof, WalletRefusal, is_apple_validation_url, is_domain_name,
};
use crate::ports::{
    ApplePayGateway, BinInfo, BinLookup, CardData, CardVault, ClientSessionStore, Clock, Ids,
    StoreError, TokenStore, WalletOpener,
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
    /// A wallet token was refused, or its wallet is not set up for the mode.
    #[error(transparent)]
    Wallet(#[from] WalletRefusal),
    /// Apple's gateway gave no merchant session.
    #[error(transparent)]
    ApplePayGateway(#[from] GatewayFailure),
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

/// What a new token is bound to: the client session it was made under, the merchant its wallet
/// payment was requested for.
struct Binding {
    client_session_id: Option<ClientSessionId>,
    merchant_id: Option<MerchantId>,
}

/// A token's card, handed to one payment, and the client session the token was made under.
#[derive(Debug)]
pub struct Redeemed {
    /// The card, unsealed for the processor call.
    pub card: CardData,
    /// The session the payment holds, which it completes if it succeeds.
    pub client_session: Option<HeldSession>,
}

/// Creates and reads card tokens, sealing each card in the vault.
#[derive(Clone)]
pub struct TokenService {
    tokens: Arc<dyn TokenStore>,
    sessions: Arc<dyn ClientSessionStore>,
    wallets: Arc<dyn WalletOpener>,
    apple_pay: Option<Arc<dyn ApplePayGateway>>,
    vault: Arc<dyn CardVault>,
    bins: Arc<dyn BinLookup>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

/// The text the vault seals for a card: its number and expiration (`NUMBER|MMYY`), never the
/// CVV; for a wallet's card also the wallet, cryptogram and ECI
/// (`NUMBER|MMYY|WALLET|CRYPTOGRAM|ECI`); with the name on the card, that last, after the
/// wallet's three parts (empty for a typed card): `NUMBER|MMYY|WALLET|CRYPTOGRAM|ECI|NAME`. The
/// name is the rest of the text, so a `|` in it needs no escape. `unsealed_card` reads it back.
pub(crate) fn sealed_text(card: &CardData) -> String {
    let mut text = format!("{}|{}", card.number.expose(), card.expiration.to_mmyy());
    if card.wallet.is_some() || card.name.is_some() {
        let proof = card.wallet.as_ref();
        for part in [
            proof.map_or("", |p| p.kind.as_str()),
            proof
                .and_then(|p| p.cryptogram.as_deref())
                .unwrap_or_default(),
            proof.and_then(|p| p.eci.as_deref()).unwrap_or_default(),
        ] {
            text.push('|');
            text.push_str(part);
        }
    }
    if let Some(name) = &card.name {
        text.push('|');
        text.push_str(name.expose());
    }
    text
}

/// The card `sealed_text` wrote; `None` if the text is not that.
fn unsealed_card(text: &str) -> Option<CardData> {
    let mut parts = text.splitn(6, '|');
    let number = CardNumber::parse(parts.next()?).ok()?;
    let expiration = Expiration::parse_mmyy(parts.next()?).ok()?;
    let present = |part: &str| (!part.is_empty()).then(|| part.to_owned());
    let wallet = match parts.next() {
        None => None,
        Some(kind) => {
            let (cryptogram, eci) = (present(parts.next()?), present(parts.next()?));
            match kind {
                "" if cryptogram.is_none() && eci.is_none() => None,
                "" => return None,
                kind => Some(WalletProof {
                    kind: kind.parse().ok()?,
                    cryptogram,
                    eci,
                }),
            }
        }
    };
    let name = match parts.next() {
        None => None,
        Some(name) => Some(CardholderName::parse(name).ok()?),
    };
    Some(CardData {
        number,
        cvv: None,
        expiration,
        wallet,
        name,
    })
}

impl TokenService {
    /// A service over its ports: the token store, the client sessions tokens are bound to, the
    /// wallets' token opener, the vault, the BIN table, clock and ids.
    pub fn new(
        tokens: Arc<dyn TokenStore>,
        sessions: Arc<dyn ClientSessionStore>,
        wallets: Arc<dyn WalletOpener>,
        vault: Arc<dyn CardVault>,
        bins: Arc<dyn BinLookup>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            tokens,
            sessions,
            wallets,
            apple_pay: None,
            vault,
            bins,
            clock,
            ids,
        }
    }

    /// Apple Pay merchant validation through Apple's gateway, with the merchant identity
    /// certificate `gateway` presents.
    #[must_use]
    pub fn with_apple_pay_gateway(mut self, gateway: Arc<dyn ApplePayGateway>) -> Self {
        self.apple_pay = Some(gateway);
        self
    }

    /// The card behind token `id` of the caller's platform and mode, for a payment on `terms`.
    /// A single-use token is used up by this call, and the client session it was made under is
    /// held for the payment until the payment's completion or
    /// [`TokenService::release_session`]. A token that may not pay on `terms` is refused and
    /// left as it was.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn redeem(
        &self,
        who: &Principal,
        id: &TokenId,
        terms: PaymentTerms<'_>,
    ) -> Result<Redeemed, TokenError> {
        let terms = TakeTerms {
            merchant: terms.merchant.clone(),
            amount: terms.amount,
            currency: terms.currency,
            now: self.clock.now(),
        };
        let token = match self.tokens.take(&who.scope, id, &terms).await? {
            Taken::Token(token) => *token,
            Taken::Unusable => {
                return Err(Invalid::new(
                    "payment.token",
                    "no such token, or it was used or has expired",
                )
                .into());
            }
            Taken::SessionHeld => {
                return Err(Invalid::new(
                    "payment.token",
                    "another payment under the token's client session is in progress",
                )
                .into());
            }
            Taken::Refused(invalid) => return Err(invalid.into()),
        };
        let session = token.client_session_id.clone().map(|id| HeldSession {
            id,
            until: terms.hold_until(),
        });
        let card = self.unseal(&token);
        let card = match card {
            Ok(card) if card.expiration.is_past(terms.now) => Err(TokenError::Invalid(
                Invalid::new("payment.token", "the tokenized card has expired"),
            )),
            other => other,
        };
        match card {
            Ok(card) => Ok(Redeemed {
                card,
                client_session: session,
            }),
            Err(err) => {
                if let Some(session) = &session {
                    self.release_session(who, session).await;
                }
                Err(err)
            }
        }
    }

    fn unseal(&self, token: &Token) -> Result<CardData, TokenError> {
        let id = &token.id;
        let corrupt = |what: &str| StoreError::Unexpected(format!("token {id}: {what}"));
        let text = self
            .vault
            .open(id.as_str(), &token.sealed)
            .map_err(|e| corrupt(&e.to_string()))?;
        Ok(unsealed_card(&text).ok_or_else(|| corrupt("sealed card"))?)
    }

    /// Releases client session `id` from a payment that did not succeed, so that another token
    /// of the session can pay. A release that fails is logged: the hold lapses by itself after
    /// `token::SESSION_HOLD`.
    pub async fn release_session(&self, who: &Principal, held: &HeldSession) {
        if let Err(e) = self.sessions.release(&who.scope, held).await {
            tracing::error!(error = %e, session = %held.id, "could not release a client session; its hold lapses by itself");
        }
    }

    /// The open session a client secret names, for a token made under it; anything else (a
    /// malformed or wrong secret, another platform's or mode's session, one that is closed or
    /// expired) is one refusal that names `clientSecret` and says nothing more.
    async fn session_for(
        &self,
        who: &Principal,
        secret: &str,
        method: PaymentMethod,
    ) -> Result<(ClientSessionId, MerchantId), TokenError> {
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
        if session.status_at(self.clock.now()) != SessionStatus::Open {
            return Err(refused().into());
        }
        if !session.payment_methods.contains(&method) {
            return Err(Invalid::new(
                "clientSecret",
                format!("the client session does not take {method} payments"),
            )
            .into());
        }
        Ok((session.id, session.merchant_id))
    }

    /// One token of the caller's platform and mode.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn get(&self, who: &Principal, id: &TokenId) -> Result<Option<Token>, TokenError> {
        Ok(self.tokens.find(&who.scope, id).await?)
    }

    /// Deletes one token of the caller's platform and mode, and the card sealed in it: a
    /// customer's saved card removed on request, or a token that should no longer pay. Later
    /// payments with it are refused as with a token that never existed. `false` when there is
    /// no such token.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn delete(&self, who: &Principal, id: &TokenId) -> Result<bool, TokenError> {
        match self.tokens.delete(&who.scope, id).await {
            Ok(()) => Ok(true),
            Err(StoreError::NotFound) => Ok(false),
            Err(e) => Err(e.into()),
        }
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
        let card = card.check(self.clock.now(), CvvRule::Optional)?;
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
            Some(secret) => Some(self.session_for(who, secret, PaymentMethod::Card).await?.0),
        };
        let bound = Binding {
            client_session_id,
            merchant_id: None,
        };
        self.save(who, kind, &card, bound, reply).await
    }

    /// Opens a wallet's token (Google Pay, Apple Pay) with the keys of the caller's mode and
    /// stores a single-use token for its card, bound to the client session whose secret is
    /// given. A token the page asked for another merchant than the session's is refused.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), wallet = %wallet))]
    pub async fn create_from_wallet(
        &self,
        who: &Principal,
        wallet: WalletKind,
        token: &str,
        client_secret: Option<&str>,
        reply: Option<&Recorder<'_, Token>>,
    ) -> Result<Token, TokenError> {
        let now = self.clock.now();
        let opened = self.wallets.open(wallet, who.scope.mode, token, now)?;
        if opened.expiration.is_past(now) {
            return Err(Invalid::new("wallet.token", "the wallet's card has expired").into());
        }
        let client_session_id = match client_secret {
            None => None,
            Some(secret) => {
                let method = match wallet {
                    WalletKind::ApplePay => PaymentMethod::ApplePay,
                    WalletKind::GooglePay => PaymentMethod::GooglePay,
                };
                let (id, merchant) = self.session_for(who, secret, method).await?;
                if opened
                    .merchant_hint
                    .as_deref()
                    .is_some_and(|hint| hint != merchant.as_str())
                {
                    return Err(Invalid::new(
                        "wallet.token",
                        "was requested for another merchant than the client session's",
                    )
                    .into());
                }
                Some(id)
            }
        };
        // The merchant the page asked the wallet for: a payment with the token must be for it.
        let merchant_id = opened
            .merchant_hint
            .as_deref()
            .map(|hint| {
                MerchantId::parse("wallet.token", hint).map_err(|_| {
                    Invalid::new(
                        "wallet.token",
                        "was requested for a gatewayMerchantId that is not a Holdfast merchant id",
                    )
                })
            })
            .transpose()?;
        if !self
            .tokens
            .claim_wallet_payment(wallet, &opened.message_id, now)
            .await?
        {
            return Err(Invalid::new(
                "wallet.token",
                "has already been made into a token: one wallet payment makes one token",
            )
            .into());
        }
        let card = CardData {
            number: opened.number,
            cvv: None,
            expiration: opened.expiration,
            wallet: Some(opened.proof),
            name: None,
        };
        let bound = Binding {
            client_session_id,
            merchant_id,
        };
        self.save(who, TokenKind::SingleUse, &card, bound, reply)
            .await
    }

    /// Apple Pay's merchant validation for a page on `domain`: the session Apple's sheet needs
    /// before it shows. With a merchant identity certificate configured, Apple's gateway is
    /// asked (both modes: Apple's sandbox sheets validate against the same gateways); without
    /// one, a test-mode caller gets a sandbox session of our own and a live-mode caller is told
    /// Apple Pay is not set up.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn apple_pay_merchant_session(
        &self,
        who: &Principal,
        request: MerchantValidation,
    ) -> Result<MerchantSession, TokenError> {
        if !is_apple_validation_url(&request.validation_url) {
            return Err(Invalid::new(
                "validationUrl",
                "must be one of Apple Pay's merchant-validation endpoints (https://apple-pay-gateway….apple.com/paymentservices/…)",
            )
            .into());
        }
        if !is_domain_name(&request.domain) {
            return Err(
                Invalid::new("domainName", "must be the page's host name, in lower case").into(),
            );
        }
        // The name Apple's sheet shows the shopper: the rule of every free-text name (no
        // invisible or direction-changing characters to disguise it).
        let display_name = crate::text::bounded_text(
            "displayName",
            &request.display_name,
            1,
            DISPLAY_NAME_MAX_CHARS,
        )?;
        let request = MerchantValidation {
            display_name,
            ..request
        };
        if let Some(gateway) = &self.apple_pay {
            return Ok(MerchantSession::Apple(
                gateway.start_session(&request).await?,
            ));
        }
        if who.scope.mode != crate::mode::Mode::Test {
            return Err(WalletRefusal::NotConfigured(WalletKind::ApplePay).into());
        }
        let now = self.clock.now();
        let millis = |at: time::OffsetDateTime| {
            i64::try_from(at.unix_timestamp_nanos() / 1_000_000).unwrap_or(i64::MAX)
        };
        Ok(MerchantSession::Sandbox(SandboxSession {
            merchant_session_identifier: format!("SANDBOX_{}", self.ids.next_id()),
            epoch_timestamp: millis(now),
            expires_at: millis(now + time::Duration::minutes(5)),
            nonce: self.ids.key_secret(),
            merchant_identifier: "merchant.dev.holdfast.sandbox".to_owned(),
            domain_name: request.domain,
            display_name: request.display_name,
        }))
    }

    async fn save(
        &self,
        who: &Principal,
        kind: TokenKind,
        card: &CardData,
        bound: Binding,
        reply: Option<&Recorder<'_, Token>>,
    ) -> Result<Token, TokenError> {
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
            client_session_id: bound.client_session_id,
            wallet: card.wallet.as_ref().map(|proof| proof.kind),
            merchant_id: bound.merchant_id,
        };
        self.tokens.save(&token, reply_for(reply, &token)).await?;
        Ok(token)
    }
}

#[cfg(test)]
mod tests;
