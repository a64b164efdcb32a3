//! `LoanStore`: loans and their repayments, each change written with its journals, payout and
//! events in one SQL transaction, and only if the loan is still as it was read.

use diesel::prelude::*;
use holdfast_domain::api_key::KeyHash;
use holdfast_domain::idempotency::KeyedAnswer;
use holdfast_domain::ids::{LoanId, MerchantId};
use holdfast_domain::loan::{Loan, LoanRepayment, LoanState, RepaymentKind};
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::ports::{
    Changed, Event, LoanChange, LoanFilter, LoanStore, Offered, ReviewDue, StoreError,
};
use holdfast_domain::scope::Scope;

use super::SqlStore;
use super::idempotency::write_reply;
use super::ledger::write_journal;
use super::loan_rows::{LoanRow, NewLoanRow, NewRepaymentRow, RepaymentOfLoan};
use super::outbox::write_event_data;
use super::payouts::{available_to, insert_payout, unused};
use crate::conn::{Conn, Lock};
use crate::error::query_error;
use crate::query::load_page;
use crate::schema::{loan_repayments as lr, loans as l};
use crate::timestamp::Instant;

/// Writes `change` in the caller's SQL transaction, if the loan is still in `change.from` and
/// unchanged since `change.read_on`. Every change of a loan is made under the payouts' lock: a
/// settlement run reads the loans it withholds for under it, so no change slips between its
/// read and its write (which would leave a merchant's net unwithheld); an early repayment is
/// taken only if the merchant's available balance, read under it, covers it; a payout is made
/// under it, as payouts are.
pub(super) async fn write_change(conn: &mut Conn, change: &LoanChange) -> QueryResult<Changed> {
    let loan = &change.loan;
    let early = change
        .repayment
        .as_ref()
        .filter(|r| r.kind == RepaymentKind::Early);
    conn.lock(Lock::Payouts).await?;
    if let Some(repayment) = early {
        let available = available_to(
            conn,
            &loan.merchant_id,
            &loan.platform_id,
            loan.mode,
            loan.currency,
        )
        .await?;
        if available < repayment.amount {
            return Ok(Changed::Short { available });
        }
    }
    let updated = conn
        .execute(
            diesel::update(
                l::table
                    .filter(l::id.eq(loan.id.as_str()))
                    .filter(l::state.eq(change.from.as_str()))
                    .filter(l::updated_on.eq(Instant(change.read_on))),
            )
            .set(NewLoanRow::from(loan)),
        )
        .await?;
    if updated == 0 {
        return Ok(Changed::Moved);
    }
    if let Some(repayment) = &change.repayment {
        conn.execute(diesel::insert_into(lr::table).values(NewRepaymentRow::from(repayment)))
            .await?;
    }
    if let Some(payout) = &change.payout {
        insert_payout(conn, payout).await?;
    }
    for journal in &change.journals {
        write_journal(conn, journal).await?;
    }
    for event in &change.events {
        write_event_data(conn, event).await?;
    }
    Ok(Changed::Changed)
}

/// The loans being repaid of the merchants a settlement posted at `posted_on` settled, in the
/// caller's SQL transaction.
pub(super) async fn repaying_loans_settled_at(
    conn: &mut Conn,
    posted_on: time::OffsetDateTime,
) -> QueryResult<Vec<LoanRow>> {
    use crate::schema::ledger_journals as j;
    conn.load(
        l::table
            .filter(l::state.eq_any([LoanState::PaidOut.as_str(), LoanState::PastDue.as_str()]))
            .filter(
                l::merchant_id.eq_any(
                    j::table
                        .filter(j::kind.eq("settlement"))
                        .filter(j::posted_on.eq(Instant(posted_on)))
                        .select(j::merchant_id),
                ),
            )
            .order(l::id.asc()),
    )
    .await
}

#[async_trait::async_trait]
impl LoanStore for SqlStore {
    async fn offer_loan(
        &self,
        loan: &Loan,
        event: &Event,
        reply: Option<KeyedAnswer>,
    ) -> Result<Offered, StoreError> {
        let mut conn = self.conn().await?;
        let written = conn
            .transaction(async |conn| {
                conn.execute(diesel::insert_into(l::table).values(NewLoanRow::from(loan)))
                    .await?;
                write_event_data(conn, event).await?;
                write_reply(conn, &loan.platform_id, loan.mode, reply.as_ref()).await
            })
            .await
            .map_err(query_error("one open loan per merchant"));
        match written {
            Ok(()) => Ok(Offered::Offered),
            Err(StoreError::Duplicate(_)) => Ok(Offered::AlreadyOpen),
            Err(e) => Err(e),
        }
    }

