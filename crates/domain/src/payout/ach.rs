//! The live bank rail's numbering and calendar (docs/money.md, "The live rail"): which trace
//! numbers and file id modifier a NACHA file takes, and on which day it settles.

use time::{Date, Duration, Weekday};

use crate::Invalid;

/// The file id modifiers a day's files take, in order: a bank tells apart the files one
/// originator sends on one day by them, so a day holds at most 36 files.
pub const MODIFIERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// The largest trace sequence number: seven digits.
pub const LAST_TRACE: u32 = 9_999_999;

/// The numbers a file is written with: its entries' trace sequence numbers count on from
/// `first_trace`, and `modifier` tells it apart from the originator's other files that day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileNumbers {
    /// The first entry's trace sequence number (1 to `LAST_TRACE`).
    pub first_trace: u32,
    /// The file id modifier.
    pub modifier: char,
}

impl FileNumbers {
    /// The numbers of the next file of `entries` credits through one originating bank, whose
    /// last file ended at trace `last_trace` (`None` before the first), and which has sent
    /// `files_today` files on the file's day. Traces count on from file to file, so a return
    /// names one entry; after 9,999,999 they start again at 1 (a return is then matched to
    /// the newest entry with its trace). Refused on the day's 37th file.
    pub fn next(
        last_trace: Option<u32>,
        files_today: usize,
        entries: usize,
    ) -> Result<Self, Invalid> {
        let modifier = MODIFIERS.chars().nth(files_today).ok_or_else(|| {
            Invalid::new(
                "modifier",
                "36 files were sent today already: a bank takes no more from one originator",
            )
        })?;
        let count = u32::try_from(entries)
            .ok()
            .filter(|n| (1..=LAST_TRACE).contains(n))
            .ok_or_else(|| Invalid::new("credits", "a file holds 1 to 9999999 credits"))?;
        let after = last_trace.unwrap_or(0);
        let first_trace = if after.saturating_add(count) > LAST_TRACE {
            1
        } else {
            after + 1
        };
        Ok(Self {
            first_trace,
            modifier,
        })
    }
}

/// The day a file created on `created` settles: the next weekday. Bank holidays are not
/// known to Holdfast; the bank settles such a file on its next banking day.
pub fn effective_date(created: Date) -> Date {
    let mut day = created + Duration::DAY;
    while matches!(day.weekday(), Weekday::Saturday | Weekday::Sunday) {
        day += Duration::DAY;
    }
    day
}

#[cfg(test)]
mod tests {
    use time::macros::date;

    use super::*;

    #[test]
    fn a_file_settles_on_the_next_weekday() {
        let cases = [
            (date!(2026 - 12 - 07), date!(2026 - 12 - 08)), // Monday → Tuesday
            (date!(2026 - 12 - 10), date!(2026 - 12 - 11)), // Thursday → Friday
            (date!(2026 - 12 - 11), date!(2026 - 12 - 14)), // Friday → Monday
            (date!(2026 - 12 - 12), date!(2026 - 12 - 14)), // Saturday → Monday
            (date!(2026 - 12 - 13), date!(2026 - 12 - 14)), // Sunday → Monday
            (date!(2026 - 12 - 31), date!(2027 - 01 - 01)), // over the year's end
        ];
        for (created, effective) in cases {
            assert_eq!(effective_date(created), effective, "{created}");
        }
    }

    #[test]
    fn traces_count_on_and_modifiers_go_through_the_day() {
        let cases = [
            (None, 0, 3, Some((1, 'A'))),
            (Some(3), 1, 2, Some((4, 'B'))),
            (Some(3), 25, 1, Some((4, 'Z'))),
            (Some(3), 26, 1, Some((4, '0'))),
            (Some(3), 35, 1, Some((4, '9'))),
            (Some(3), 36, 1, None),
            (Some(9_999_998), 0, 1, Some((9_999_999, 'A'))),
            (Some(9_999_998), 0, 2, Some((1, 'A'))),
            (Some(9_999_999), 0, 1, Some((1, 'A'))),
            (None, 0, 0, None),
            (None, 0, 10_000_000, None),
        ];
        for (last, today, entries, expected) in cases {
            let got = FileNumbers::next(last, today, entries)
                .ok()
                .map(|n| (n.first_trace, n.modifier));
            assert_eq!(got, expected, "{last:?} {today} {entries}");
        }
    }
}
