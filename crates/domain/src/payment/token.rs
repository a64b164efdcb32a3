//! Card tokens. A single-use token (any key; spec 5.3) is consumed by the first transaction that
//! uses it and expires after `SINGLE_USE_LIFETIME`; a vault token (private keys only) is used
//! any number of times. The card number and expiration are kept sealed by the `CardVault`; the
//! CVV is never kept, so a token payment is sent without one (`cvv: P`).

use time::{Duration, OffsetDateTime};

use crate::ids::{ClientSessionId, PlatformId, TokenId};
use crate::mode::Mode;
use crate::ports::Sealed;

use super::transaction::PaymentSummary;

/// How long a single-use token may wait for its transaction.
pub const SINGLE_USE_LIFETIME: Duration = Duration::minutes(15);

crate::words! {
    /// How often a token can be paid with, and so which keys may create it.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum TokenKind {
        /// Consumed by its first transaction and expiring after `SINGLE_USE_LIFETIME`; any key.
        SingleUse,
        /// A multi-use token kept in the vault; private keys only.
        Vault,
    }
}

/// A card saved under a token id, so a transaction can name the token instead of the card.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The id a transaction names to pay with this card.
    pub id: TokenId,
    /// The platform whose key created the token; no other platform can use it.
    pub platform_id: PlatformId,
    /// The mode of the key that created it; only keys of the same mode can use it.
    pub mode: Mode,
    /// Single-use or vault.
    pub kind: TokenKind,
    /// The masked card (BIN, brand, last four, funding type) that may be shown.
    pub card: PaymentSummary,
    /// The card number and expiration (`NUMBER|MMYY`), sealed with the token id as context.
    pub sealed: Sealed,
    /// When the token was created.
    pub created_on: OffsetDateTime,
    /// Single-use tokens only.
    pub expires_on: Option<OffsetDateTime>,
    /// When a transaction consumed a single-use token; `None` while it is unused.
    pub used_on: Option<OffsetDateTime>,
    /// The client session the token was made under: a payment with it must match the
    /// session's merchant, amount and currency.
    pub client_session_id: Option<ClientSessionId>,
    /// The wallet the card came from, if it came from one.
    pub wallet: Option<super::wallet::WalletKind>,
    /// The merchant a wallet payment was requested for: a payment with the token must be
    /// for it.
    pub merchant_id: Option<crate::ids::MerchantId>,
    /// The platform's own key/value pairs (a private key's only); empty when it gave none.
    pub metadata: crate::metadata::Metadata,
}

/// How long a payment holds its token's client session: longer than any processor call (the
/// session is released or completed as soon as the payment ends), short enough that a payment
/// whose process died leaves the session usable again soon.
pub const SESSION_HOLD: Duration = Duration::minutes(5);

/// What one payment asks of the token it takes: the terms it pays on, checked against the token
/// and its client session inside the store's transaction that takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakeTerms {
    /// The merchant paid.
    pub merchant: crate::ids::MerchantId,
    /// The amount, in minor units.
    pub amount: i64,
    /// The merchant's currency.
    pub currency: crate::merchant::Currency,
    /// When the payment is made.
    pub now: OffsetDateTime,
}

impl TakeTerms {
    /// Until when the payment holds the token's client session.
    pub fn hold_until(&self) -> OffsetDateTime {
        self.now + SESSION_HOLD
    }

    /// Whether `token`, with its client `session` if it was made under one, may pay on these
    /// terms: a wallet token only its merchant, a session's token only while the session is open
    /// and on its merchant, amount and currency.
    pub fn admit(
        &self,
        token: &Token,
        session: Option<&super::client_session::ClientSession>,
    ) -> Result<(), crate::Invalid> {
        if token
            .merchant_id
            .as_ref()
            .is_some_and(|merchant| *merchant != self.merchant)
        {
            return Err(crate::Invalid::new(
                "merchantId",
                "is not the merchant the wallet payment was requested for",
            ));
        }
        match session {
            Some(session) => session.admits(&self.merchant, self.amount, self.currency, self.now),
            None if token.client_session_id.is_some() => Err(crate::Invalid::new(
                "payment.token",
                "the token's client session is gone",
            )),
            None => Ok(()),
        }
    }
}

