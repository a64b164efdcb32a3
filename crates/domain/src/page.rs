//! Cursor pagination: `limit`, and `startingAfter` (the next, older page) or `endingBefore` (the
//! previous, newer one); every page newest first.

use crate::Invalid;

/// A validated page request. Ids are time-ordered, so the cursor is simply the last id seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRequest {
    /// How many items the page holds at most: 1 to `MAX_LIMIT`.
    pub limit: u32,
    /// The id of the last item of the previous page (`startingAfter`); `None` for the first page.
    pub starting_after: Option<String>,
    /// The id of the first item of the page after the one asked for (`endingBefore`): the page
    /// holds the items just newer than it. Never given with `starting_after`.
    pub ending_before: Option<String>,
}

impl PageRequest {
    /// The page size when the request gives no `limit`.
    pub const DEFAULT_LIMIT: u32 = 10;
    /// The largest `limit` a request may ask for.
    pub const MAX_LIMIT: u32 = 100;

    /// Validates `limit` (absent, or 1 to `MAX_LIMIT`); the cursor is taken as given.
    pub fn new(limit: Option<i64>, starting_after: Option<String>) -> Result<Self, Invalid> {
        let limit = match limit {
            None => Self::DEFAULT_LIMIT,
            Some(n) if (1..=i64::from(Self::MAX_LIMIT)).contains(&n) => {
                u32::try_from(n).expect("bounded above")
            }
            Some(_) => {
                return Err(Invalid::new(
                    "limit",
                    format!("must be between 1 and {}", Self::MAX_LIMIT),
                ));
            }
        };
        Ok(Self {
            limit,
            starting_after,
            ending_before: None,
        })
    }

    /// The page just newer than `cursor` instead: `endingBefore`.
    #[must_use]
    pub fn ending_before(self, cursor: String) -> Self {
        Self {
            starting_after: None,
            ending_before: Some(cursor),
            ..self
        }
    }

    /// How many rows to fetch: one more than the page, to learn whether another page follows.
    pub fn fetch_count(&self) -> i64 {
        i64::from(self.limit) + 1
    }
}

/// One page of results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T> {
    /// The items of this page, newest first.
    pub data: Vec<T>,
    /// Whether older items follow (ask again with `startingAfter` set to the last id here); for
    /// a page asked `endingBefore`, whether newer ones do (`endingBefore` the first id here).
    pub has_more: bool,
}

impl<T> Page<T> {
    /// Builds a page from `fetch_count()` rows read oldest first from just after an
    /// `endingBefore` cursor: the page is the oldest of them, newest first, and `has_more` says
    /// that newer items follow.
    pub fn from_overfetch_ascending(mut rows: Vec<T>, request: &PageRequest) -> Self {
        let limit = request.limit as usize;
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        rows.reverse();
        Self {
            data: rows,
            has_more,
        }
    }

    /// Builds a page from `fetch_count()` rows.
    pub fn from_overfetch(mut rows: Vec<T>, request: &PageRequest) -> Self {
        let limit = request.limit as usize;
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        Self {
            data: rows,
            has_more,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_bounds() {
        for (limit, ok) in [
            (None, true),
            (Some(0), false),
            (Some(1), true),
            (Some(100), true),
            (Some(101), false),
            (Some(-1), false),
        ] {
            assert_eq!(PageRequest::new(limit, None).is_ok(), ok, "{limit:?}");
        }
        assert_eq!(PageRequest::new(None, None).unwrap().limit, 10);
    }

    #[test]
    fn overfetch_sets_has_more() {
        let req = PageRequest::new(Some(2), None).unwrap();
        assert_eq!(
            Page::from_overfetch(vec![1, 2, 3], &req),
            Page {
                data: vec![1, 2],
                has_more: true
            }
        );
        assert_eq!(
            Page::from_overfetch(vec![1, 2], &req),
            Page {
                data: vec![1, 2],
                has_more: false
            }
        );
    }
}
