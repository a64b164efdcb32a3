//! Settlement: a charge's net, pending for the merchant when it is posted, becomes available
//! once its plan's settlement delay has passed (docs/money.md).
//!
//! | journal | when | entries (debit +, credit -) |
//! |---|---|---|
//! | settlement, of a charge | its plan's delay after the charge was posted, at the first run after | merchant pending +net, merchant available -net |
//!
//! The net is what the charge put in pending (the gross less the fees); a charge that left the
//! merchant nothing pending has nothing to settle. Each charge settles once: the settlement is
//! a journal of the charge's source, and a source posts each kind once. Runs are set-based (one
//! SQL transaction moves every charge that is due), so a run interrupted posts nothing and the
//! next one settles what it would have.

use time::{Duration, OffsetDateTime};

use crate::Invalid;
use crate::ids::{MerchantId, PlatformId, SettlementRunId};
use crate::merchant::Currency;
use crate::mode::Mode;

/// How long a plan's charges stay pending before they settle: whole days, 0 to 30.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SettlementDelay(u8);

impl SettlementDelay {
    /// What a plan that names none settles after: two days, as card networks fund a business.
    pub const DEFAULT: Self = Self(2);
    /// The longest a plan may hold its merchants' money.
    pub const MAX_DAYS: u8 = 30;

    /// A delay of `days`, refused under `field` outside 0 to 30.
    pub fn new(field: &'static str, days: i64) -> Result<Self, Invalid> {
        u8::try_from(days)
            .ok()
            .filter(|d| *d <= Self::MAX_DAYS)
            .map(Self)
            .ok_or_else(|| Invalid::new(field, "must be a whole number of days from 0 to 30"))
    }

    /// The delay in days.
    pub fn days(self) -> u8 {
        self.0
    }

    /// The latest a charge may have been posted to be due at `now`.
    pub fn cutoff(self, now: OffsetDateTime) -> OffsetDateTime {
        now.checked_sub(Duration::days(i64::from(self.0)))
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

impl Default for SettlementDelay {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// One settlement run, as the worker starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettlementRun {
    /// The run's id, kept with what it settled.
    pub id: SettlementRunId,
    /// When it runs: what was due by then settles, posted at this time.
    pub now: OffsetDateTime,
    /// Read every charge ever posted, not only those since the oldest the last run left
    /// pending: for charges left behind (`holdfast ledger settle --from-start`).
    pub from_start: bool,
}

/// How far back a run looks before the oldest charge the last run left unsettled: charges are
/// stamped before they commit, so one stamped just before a run may commit just after it.
pub const LATE_COMMIT_GRACE: Duration = Duration::minutes(10);

/// What one run moved to available for one merchant, per currency: the data of its
/// `balance.available` event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MerchantSettled {
    /// The merchant whose money became available.
    pub merchant_id: MerchantId,
    /// Its platform, which hears of it.
    #[serde(skip)]
    pub platform_id: PlatformId,
    /// The mode of the money.
    #[serde(skip)]
    pub mode: Mode,
    /// The run that settled it.
    pub settlement_run_id: SettlementRunId,
    /// What became available, one entry per currency.
    pub settled: Vec<SettledAmount>,
}

/// What became available in one currency, and from how many charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SettledAmount {
    /// The currency.
    pub currency: Currency,
    /// Minor units moved from pending to available (below zero when the charges' fees outran
    /// them).
    pub amount: i64,
    /// How many charges settled.
    pub transactions: u64,
}

/// What a run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SettlementReport {
    /// Charges settled.
    pub transactions: u64,
    /// Merchants whose money became available (one `balance.available` event each).
    pub merchants: u64,
    /// Loan repayments withheld from what became available.
    pub withheld: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::fixtures::NOON;

    #[test]
    fn a_delay_is_whole_days_from_zero_to_thirty() {
        for days in [0, 1, 2, 30] {
            assert_eq!(
                SettlementDelay::new("settlementDelayDays", days).map(SettlementDelay::days),
                Ok(u8::try_from(days).unwrap())
            );
        }
        for days in [-1, 31, 256, i64::MAX, i64::MIN] {
            let refused = SettlementDelay::new("settlementDelayDays", days).unwrap_err();
            assert_eq!(refused.field, "settlementDelayDays");
            assert!(!refused.message.contains(&days.to_string()), "never echoed");
        }
        assert_eq!(SettlementDelay::default().days(), 2);
    }

    #[test]
    fn a_charge_is_due_once_its_delay_has_passed() {
        let two = SettlementDelay::DEFAULT;
        assert_eq!(two.cutoff(NOON), NOON - Duration::days(2));
        assert_eq!(SettlementDelay::new("d", 0).unwrap().cutoff(NOON), NOON);
    }
}
