//! Each journal kind as a merchant reads it, and ids that name their journal.

use time::macros::datetime;

use super::*;
use crate::ids::PlatformId;
use crate::ledger::{Entry, Heading};
use crate::mode::Mode;

fn journal(kind: JournalKind, source: &str, entries: &[(Purpose, i64)]) -> Journal {
    let entries: Vec<Entry> = entries
        .iter()
        .map(|&(purpose, amount)| Entry { purpose, amount })
        .collect();
    Journal::new(
        Heading {
            platform_id: PlatformId::from_suffix("P"),
            mode: Mode::Test,
            merchant_id: MerchantId::from_suffix("M"),
            currency: Currency::USD,
            kind,
            source: source.into(),
            posted_on: datetime!(2026-12-07 10:00:00.123456 UTC),
        },
        &entries,
    )
    .unwrap()
}

/// The worked example of docs/money.md, row by row: (amount, fee, net, pending, available, in
/// transit, payout).
#[test]
fn each_kind_reads_as_the_merchant_sees_it() {
    use Purpose::{
        MerchantAvailable as A, MerchantInTransit as T, MerchantPending as P, PlatformFees as F,
        ProcessorReceivable as R,
    };
    let cases = [
        (
            JournalKind::Charge,
            "txn_1",
            vec![(P, -941), (F, -59), (R, 1000)],
            (1000, 59, 941, 941, 0, 0, false),
        ),
        (
            JournalKind::Settlement,
            "txn_1",
            vec![(P, 941), (A, -941)],
            (0, 0, 0, -941, 941, 0, false),
        ),
        (
            JournalKind::Refund,
            "txn_2",
            vec![(A, 500), (R, -500)],
            (-500, 0, -500, 0, -500, 0, false),
        ),
        (
            JournalKind::Reversal,
            "txn_1",
            vec![(A, 941), (F, 59), (R, -1000)],
            (-1000, -59, -941, 0, -941, 0, false),
        ),
        (
            JournalKind::Payout,
            "po_1",
            vec![(A, 941), (T, -941)],
            (0, 0, 0, 0, -941, 941, true),
        ),
        (
            JournalKind::PayoutPaid,
            "po_1",
            vec![(T, 941), (R, -941)],
            (-941, 0, -941, 0, 0, -941, true),
        ),
        (
            JournalKind::PayoutReturned,
            "po_1",
            vec![(T, 941), (A, -941)],
            (0, 0, 0, 0, 941, -941, true),
        ),
    ];
    for (kind, source, entries, expected) in cases {
        let b = BalanceTransaction::of(&journal(kind, source, &entries));
        let got = (
            b.amount,
            b.fee,
            b.net,
            b.balances.pending,
            b.balances.available,
            b.balances.in_transit,
            b.payout_id.is_some(),
        );
        assert_eq!(got, expected, "{kind}");
        assert_eq!(b.kind, kind);
        assert_eq!(b.source_id, source);
    }
}

/// An id names its journal: its position comes back from it, for every kind; ids that name
/// none are refused.
#[test]
fn an_id_gives_back_its_journals_position() {
    for &kind in JournalKind::ALL {
        let source = match kind {
            JournalKind::Payout | JournalKind::PayoutPaid | JournalKind::PayoutReturned => {
                "po_01JDQ8Y6M2Z4R7V9T3B5N8K1XW"
            }
            JournalKind::LoanAdvance | JournalKind::LoanChargeOff => {
                "loan_01JDQ8Y6M2Z4R7V9T3B5N8K1XW"
            }
            JournalKind::LoanWithholding | JournalKind::LoanRepayment => {
                "lrp_01JDQ8Y6M2Z4R7V9T3B5N8K1XW"
            }
            _ => "txn_01JDQ8Y6M2Z4R7V9T3B5N8K1XW",
        };
        let position = Position {
            posted_on: datetime!(2026-12-07 10:00:00.123456 UTC),
            source: source.into(),
            kind,
        };
        let id = BalanceTransactionId::of(&position);
        assert!(
            BalanceTransactionId::parse("id", id.as_str()).is_ok(),
            "{id} has the shape of an id"
        );
        assert_eq!(id.position(), Some(position), "{kind}");
    }
    for raw in [
        "btx_",
        "btx_0000000000",
        "btx_00000000000zabc",
        "btx_00000000000q1",
        "btx_0000000000-c1",
        "btx_0000000000xc",
    ] {
        assert_eq!(
            BalanceTransactionId::from_trusted(raw.into()).position(),
            None,
            "{raw}"
        );
    }
}

/// Later journals have ids that sort later (in the same second too).
#[test]
fn ids_sort_by_time() {
    let at = |t| {
        BalanceTransactionId::of(&Position {
            posted_on: t,
            source: "txn_1".into(),
            kind: JournalKind::Charge,
        })
    };
    assert!(
        at(datetime!(2026-12-07 10:00:00.000001 UTC))
            < at(datetime!(2026-12-07 10:00:00.000002 UTC))
    );
    assert!(at(datetime!(2026-12-07 10:00:00 UTC)) < at(datetime!(2027-01-01 00:00:00 UTC)));
}
