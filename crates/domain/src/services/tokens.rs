//! Creating card tokens (spec 5.3): any key may create a single-use token; only a private key
//! may create a vault token.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::ids::{ClientSessionId, MerchantId, TokenId};
use crate::merchant::Currency;
use crate::metadata::Metadata;
use crate::payment::card::{CardNumber, CardholderName, Expiration};
use crate::payment::token::{HeldSession, Token};
use crate::payment::wallet::{GatewayFailure, WalletProof, WalletRefusal};
use crate::ports::{
    ApplePayGateway, BinInfo, BinLookup, CardData, CardVault, ClientSessionStore, Clock, Ids,
    StoreError, TokenStore, WalletOpener,
};

mod create;
mod redeem;

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

/// What a new token is bound to (the client session it was made under, the merchant its wallet
/// payment was requested for) and what the platform attached to it.
struct Binding {
    client_session_id: Option<ClientSessionId>,
    merchant_id: Option<MerchantId>,
    metadata: Metadata,
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
}

#[cfg(test)]
mod tests;
