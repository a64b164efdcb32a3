//! What the service unit tests share: a stopped clock, fixed ids, a Visa-only BIN table and a
//! merchant.

use time::OffsetDateTime;
use time::macros::datetime;

use crate::ids::{MerchantId, PlatformId};
use crate::merchant::{Currency, Merchant, MerchantDetails, MerchantName};
use crate::mode::Mode;
use crate::payment::brand::{CardBrand, FundingType};
use crate::ports::{BinInfo, MockBinLookup, MockClock, MockIds};

pub(crate) const NOON: OffsetDateTime = datetime!(2026-11-22 12:00 UTC);

/// A clock stopped at [`NOON`].
pub(crate) fn clock_at_noon() -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOON);
    clock
}

/// Ids that are always `id`; enough where a test creates one resource.
pub(crate) fn fixed_ids(id: &str) -> MockIds {
    let mut ids = MockIds::new();
    ids.expect_next_id().return_const(id.to_owned());
    ids.expect_key_secret().return_const(format!("secret{id}"));
    ids
}

/// A BIN table that calls every card a Visa credit card.
pub(crate) fn visa_bins() -> MockBinLookup {
    let mut bins = MockBinLookup::new();
    bins.expect_lookup().returning(|bin| BinInfo {
        bin: bin.into(),
        brand: CardBrand::Visa,
        funding: FundingType::Credit,
        issuer: None,
        country: None,
    });
    bins
}

/// A test-mode merchant "Shop" of `platform`, taking USD, made at [`NOON`].
pub(crate) fn shop(id: MerchantId, platform: PlatformId) -> Merchant {
    Merchant {
        id,
        platform_id: platform,
        mode: Mode::Test,
        details: MerchantDetails {
            name: MerchantName::parse("Shop").expect("a valid name"),
            currency: Currency::USD,
            email: None,
            metadata: crate::metadata::Metadata::default(),
        },
        plan_id: None,
        onboarding_status: crate::boarding::OnboardingStatus::NotStarted,
        raw_cards_on: None,
        created_on: NOON,
        updated_on: NOON,
    }
}

/// A single-use test-mode token `tkn_01` of platform `1`, made at [`NOON`], of a Visa card (the
/// sealed bytes stand-ins), made under client session `cs_<session>` if given.
pub(crate) fn token(session: Option<&str>) -> crate::payment::token::Token {
    use crate::payment::token::{Token, TokenKind};
    Token {
        id: crate::ids::TokenId::from_suffix("01"),
        platform_id: PlatformId::from_suffix("1"),
        mode: Mode::Test,
        kind: TokenKind::SingleUse,
        card: crate::payment::transaction::PaymentSummary {
            bin: "411111".into(),
            brand: CardBrand::Visa,
            last4: "1111".into(),
            funding: FundingType::Credit,
        },
        sealed: crate::ports::Sealed {
            key_id: "k1".into(),
            nonce: vec![0; 12],
            ciphertext: vec![1; 40],
        },
        created_on: NOON,
        expires_on: None,
        used_on: None,
        client_session_id: session.map(crate::ids::ClientSessionId::from_suffix),
        wallet: None,
        merchant_id: None,
        metadata: crate::metadata::Metadata::default(),
    }
}

/// Client session `cs_01S` of platform `1` for merchant `1`: 2500 USD, cards and Google Pay,
/// made at [`NOON`] for 30 minutes, not held.
pub(crate) fn client_session(
    status: crate::payment::client_session::SessionStatus,
) -> crate::payment::client_session::ClientSession {
    use crate::payment::client_session::{ClientSession, PaymentMethod};
    ClientSession {
        id: crate::ids::ClientSessionId::from_suffix("01S"),
        platform_id: PlatformId::from_suffix("1"),
        mode: Mode::Test,
        merchant_id: MerchantId::from_suffix("1"),
        amount: 2500,
        currency: Currency::USD,
        payment_methods: vec![PaymentMethod::Card, PaymentMethod::GooglePay],
        secret_hash: Vec::new(),
        status,
        transaction_id: None,
        created_on: NOON,
        expires_on: NOON + time::Duration::minutes(30),
        closed_on: None,
        held_until: None,
    }
}
