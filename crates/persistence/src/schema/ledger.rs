//! The tables of the double-entry ledger (docs/money.md): a journal is one row, with a column
//! per account purpose it can move.

diesel::table! {
    use diesel::sql_types::{BigInt, Text};
    use crate::timestamp::Ts;

    ledger_journals (source_id, kind) {
        source_id -> Text,
        kind -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        currency -> Text,
        posted_on -> Ts,
        merchant_pending -> BigInt,
        merchant_available -> BigInt,
        merchant_in_transit -> BigInt,
        platform_fees -> BigInt,
        processor_receivable -> BigInt,
        loan_receivable -> BigInt,
        loan_fees -> BigInt,
        platform_funding -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Text};
    use crate::timestamp::Ts;

    settlement_runs (id) {
        id -> Text,
        ran_on -> Ts,
        unsettled_from -> Ts,
        transactions -> BigInt,
        merchants -> BigInt,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Nullable, Text};
    use crate::timestamp::Ts;

    payouts (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        currency -> Text,
        amount -> BigInt,
        state -> Text,
        method -> Text,
        bank_form_id -> Nullable<Text>,
        bank_last4 -> Text,
        failure_code -> Nullable<Text>,
        created_on -> Ts,
        updated_on -> Ts,
        ach_file_id -> Nullable<Text>,
        trace_number -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Binary, Nullable, Text};
    use crate::timestamp::Ts;

    ach_files (id) {
        id -> Text,
        odfi -> Text,
        created_on -> Ts,
        created_day -> Text,
        modifier -> Text,
        effective_on -> Text,
        first_trace -> BigInt,
        last_trace -> BigInt,
        entries -> BigInt,
        total -> BigInt,
        body_key -> Text,
        body_nonce -> Binary,
        body_sealed -> Binary,
        sent_on -> Nullable<Ts>,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Nullable, Text};
    use crate::timestamp::Ts;

    payout_schedules (merchant_id) {
        merchant_id -> Text,
        platform_id -> Text,
        mode -> Text,
        every -> Text,
        weekday -> Nullable<Text>,
        minimum -> BigInt,
        updated_on -> Ts,
    }
}
