//! The waiting lines of a delivery loop: notifications this process handed itself when it wrote
//! them (`crate::load`) wait here, one line per subscription, until their
//! subscription, its platform and the process have room under their caps. Each line starts
//! oldest first, and the lines take turns, so a burst beyond a subscription's cap waits a few
//! milliseconds in order instead of going to the claim, where the hand-offs that followed it
//! would overtake it.

use std::collections::{HashMap, VecDeque};

use holdfast_domain::ids::WebhookId;
use holdfast_domain::ports::Claimed;
use holdfast_domain::ports::SubscriptionChange;
use time::OffsetDateTime;

use crate::load::{AttemptOwner, DeliveryLoad};

/// Handed-off notifications waiting for room, per subscription.
#[derive(Debug, Default)]
pub struct Lines {
    lines: HashMap<WebhookId, VecDeque<Claimed>>,
    /// Subscriptions with a line, in turn order.
    turns: VecDeque<WebhookId>,
}

/// What `Lines::take` took out of the lines.
#[derive(Debug, Default)]
pub struct TakenRows {
    /// Each counted in flight on `load`: start them.
    pub start: Vec<Claimed>,
    /// Waited too long to be attempted within their lease: left to it, and claimed after it.
    pub expired: Vec<Claimed>,
}

impl Lines {
    /// Puts `row` at the end of its subscription's line.
    pub fn push(&mut self, row: Claimed) {
        let line = self.lines.entry(row.webhook_id.clone()).or_default();
        if line.is_empty() {
            self.turns.push_back(row.webhook_id.clone());
        }
        line.push_back(row);
    }

    /// Puts each of `rows` at the end of its subscription's line, in order.
    pub fn push_all(&mut self, rows: Vec<Claimed>) {
        for row in rows {
            self.push(row);
        }
    }

    /// Brings the rows of `change`'s subscription waiting here up to date with it: they are
    /// then sent as it says, or skipped if it is inactive or gone.
    pub fn apply(&mut self, change: &SubscriptionChange) {
        for row in self.lines.get_mut(change.webhook()).into_iter().flatten() {
            change.apply_to(&mut row.subscription);
        }
    }