/// A client session as one payment holds it: the session, and the end of this payment's hold,
/// which only this payment's completion or release matches (a later payment's hold is another).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldSession {
    /// The session held.
    pub id: ClientSessionId,
    /// When this payment's hold ends.
    pub until: OffsetDateTime,
}

/// The client session an approved payment completes, written with the payment itself so that
/// no approved payment leaves its checkout open to pay again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionClose {
    /// The payment's hold: only a session still held by it is completed.
    pub held: HeldSession,
    /// When the session closes.
    pub on: OffsetDateTime,
}

/// What became of a payment's attempt to take a token (`TokenStore::take`). Only `Token`
/// changed anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    /// Taken: a single-use token is now used and its sealed card erased from the store, and its
    /// client session, if any, is held for this payment.
    Token(Box<Token>),
    /// No such token in the caller's platform and mode, or it is used or expired.
    Unusable,
    /// Another payment holds the token's client session.
    SessionHeld,
    /// `TakeTerms::admit` refused the token or its session.
    Refused(crate::Invalid),
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::ids::MerchantId;
    use crate::merchant::Currency;
    use crate::payment::client_session::{ClientSession, SessionStatus};
    use crate::services::fixtures;

    const NOW: OffsetDateTime = fixtures::NOON;

    fn token(merchant: Option<&str>, session: Option<&str>) -> Token {
        Token {
            merchant_id: merchant.map(MerchantId::from_suffix),
            metadata: crate::metadata::Metadata::default(),
            ..fixtures::token(session)
        }
    }

    fn session(status: SessionStatus) -> ClientSession {
        fixtures::client_session(status)
    }

    /// A wallet token pays only its merchant; a session's token only on the session's terms
    /// while it is open; a token whose session cannot be found pays nothing.
    #[test]
    fn a_token_is_admitted_on_its_merchant_and_its_sessions_terms() {
        let terms = |merchant: &str, amount: i64| TakeTerms {
            merchant: MerchantId::from_suffix(merchant),
            amount,
            currency: Currency::USD,
            now: NOW,
        };
        let open = session(SessionStatus::Open);
        let done = session(SessionStatus::Completed);
        let cases = [
            (token(None, None), None, terms("1", 2500), None),
            (token(Some("1"), None), None, terms("1", 2500), None),
            (
                token(Some("1"), None),
                None,
                terms("2", 2500),
                Some("merchantId"),
            ),
            (
                token(None, Some("01S")),
                Some(&open),
                terms("1", 2500),
                None,
            ),
            (
                token(None, Some("01S")),
                Some(&open),
                terms("1", 2400),
                Some("amount"),
            ),
            (
                token(None, Some("01S")),
                Some(&open),
                terms("2", 2500),
                Some("merchantId"),
            ),
            (
                token(None, Some("01S")),
                Some(&done),
                terms("1", 2500),
                Some("payment.token"),
            ),
            (
                token(None, Some("01S")),
                None,
                terms("1", 2500),
                Some("payment.token"),
            ),
            (
                token(Some("2"), Some("01S")),
                Some(&open),
                terms("1", 2500),
                Some("merchantId"),
            ),
        ];
        for (token, session, terms, refused) in cases {
            let got = terms.admit(&token, session);
            assert_eq!(
                got.err().map(|e| e.field),
                refused,
                "{:?} {:?} {}",
                token.merchant_id,
                session.map(|s| s.status),
                terms.amount
            );
        }
        assert_eq!(terms("1", 1).hold_until(), NOW + SESSION_HOLD);
    }
}
