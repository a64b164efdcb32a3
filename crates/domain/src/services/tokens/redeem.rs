//! Redeeming a token for one payment, and giving its client session back when the payment
//! did not succeed.

use super::{PaymentTerms, Redeemed, TokenError, TokenService, unsealed_card};
use crate::Invalid;
use crate::auth::Principal;
use crate::ids::TokenId;
use crate::payment::token::{HeldSession, TakeTerms, Taken, Token};
use crate::ports::{CardData, StoreError};

impl TokenService {
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
}