    async fn change_loan(
        &self,
        change: &LoanChange,
        reply: Option<KeyedAnswer>,
    ) -> Result<Changed, StoreError> {
        let loan = &change.loan;
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let changed = write_change(conn, change).await?;
            if changed == Changed::Changed {
                write_reply(conn, &loan.platform_id, loan.mode, reply.as_ref()).await?;
            }
            Ok(changed)
        })
        .await
        .map_err(query_error("loans"))
    }

    async fn get_loan(&self, scope: &Scope, id: &LoanId) -> Result<Option<Loan>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<LoanRow, _>(
            l::table
                .filter(l::id.eq(id.as_str()))
                .filter(l::platform_id.eq(scope.platform.as_str()))
                .filter(l::mode.eq(scope.mode.as_str())),
        )
        .await
        .optional()
        .map_err(query_error("loans"))?
        .map(Loan::try_from)
        .transpose()
    }

    async fn loan_by_link(&self, hash: &KeyHash) -> Result<Option<Loan>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<LoanRow, _>(l::table.filter(l::link_hash.eq(hash.as_bytes().as_slice())))
            .await
            .optional()
            .map_err(query_error("loans"))?
            .map(Loan::try_from)
            .transpose()
    }

    async fn list_loans(
        &self,
        scope: &Scope,
        filter: &LoanFilter,
        page: &PageRequest,
    ) -> Result<Page<Loan>, StoreError> {
        let mut conn = self.conn().await?;
        let merchant = filter.merchant.as_ref().map_or("", MerchantId::as_str);
        let state = filter.state.map_or("", LoanState::as_str);
        let newest = l::table
            .filter(l::platform_id.eq(scope.platform.as_str()))
            .filter(l::mode.eq(scope.mode.as_str()))
            .filter(
                l::merchant_id
                    .eq(merchant)
                    .or(unused(filter.merchant.is_some())),
            )
            .filter(l::state.eq(state).or(unused(filter.state.is_some())))
            .order(l::id.desc())
            .limit(page.fetch_count());
        load_page::<LoanRow, _, _, _, _, _, _>(
            &mut conn,
            "loans",
            newest,
            page,
            |q, after| q.filter(l::id.lt(after)),
            |q, before| q.filter(l::id.gt(before)).order(l::id.asc()),
        )
        .await
    }

    async fn repayments(
        &self,
        scope: &Scope,
        loan: &LoanId,
        page: &PageRequest,
    ) -> Result<Page<LoanRepayment>, StoreError> {
        let mut conn = self.conn().await?;
        let newest = lr::table
            .inner_join(l::table.on(l::id.eq(lr::loan_id)))
            .filter(lr::loan_id.eq(loan.as_str()))
            .filter(l::platform_id.eq(scope.platform.as_str()))
            .filter(l::mode.eq(scope.mode.as_str()))
            .select((
                (
                    lr::id,
                    lr::loan_id,
                    lr::kind,
                    lr::amount,
                    lr::settlement_run_id,
                    lr::outstanding,
                    lr::created_on,
                ),
                l::merchant_id,
                l::currency,
            ))
            .order(lr::id.desc())
            .limit(page.fetch_count());
        load_page::<RepaymentOfLoan, _, _, _, _, _, _>(
            &mut conn,
            "loan_repayments",
            newest,
            page,
            |q, after| q.filter(lr::id.lt(after)),
            |q, before| q.filter(lr::id.gt(before)).order(lr::id.asc()),
        )
        .await
    }

    async fn loans_to_review(
        &self,
        due: ReviewDue,
        after: Option<LoanId>,
        limit: u32,
    ) -> Result<Vec<Loan>, StoreError> {
        let mut conn = self.conn().await?;
        let after = after.as_ref().map_or("", LoanId::as_str);
        let offers_ended = l::state
            .eq(LoanState::Offered.as_str())
            .and(l::offer_expires_on.le(Instant(due.offers_ended_by)));
        let advances_to_pay = l::state.eq(LoanState::Accepted.as_str());
        // Every loan past due (few, and its standing is the review's to correct whatever its
        // terms), and the loans in good standing whose minimum may have fallen due.
        let past_due = l::state.eq(LoanState::PastDue.as_str());
        let minimums_due = l::state
            .eq(LoanState::PaidOut.as_str())
            .and(l::minimum_per_30_days.is_not_null())
            .and(l::paid_out_on.le(Instant(due.paid_out_by)));
        let rows: Vec<LoanRow> = conn
            .load(
                l::table
                    .filter(
                        offers_ended
                            .or(advances_to_pay)
                            .or(past_due)
                            .or(minimums_due),
                    )
                    .filter(l::id.gt(after))
                    .order(l::id.asc())
                    .limit(i64::from(limit)),
            )
            .await
            .map_err(query_error("loans"))?;
        rows.into_iter().map(Loan::try_from).collect()
    }
}
