use proptest::prelude::*;

use super::*;
use crate::ids::{ConnectionId, MerchantId, PlanId, PlatformId, TxnId};
use crate::merchant::Currency;
use crate::mode::Mode;
use crate::payment::brand::{CardBrand, FundingType};
use crate::payment::transaction::{
    AuthStatus, Authorization, AvsCode, CvvCode, Named, PaymentSummary,
};
use crate::services::fixtures::NOON;

/// A transaction of `kind` in `state` for which the processor approved `approved` and the plan
/// charged `fee`.
pub(crate) fn txn(kind: TxnType, state: TxnState, approved: i64, fee: i64) -> Transaction {
    Transaction {
        id: TxnId::from_suffix("1"),
        kind,
        merchant_id: MerchantId::from_suffix("M"),
        platform_id: PlatformId::from_suffix("P"),
        amount: approved,
        currency: Currency::USD,
        fee,
        created_on: NOON,
        payment: PaymentSummary {
            bin: "411111".into(),
            brand: CardBrand::Visa,
            last4: "1111".into(),
            funding: FundingType::Credit,
        },
        plan: Named {
            id: PlanId::from_suffix("1"),
            name: "Default".into(),
        },
        processor: Named {
            id: ConnectionId::from_suffix("1"),
            name: "Sandbox".into(),
        },
        authorization: Authorization {
            approved_amount: approved,
            avs: AvsCode::Unavailable,
            cvv: CvvCode::NotProcessed,
            partial: false,
            processor_code: "00".into(),
            decline_code: None,
            processor_message: "Approved".into(),
            processor_transaction_id: "psp".into(),
            status: AuthStatus::Approved,
        },
        mode: Mode::Test,
        state,
        parent_id: None,
        refunded_amount: 0,
        reference: None,
        metadata: crate::metadata::Metadata::default(),
    }
}

fn posted(t: &Transaction) -> Option<(JournalKind, Vec<(Purpose, i64)>)> {
    posted_after(t, None)
}

fn posted_after(
    t: &Transaction,
    original: Option<&Transaction>,
) -> Option<(JournalKind, Vec<(Purpose, i64)>)> {
    journal_for(t, original, NOON).map(|j| {
        let mut entries: Vec<(Purpose, i64)> =
            j.entries().iter().map(|e| (e.purpose, e.amount)).collect();
        entries.sort();
        (j.heading.kind, entries)
    })
}

/// The module's table, row by row: what each type in each state posts, for a gross of 1000
/// and a fee of 30; and what a capture collects of its auth's fee.
#[test]
fn every_outcome_posts_what_the_table_says() {
    use Purpose::{MerchantAvailable, MerchantPending, PlatformFees, ProcessorReceivable};
    let charge = Some((
        JournalKind::Charge,
        vec![
            (MerchantPending, -970),
            (PlatformFees, -30),
            (ProcessorReceivable, 1000),
        ],
    ));
    for &kind in TxnType::ALL {
        for &state in TxnState::ALL {
            let expected = match (kind, state) {
                (TxnType::Sale | TxnType::Capture, TxnState::Settled) => charge.clone(),
                (TxnType::Refund, TxnState::Settled) => Some((
                    JournalKind::Refund,
                    vec![
                        (MerchantAvailable, 1030),
                        (PlatformFees, -30),
                        (ProcessorReceivable, -1000),
                    ],
                )),
                _ => None,
            };
            assert_eq!(
                posted(&txn(kind, state, 1000, 30)),
                expected,
                "{kind} {state}"
            );
        }
    }
    let auth = txn(TxnType::Auth, TxnState::Captured, 1000, 30);
    let capture = txn(TxnType::Capture, TxnState::Settled, 1000, 29);
    assert_eq!(
        posted_after(&capture, Some(&auth)),
        Some((
            JournalKind::Charge,
            vec![
                (MerchantPending, -941),
                (PlatformFees, -59),
                (ProcessorReceivable, 1000)
            ]
        )),
        "a capture collects its auth's fee with its own: what a sale of 1000 posts"
    );
    assert_eq!(
        posted_after(
            &txn(TxnType::Capture, TxnState::Settled, 10, 1),
            Some(&auth)
        ),
        Some((
            JournalKind::Charge,
            vec![
                (MerchantPending, 21),
                (PlatformFees, -31),
                (ProcessorReceivable, 10)
            ]
        )),
        "a small capture's fees can exceed it: the merchant's pending owes the difference"
    );
    let refund = txn(TxnType::Refund, TxnState::Settled, 1000, 0);
    assert_eq!(
        posted_after(&refund, Some(&capture)),
        posted(&refund),
        "only a capture collects its original's fee"
    );
    assert_eq!(
        posted(&txn(TxnType::Sale, TxnState::Settled, 30, 30)),
        Some((
            JournalKind::Charge,
            vec![(PlatformFees, -30), (ProcessorReceivable, 30)]
        )),
        "a fee of the whole amount leaves the merchant nothing pending"
    );
    assert_eq!(
        posted(&txn(TxnType::Refund, TxnState::Settled, 500, 0)),
        Some((
            JournalKind::Refund,
            vec![(MerchantAvailable, 500), (ProcessorReceivable, -500)]
        )),
        "a refund without a fee"
    );
    let partial = Transaction {
        amount: 1000,
        ..txn(TxnType::Sale, TxnState::Settled, 600, 20)
    };
    assert_eq!(
        posted(&partial).unwrap().1,
        vec![
            (MerchantPending, -580),
            (PlatformFees, -20),
            (ProcessorReceivable, 600)
        ],
        "the gross is what was approved, not what was asked"
    );
}

proptest! {
    /// Whatever the type, state, gross and fee: a journal, when there is one, sums to zero in
    /// the transaction's currency and names its merchant and source; the merchant is owed the
    /// gross less the fee for a charge and loses the refund plus its fee.
    #[test]
    fn every_journal_sums_to_zero(
        kind in prop::sample::select(TxnType::ALL),
        state in prop::sample::select(TxnState::ALL),
        gross in 0_i64..=1_000_000_000_000,
        fee_share in 0_i64..=100,
    ) {
        let fee = gross / 100 * fee_share;
        let t = txn(kind, state, gross, fee);
        if let Some(j) = journal_for(&t, None, NOON) {
            let sum: i64 = j.entries().iter().map(|e| e.amount).sum();
            prop_assert_eq!(sum, 0);
            prop_assert_eq!(j.heading.currency, t.currency);
            prop_assert_eq!(&j.heading.merchant_id, &t.merchant_id);
            prop_assert_eq!(j.heading.source.as_str(), t.id.as_str());
            let merchant =
                j.amount_to(Purpose::MerchantPending) + j.amount_to(Purpose::MerchantAvailable);
            match j.heading.kind {
                JournalKind::Charge => prop_assert_eq!(merchant, -(gross - fee)),
                JournalKind::Refund => prop_assert_eq!(merchant, gross + fee),
                JournalKind::Settlement
                | JournalKind::Reversal
                | JournalKind::Payout
                | JournalKind::PayoutPaid
                | JournalKind::PayoutReturned
                | JournalKind::LoanAdvance
                | JournalKind::LoanWithholding
                | JournalKind::LoanRepayment
                | JournalKind::LoanChargeOff => {
                    prop_assert!(false, "a payment posts only charges and refunds");
                }
            }
        }
    }
}
