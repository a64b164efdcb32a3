//! Balance transactions (`GET /v1/balance-transactions`, docs/money.md): each journal that moves
//! a merchant's money, as the merchant reads it. The list of a merchant's balance transactions
//! sums to its balances: each one says how much it moved in each of them.

use serde::Serialize;
use time::OffsetDateTime;

use super::{Journal, JournalKind, Purpose};
pub use crate::ids::BalanceTransactionId;
use crate::ids::{MerchantId, PayoutId};
use crate::merchant::Currency;

/// Where in a list a balance transaction stands: lists run newest first by when posted, then
/// by source and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// When its journal was posted.
    pub posted_on: OffsetDateTime,
    /// Its journal's source.
    pub source: String,
    /// Its journal's kind.
    pub kind: JournalKind,
}

/// Each kind's letter in an id, and the prefix of its sources' ids.
const KINDS: &[(JournalKind, char, &str)] = &[
    (JournalKind::Charge, 'c', "txn_"),
    (JournalKind::Refund, 'r', "txn_"),
    (JournalKind::Settlement, 's', "txn_"),
    (JournalKind::Reversal, 'v', "txn_"),
    (JournalKind::Payout, 'p', "po_"),
    (JournalKind::PayoutPaid, 'd', "po_"),
    (JournalKind::PayoutReturned, 'b', "po_"),
    (JournalKind::LoanAdvance, 'a', "loan_"),
    (JournalKind::LoanWithholding, 'w', "lrp_"),
    (JournalKind::LoanRepayment, 'e', "lrp_"),
    (JournalKind::LoanChargeOff, 'o', "loan_"),
];

/// Microseconds since 1970 in base 36, eleven digits: enough until the year 5000.
const TIME_DIGITS: usize = 11;

impl BalanceTransactionId {
    /// The id of the journal posted at `posted_on`, of `kind`, for `source`.
    pub fn of(position: &Position) -> Self {
        let (_, letter, prefix) = KINDS
            .iter()
            .find(|(kind, _, _)| *kind == position.kind)
            .copied()
            .unwrap_or((position.kind, 'x', ""));
        let micros = u64::try_from(position.posted_on.unix_timestamp_nanos() / 1_000).unwrap_or(0);
        let source = position
            .source
            .strip_prefix(prefix)
            .unwrap_or(&position.source);
        Self::from_trusted(format!(
            "{}{}{letter}{source}",
            Self::PREFIX,
            base36(micros)
        ))
    }

    /// Where the journal this id names stands, or `None` when it names none we could post.
    pub fn position(&self) -> Option<Position> {
        let rest = self.as_str().strip_prefix(Self::PREFIX)?;
        let time = rest.get(..TIME_DIGITS)?;
        let letter = rest.get(TIME_DIGITS..=TIME_DIGITS)?.chars().next()?;
        let source = rest.get(TIME_DIGITS + 1..)?;
        let micros = u64::from_str_radix(time, 36).ok()?;
        let (kind, _, prefix) = KINDS.iter().find(|(_, l, _)| *l == letter).copied()?;
        let posted_on =
            OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros) * 1_000).ok()?;
        (!source.is_empty()).then(|| Position {
            posted_on,
            source: format!("{prefix}{source}"),
            kind,
        })
    }
}

/// `n` in base 36, `TIME_DIGITS` digits (lower case), zero-padded.
fn base36(mut n: u64) -> String {
    let mut digits = [b'0'; TIME_DIGITS];
    for digit in digits.iter_mut().rev() {
        *digit = b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize];
        n /= 36;
    }
    String::from_utf8_lossy(&digits).into_owned()
}

/// How a journal moved each of a merchant's balances, in its currency's minor units, as the
/// merchant reads them (what it holds grows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BalanceChanges {
    /// The change of what is not yet settled.
    pub pending: i64,
    /// The change of what may be paid out.
    pub available: i64,
    /// The change of what a payout is taking to the bank.
    pub in_transit: i64,
}

/// One journal that moved a merchant's money, as the merchant reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BalanceTransaction {
    /// Its id (`btx_…`).
    pub id: BalanceTransactionId,
    /// The merchant whose money it moved.
    pub merchant_id: MerchantId,
    /// Why: `charge`, `refund`, `settlement`, `reversal`, `payout`, `payout_paid`,
    /// `payout_returned`, `loan_advance`, `loan_withholding`, `loan_repayment`,
    /// `loan_charge_off`.
    #[serde(rename = "type")]
    pub kind: JournalKind,
    /// What it records: the transaction (`txn_…`), the payout (`po_…`), the loan (`loan_…`)
    /// or the loan's repayment (`lrp_…`).
    pub source_id: String,
    /// The currency of its amounts.
    pub currency: Currency,
    /// The gross amount: what was paid or refunded, before the fee (`net + fee`).
    pub amount: i64,
    /// What the platform earned from it (its fee; negative when a fee was given back).
    pub fee: i64,
    /// What it changed of all the merchant holds: pending, available and in transit together.
    /// A settlement or a payout made moves money between them and nets zero; a payout paid
    /// takes its amount away.
    pub net: i64,
    /// How it moved each balance.
    pub balances: BalanceChanges,
    /// The payout it belongs to, for a payout's journals; `null` otherwise (a payout takes an
    /// available balance, not given charges: docs/money.md).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<PayoutId>))]
    pub payout_id: Option<PayoutId>,
    /// When it was posted.
    #[serde(serialize_with = "crate::payment::transaction::serialize_timestamp")]
    #[cfg_attr(feature = "openapi", schema(schema_with = crate::schema::timestamp))]
    pub created_on: OffsetDateTime,
}

impl BalanceTransaction {
    /// `journal` as its merchant reads it.
    pub fn of(journal: &Journal) -> Self {
        let h = &journal.heading;
        // Credits are what the merchant is owed, and what the platform earned.
        let held = |purpose| journal.amount_to(purpose).saturating_neg();
        let balances = BalanceChanges {
            pending: held(Purpose::MerchantPending),
            available: held(Purpose::MerchantAvailable),
            in_transit: held(Purpose::MerchantInTransit),
        };
        let net = balances
            .pending
            .saturating_add(balances.available)
            .saturating_add(balances.in_transit);
        let fee = held(Purpose::PlatformFees);
        let is_payout = matches!(
            h.kind,
            JournalKind::Payout | JournalKind::PayoutPaid | JournalKind::PayoutReturned
        );
        Self {
            id: BalanceTransactionId::of(&Position {
                posted_on: h.posted_on,
                source: h.source.clone(),
                kind: h.kind,
            }),
            merchant_id: h.merchant_id.clone(),
            kind: h.kind,
            source_id: h.source.clone(),
            currency: h.currency,
            amount: net.saturating_add(fee),
            fee,
            net,
            balances,
            payout_id: is_payout.then(|| PayoutId::from_trusted(h.source.clone())),
            created_on: h.posted_on,
        }
    }
}

#[cfg(test)]
mod tests;
