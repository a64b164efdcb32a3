//! Creating tokens: from card fields, from a wallet's token, and the Apple Pay merchant session
//! a wallet's sheet needs first.

use super::{Binding, TokenError, TokenService, sealed_text};
use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{ClientSessionId, MerchantId, TokenId};
use crate::metadata::Metadata;
use crate::mode::KeyType;
use crate::payment::card::{CardInput, CvvRule};
use crate::payment::client_session::{ClientSecret, PaymentMethod, SessionStatus};
use crate::payment::token::{SINGLE_USE_LIFETIME, Token, TokenKind};
use crate::payment::transaction::PaymentSummary;
use crate::payment::wallet::{
    DISPLAY_NAME_MAX_CHARS, MerchantSession, MerchantValidation, SandboxSession, WalletKind,
    WalletRefusal, is_apple_validation_url, is_domain_name,
};
use crate::ports::CardData;

impl TokenService {
    /// Checks the card and stores a single-use or vault token for it, refusing a vault token to
    /// a public key; a single-use token expires after `SINGLE_USE_LIFETIME`. With a client
    /// secret, the single-use token is bound to that open session. Metadata is kept on vault
    /// tokens only (so only a private key sets it): a single-use token lives minutes, and its
    /// payment carries metadata of its own.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        kind: TokenKind,
        card: CardInput,
        client_secret: Option<&str>,
        metadata: Metadata,
        reply: Option<&Recorder<'_, Token>>,
    ) -> Result<Token, TokenError> {
        let card = card.check(self.clock.now(), CvvRule::Optional)?;
        if kind == TokenKind::Vault && who.key_type == KeyType::Public {
            return Err(TokenError::VaultNeedsPrivateKey);
        }
        if !metadata.is_empty() && kind != TokenKind::Vault {
            return Err(Invalid::new(
                "metadata",
                "is kept on vault tokens only; give a single-use token's payment the metadata",
            )
            .into());
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
            metadata,
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
            metadata: Metadata::default(),
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
            metadata: bound.metadata,
        };
        self.tokens.save(&token, reply_for(reply, &token)).await?;
        Ok(token)
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
}