    /// Rows waiting.
    pub fn len(&self) -> usize {
        self.lines.values().map(VecDeque::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// Takes, a row per subscription in turn, every head row that has room on `load` now (each
    /// counted there as it is taken), until a whole round takes none or the process is full.
    /// A row written before `oldest` is no longer started: its lease would not cover a whole
    /// attempt.
    pub fn take(&mut self, load: &DeliveryLoad, oldest: OffsetDateTime) -> TakenRows {
        let mut taken = TakenRows::default();
        let mut idle = 0;
        while idle < self.turns.len() && load.free() > 0 {
            let Some(webhook) = self.turns.pop_front() else {
                break;
            };
            let Some(line) = self.lines.get_mut(&webhook) else {
                continue;
            };
            while line.front().is_some_and(|row| row.created_on < oldest) {
                taken.expired.extend(line.pop_front());
            }
            let started = match line.front() {
                Some(head) if load.try_start(&AttemptOwner::of(head)) => {
                    taken.start.extend(line.pop_front());
                    true
                }
                _ => false,
            };
            if line.is_empty() {
                // A line gone is no idle turn: the round is one shorter.
                self.lines.remove(&webhook);
                if started {
                    idle = 0;
                }
            } else {
                self.turns.push_back(webhook);
                idle = if started { 0 } else { idle.saturating_add(1) };
            }
        }
        load.left_lines(
            taken
                .start
                .iter()
                .chain(&taken.expired)
                .map(|r| &r.webhook_id),
        );
        taken
    }

    /// Empties the lines, leaving every row to its lease; how many there were.
    pub fn leave_to_lease(&mut self, load: &DeliveryLoad) -> usize {
        self.turns.clear();
        let rows: Vec<Claimed> = self.lines.drain().flat_map(|(_, line)| line).collect();
        load.left_lines(rows.iter().map(|r| &r.webhook_id));
        rows.len()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::load::LoadLimits;
    use holdfast_domain::ids::{NotificationId, PlatformId};

    use super::*;

    const T0: OffsetDateTime = OffsetDateTime::UNIX_EPOCH;

    fn load(
        concurrency: u32,
        per_platform: u32,
        per_subscription: u32,
    ) -> std::sync::Arc<DeliveryLoad> {
        DeliveryLoad::claiming(LoadLimits {
            concurrency,
            per_platform,
            per_subscription,
            lease: Duration::from_secs(30),
        })
    }

    fn row(n: u32, platform: &str, webhook: &str, seconds: i64) -> Claimed {
        Claimed {
            id: NotificationId::from_trusted(format!("ntf_{n}")),
            event_id: holdfast_domain::ids::EventId::from_trusted(format!("evt_{n}")),
            platform_id: PlatformId::from_trusted(platform.to_owned()),
            webhook_id: WebhookId::from_trusted(webhook.to_owned()),
            event_type: "merchant.created".into(),
            event_data: "{}".into(),
            created_on: T0 + time::Duration::seconds(seconds),
            subscription: None,
        }
    }

    fn ids(rows: &[Claimed]) -> Vec<&str> {
        rows.iter().map(|r| r.id.as_str()).collect()
    }

    #[test]
    fn a_line_starts_oldest_first_within_its_subscriptions_cap() {
        let load = load(10, 10, 2);
        let mut lines = Lines::default();
        for n in 1..=4 {
            lines.push(row(n, "pfm_a", "wh_a", 0));
        }
        let taken = lines.take(&load, T0);
        assert_eq!(ids(&taken.start), ["ntf_1", "ntf_2"]);
        assert_eq!(lines.len(), 2);
        load.ended(&AttemptOwner::of(&taken.start[0]), 1);
        assert_eq!(
            ids(&lines.take(&load, T0).start),
            ["ntf_3"],
            "one place freed, the next in line"
        );
        assert!(
            lines.take(&load, T0).start.is_empty(),
            "no room, nothing taken"
        );
    }

    #[test]
    fn subscriptions_take_turns_within_their_platforms_cap() {
        let load = load(10, 2, 10);
        let mut lines = Lines::default();
        for n in 1..=3 {
            lines.push(row(n, "pfm_a", "wh_a", 0));
        }
        lines.push(row(4, "pfm_b", "wh_c", 0));
        let taken = lines.take(&load, T0);
        assert_eq!(
            ids(&taken.start),
            ["ntf_1", "ntf_4", "ntf_2"],
            "a row per subscription in turn, each platform up to its cap"
        );
        load.ended(&AttemptOwner::of(&taken.start[0]), 1);
        assert_eq!(ids(&lines.take(&load, T0).start), ["ntf_3"]);
    }

    #[test]
    fn a_line_emptied_by_expiry_does_not_end_the_round() {
        let load = load(10, 10, 10);
        let mut lines = Lines::default();
        lines.push(row(1, "pfm_a", "wh_a", 0));
        lines.push(row(2, "pfm_b", "wh_b", 9));
        let taken = lines.take(&load, T0 + time::Duration::seconds(5));
        assert_eq!(ids(&taken.expired), ["ntf_1"]);
        assert_eq!(
            ids(&taken.start),
            ["ntf_2"],
            "the next line still gets its turn"
        );
    }

    #[test]
    fn the_lines_stop_when_the_process_is_full() {
        let load = load(2, 10, 10);
        let mut lines = Lines::default();
        lines.push(row(1, "pfm_a", "wh_a", 0));
        lines.push(row(2, "pfm_b", "wh_b", 0));
        lines.push(row(3, "pfm_c", "wh_c", 0));
        let taken = lines.take(&load, T0);
        assert_eq!(ids(&taken.start), ["ntf_1", "ntf_2"]);
        load.ended(&AttemptOwner::of(&taken.start[0]), 1);
        assert_eq!(
            ids(&lines.take(&load, T0).start),
            ["ntf_3"],
            "the next turn, once room is back"
        );
    }

    #[test]
    fn a_row_that_waited_past_its_attempts_lease_is_left_to_the_claim() {
        let load = load(10, 10, 1);
        let mut lines = Lines::default();
        lines.push(row(1, "pfm_a", "wh_a", 0));
        lines.push(row(2, "pfm_a", "wh_a", 0));
        lines.push(row(3, "pfm_a", "wh_a", 6));
        let first = lines.take(&load, T0);
        assert_eq!(ids(&first.start), ["ntf_1"]);
        load.ended(&AttemptOwner::of(&first.start[0]), 1);
        let later = lines.take(&load, T0 + time::Duration::seconds(5));
        assert_eq!(ids(&later.expired), ["ntf_2"]);
        assert_eq!(ids(&later.start), ["ntf_3"]);
        assert!(lines.is_empty());
    }
}
