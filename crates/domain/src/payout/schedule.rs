//! How often a merchant's available balance is paid out without being asked.

use time::Weekday;

use crate::Invalid;

crate::words! {
    /// How often a schedule pays out.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum PayoutInterval {
        /// Only when asked (`POST /v1/payouts`): every merchant's until its platform sets one.
        Manual,
        /// At the first payout run of each day (UTC).
        Daily,
        /// At the first payout run of one weekday (UTC).
        Weekly,
    }
}

/// A merchant's payout schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayoutSchedule {
    /// How often.
    pub interval: PayoutInterval,
    /// The day of a weekly schedule; `None` for the others.
    pub weekday: Option<Weekday>,
    /// The least available balance paid out, in minor units: below it, the run waits.
    pub minimum: i64,
}

impl PayoutSchedule {
    /// Every merchant's until its platform sets one: payouts only when asked.
    pub const MANUAL: Self = Self {
        interval: PayoutInterval::Manual,
        weekday: None,
        minimum: 0,
    };

    /// A schedule as asked for: a weekday exactly when weekly, a minimum of 0 or more; each
    /// refusal names its field (`interval`, `weekday`, `minimumAmount`).
    pub fn new(
        interval: PayoutInterval,
        weekday: Option<Weekday>,
        minimum: i64,
    ) -> Result<Self, Invalid> {
        match (interval, weekday) {
            (PayoutInterval::Weekly, None) => {
                return Err(Invalid::new("weekday", "is required for a weekly schedule"));
            }
            (PayoutInterval::Daily | PayoutInterval::Manual, Some(_)) => {
                return Err(Invalid::new("weekday", "is only for a weekly schedule"));
            }
            _ => {}
        }
        if minimum < 0 {
            return Err(Invalid::new("minimumAmount", "must be 0 or more"));
        }
        Ok(Self {
            interval,
            weekday,
            minimum,
        })
    }

    /// Whether a run on `day` pays out under it.
    pub fn pays_on(self, day: Weekday) -> bool {
        match self.interval {
            PayoutInterval::Manual => false,
            PayoutInterval::Daily => true,
            PayoutInterval::Weekly => self.weekday == Some(day),
        }
    }
}

/// A merchant's schedule as the API shows it (`GET /v1/merchants/{id}/payout-schedule`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MerchantSchedule {
    /// The merchant it pays out.
    pub merchant_id: crate::ids::MerchantId,
    /// How often.
    pub interval: PayoutInterval,
    /// The day of a weekly schedule, `monday` to `sunday`; `null` for the others.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "friday"))]
    pub weekday: Option<&'static str>,
    /// The least available balance paid out, in minor units.
    pub minimum_amount: i64,
}

impl MerchantSchedule {
    /// `merchant`'s `schedule`, as shown.
    pub fn of(merchant: crate::ids::MerchantId, schedule: PayoutSchedule) -> Self {
        Self {
            merchant_id: merchant,
            interval: schedule.interval,
            weekday: schedule.weekday.map(weekday_name),
            minimum_amount: schedule.minimum,
        }
    }
}

/// A weekday's name as the API and the database write it: `monday` to `sunday`.
pub fn weekday_name(day: Weekday) -> &'static str {
    match day {
        Weekday::Monday => "monday",
        Weekday::Tuesday => "tuesday",
        Weekday::Wednesday => "wednesday",
        Weekday::Thursday => "thursday",
        Weekday::Friday => "friday",
        Weekday::Saturday => "saturday",
        Weekday::Sunday => "sunday",
    }
}

/// Reads a weekday by its name; refused under `field` otherwise (never repeated).
pub fn parse_weekday(field: &'static str, raw: &str) -> Result<Weekday, Invalid> {
    let mut day = Weekday::Monday;
    for _ in 0..7 {
        if weekday_name(day) == raw {
            return Ok(day);
        }
        day = day.next();
    }
    Err(Invalid::new(field, "must be a weekday, monday to sunday"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every interval with and without a weekday, and the minimum's edge: only the rules'
    /// combinations stand; each pays on the days it says.
    #[test]
    fn a_schedule_is_its_interval_its_day_and_its_minimum() {
        use PayoutInterval::{Daily, Manual, Weekly};
        let cases = [
            (Manual, None, 0, Ok(())),
            (Daily, None, 5000, Ok(())),
            (Weekly, Some(Weekday::Friday), 0, Ok(())),
            (Weekly, None, 0, Err("weekday")),
            (Daily, Some(Weekday::Friday), 0, Err("weekday")),
            (Manual, Some(Weekday::Friday), 0, Err("weekday")),
            (Daily, None, -1, Err("minimumAmount")),
        ];
        for (interval, weekday, minimum, expected) in cases {
            let got = PayoutSchedule::new(interval, weekday, minimum);
            assert_eq!(
                got.as_ref().map(|_| ()).map_err(|e| e.field),
                expected,
                "{interval} {weekday:?} {minimum}"
            );
            let Ok(schedule) = got else { continue };
            let mut day = Weekday::Monday;
            for _ in 0..7 {
                let pays = match interval {
                    Manual => false,
                    Daily => true,
                    Weekly => Some(day) == weekday,
                };
                assert_eq!(schedule.pays_on(day), pays, "{interval} on {day}");
                day = day.next();
            }
        }
    }

    #[test]
    fn weekdays_by_name_and_nothing_else() {
        let mut day = Weekday::Monday;
        for _ in 0..7 {
            assert_eq!(parse_weekday("weekday", weekday_name(day)), Ok(day));
            day = day.next();
        }
        for bad in ["Monday", "Mon", "", "funday", "monday ", " friday"] {
            let refused = parse_weekday("weekday", bad).unwrap_err();
            assert_eq!(refused.field, "weekday");
            assert_eq!(
                refused.message, "must be a weekday, monday to sunday",
                "never echoed"
            );
        }
    }
}
