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
        },
        plan_id: None,
        created_on: NOON,
        updated_on: NOON,
    }
}
