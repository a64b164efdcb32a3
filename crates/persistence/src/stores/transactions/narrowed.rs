//! The transaction list's filters, each in the SQL only when it is used.

use diesel::dsl::{Asc, Eq, Gt, GtEq, Lt};
use diesel::prelude::*;
use diesel::query_dsl::methods;
use holdfast_domain::page::PageRequest;
use holdfast_domain::ports::TxnFilter;

use crate::schema::transactions as t;
use crate::timestamp::Instant;

/// What narrowing the transaction list takes: each optional filter keeps the query's type.
pub(super) trait Narrows<'a>:
    Sized
    + methods::FilterDsl<Eq<t::merchant_id, &'a str>, Output = Self>
    + methods::FilterDsl<Eq<t::reference, &'a str>, Output = Self>
    + methods::FilterDsl<Eq<t::kind, &'static str>, Output = Self>
    + methods::FilterDsl<Eq<t::state, &'static str>, Output = Self>
    + methods::FilterDsl<GtEq<t::created_on, Instant>, Output = Self>
    + methods::FilterDsl<Lt<t::created_on, Instant>, Output = Self>
    + methods::FilterDsl<Lt<t::id, &'a str>, Output = Self>
    + methods::FilterDsl<Gt<t::id, &'a str>, Output = Self>
    + methods::OrderDsl<Asc<t::id>, Output = Self>
{
}

impl<'a, Q> Narrows<'a> for Q where
    Q: methods::FilterDsl<Eq<t::merchant_id, &'a str>, Output = Q>
        + methods::FilterDsl<Eq<t::reference, &'a str>, Output = Q>
        + methods::FilterDsl<Eq<t::kind, &'static str>, Output = Q>
        + methods::FilterDsl<Eq<t::state, &'static str>, Output = Q>
        + methods::FilterDsl<GtEq<t::created_on, Instant>, Output = Q>
        + methods::FilterDsl<Lt<t::created_on, Instant>, Output = Q>
        + methods::FilterDsl<Lt<t::id, &'a str>, Output = Q>
        + methods::FilterDsl<Gt<t::id, &'a str>, Output = Q>
        + methods::OrderDsl<Asc<t::id>, Output = Q>
{
}

/// The list's boxed query (its filters are only known at run time; boxing ties it to one
/// backend, so each backend boxes its own), narrowed to what was asked for: a filter is in the
/// SQL only when it is used, so the indexes serve it.
pub(super) fn narrowed<'a, Q: Narrows<'a>>(
    mut query: Q,
    filter: &'a TxnFilter,
    page: &'a PageRequest,
) -> Q {
    if let Some(cursor) = &page.starting_after {
        query = query.filter(t::id.lt(cursor.as_str()));
    }
    // The page just newer than the cursor, read oldest first (`Page::from_overfetch_ascending`).
    if let Some(cursor) = &page.ending_before {
        query = query.filter(t::id.gt(cursor.as_str())).order(t::id.asc());
    }
    if let Some(merchant) = &filter.merchant_id {
        query = query.filter(t::merchant_id.eq(merchant.as_str()));
    }
    if let Some(kind) = filter.kind {
        query = query.filter(t::kind.eq(kind.as_str()));
    }
    if let Some(state) = filter.state {
        query = query.filter(t::state.eq(state.as_str()));
    }
    if let Some(reference) = &filter.reference {
        query = query.filter(t::reference.eq(reference.as_str()));
    }
    if let Some(from) = filter.created_from {
        query = query.filter(t::created_on.ge(Instant(from)));
    }
    if let Some(until) = filter.created_until {
        query = query.filter(t::created_on.lt(Instant(until)));
    }
    query
}
