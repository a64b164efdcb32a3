use crate::payment_rows::NewTxnRow;
use diesel::pg::Pg;
use diesel::query_builder::QueryFragment;
use holdfast_domain::ids::{ConnectionId, PlanId, PlatformId};
use holdfast_domain::merchant::Currency;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::brand::{CardBrand, FundingType};
use holdfast_domain::payment::transaction::{AuthStatus, AvsCode, CvvCode};
use holdfast_domain::payment::transaction::{Authorization, Named, PaymentSummary};
use time::macros::datetime;

use super::*;

pub(crate) fn pending(parent: Option<TxnId>) -> Transaction {
    Transaction {
        id: TxnId::from_suffix("1"),
        kind: TxnType::Auth,
        merchant_id: MerchantId::from_suffix("1"),
        platform_id: PlatformId::from_suffix("1"),
        amount: 1000,
        currency: Currency::USD,
        fee: 0,
        created_on: datetime!(2026-11-25 10:00 UTC),
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
            approved_amount: 0,
            avs: AvsCode::Unavailable,
            cvv: CvvCode::NotProcessed,
            partial: false,
            processor_code: String::new(),
            decline_code: None,
            processor_message: "pending".into(),
            processor_transaction_id: String::new(),
            status: AuthStatus::Pending,
        },
        mode: Mode::Test,
        state: TxnState::Pending,
        parent_id: parent,
        refunded_amount: 0,
        reference: None,
        metadata: holdfast_domain::metadata::Metadata::default(),
    }
}

/// diesel-async prepares a statement once per connection only when it is safe to cache; a
/// hot statement that is not costs a parse round trip on every payment (as an `Option`
/// field written as `DEFAULT` once did to the pending insert, a 30 % loss in the bench).
#[test]
fn the_pending_insert_is_prepared_once_with_or_without_a_parent() {
    for parent in [None, Some(TxnId::from_suffix("0"))] {
        let x = pending(parent);
        let insert = diesel::insert_into(t::table).values(NewTxnRow::from(&x));
        let sql = diesel::debug_query::<Pg, _>(&insert).to_string();
        assert!(
            insert.is_safe_to_cache_prepared(&Pg).unwrap(),
            "{:?} {sql}",
            x.parent_id
        );
    }
}
