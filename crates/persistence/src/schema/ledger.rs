//! The tables of the double-entry ledger (docs/money.md).

diesel::table! {
    use diesel::sql_types::Text;
    use crate::timestamp::Ts;

    journals (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        kind -> Text,
        source_id -> Text,
        currency -> Text,
        posted_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Text};

    ledger_entries (journal_id, purpose) {
        journal_id -> Text,
        purpose -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        currency -> Text,
        amount -> BigInt,
    }
}

diesel::joinable!(ledger_entries -> journals (journal_id));
diesel::allow_tables_to_appear_in_same_query!(journals, ledger_entries);
