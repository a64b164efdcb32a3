//! The table of the double-entry ledger (docs/money.md): a journal is its entries.

diesel::table! {
    use diesel::sql_types::{BigInt, Text};
    use crate::timestamp::Ts;

    ledger_entries (source_id, kind, purpose) {
        source_id -> Text,
        kind -> Text,
        purpose -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        currency -> Text,
        amount -> BigInt,
        posted_on -> Ts,
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
