//! Loans and their repayments (issue 42, docs/loans.md).

diesel::table! {
    use diesel::sql_types::{BigInt, Binary, Integer, Nullable, Text};
    use crate::timestamp::Ts;

    loans (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        currency -> Text,
        state -> Text,
        advance -> BigInt,
        fee -> BigInt,
        withhold_bps -> Integer,
        minimum_per_30_days -> Nullable<BigInt>,
        repaid -> BigInt,
        offer_expires_on -> Ts,
        link_hash -> Nullable<Binary>,
        accepted_by -> Nullable<Text>,
        accepted_name -> Nullable<Text>,
        consent_reference -> Nullable<Text>,
        accepted_address -> Nullable<Text>,
        accepted_on -> Nullable<Ts>,
        payout_id -> Nullable<Text>,
        paid_out_on -> Nullable<Ts>,
        created_on -> Ts,
        updated_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Nullable, Text};
    use crate::timestamp::Ts;

    loan_repayments (id) {
        id -> Text,
        loan_id -> Text,
        kind -> Text,
        amount -> BigInt,
        settlement_run_id -> Nullable<Text>,
        outstanding -> BigInt,
        created_on -> Ts,
    }
}
