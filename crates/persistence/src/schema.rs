//! The tables, one definition for both backends: every stored instant is a `Ts`, which each
//! backend stores its own way (`timestamp.rs`), so every query is written once.

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use crate::timestamp::Ts;

    platforms (id) {
        id -> Text,
        name -> Text,
        owner_id -> Text,
        created_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use crate::timestamp::Ts;

    users (id) {
        id -> Text,
        platform_id -> Text,
        email -> Text,
        created_on -> Ts,
        password_hash -> Nullable<Text>,
        role -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Nullable, Text};
    use crate::timestamp::Ts;

    user_links (token_hash) {
        token_hash -> Binary,
        user_id -> Text,
        platform_id -> Text,
        purpose -> Text,
        created_on -> Ts,
        expires_on -> Ts,
        used_on -> Nullable<Ts>,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Nullable, Text};
    use crate::timestamp::Ts;

    dashboard_sessions (id_hash) {
        id_hash -> Binary,
        user_id -> Text,
        platform_id -> Text,
        mode -> Text,
        created_on -> Ts,
        last_seen_on -> Ts,
        expires_on -> Ts,
        flash -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{Nullable, Text};
    use crate::timestamp::Ts;

    audit_log (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Nullable<Text>,
        actor -> Text,
        door -> Text,
        action -> Text,
        target -> Text,
        address -> Nullable<Text>,
        created_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use crate::timestamp::Ts;

    api_keys (id) {
        id -> Text,
        platform_id -> Text,
        name -> Text,
        key_type -> Text,
        mode -> Text,
        value_hash -> Binary,
        last4 -> Text,
        active -> Bool,
        created_by -> Text,
        created_on -> Ts,
        last_used_on -> Nullable<Ts>,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use crate::timestamp::Ts;

    merchants (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        name -> Text,
        currency -> Text,
        email -> Nullable<Text>,
        created_on -> Ts,
        updated_on -> Ts,
        deleted_on -> Nullable<Ts>,
        plan_id -> Nullable<Text>,
        onboarding_status -> Text,
        raw_cards_on -> Nullable<Ts>,
        metadata -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::{Nullable, Text};
    use crate::timestamp::Ts;

    processor_connections (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        name -> Text,
        kind -> Text,
        created_on -> Ts,
        account -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Bool, Integer, Text};
    use crate::timestamp::Ts;

    plans (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        name -> Text,
        fee_basis_points -> BigInt,
        fee_fixed -> BigInt,
        default_connection_id -> Text,
        is_default -> Bool,
        created_on -> Ts,
        settlement_delay_days -> Integer,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Bool, Nullable, Text};
    use crate::timestamp::Ts;

    transactions (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        kind -> Text,
        state -> Text,
        amount -> BigInt,
        currency -> Text,
        fee -> BigInt,
        created_on -> Ts,
        bin -> Text,
        brand -> Text,
        last4 -> Text,
        funding -> Text,
        plan_id -> Text,
        plan_name -> Text,
        connection_id -> Text,
        connection_name -> Text,
        approved_amount -> BigInt,
        avs -> Text,
        cvv -> Text,
        partial -> Bool,
        processor_code -> Text,
        processor_message -> Text,
        processor_transaction_id -> Text,
        status -> Text,
        parent_id -> Nullable<Text>,
        refunded_amount -> BigInt,
        decline_code -> Nullable<Text>,
        reference -> Nullable<Text>,
        metadata -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::{Nullable, Text};
    use crate::timestamp::Ts;

    events (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        event_type -> Text,
        data -> Text,
        created_on -> Ts,
        subject_id -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Integer, Nullable, Text};
    use crate::timestamp::Ts;

    idempotency_keys (platform_id, mode, key) {
        platform_id -> Text,
        mode -> Text,
        key -> Text,
        fingerprint -> Binary,
        created_on -> Ts,
        status -> Nullable<Integer>,
        body -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Nullable, Text};
    use crate::timestamp::Ts;

    tokens (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        kind -> Text,
        bin -> Text,
        brand -> Text,
        last4 -> Text,
        funding -> Text,
        key_id -> Text,
        nonce -> Binary,
        ciphertext -> Binary,
        created_on -> Ts,
        expires_on -> Nullable<Ts>,
        used_on -> Nullable<Ts>,
        client_session_id -> Nullable<Text>,
        wallet -> Nullable<Text>,
        merchant_id -> Nullable<Text>,
        metadata -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::Text;
    use crate::timestamp::Ts;

    wallet_payments (wallet, message_id) {
        wallet -> Text,
        message_id -> Text,
        seen_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Bool, Integer, Nullable, Text};
    use crate::timestamp::Ts;

    webhooks (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        endpoint_url -> Text,
        events -> Text,
        description -> Nullable<Text>,
        header_name -> Nullable<Text>,
        header_value -> Nullable<Text>,
        active -> Bool,
        secret -> Text,
        creator_id -> Text,
        consecutive_failures -> Integer,
        created_on -> Ts,
        updated_on -> Ts,
        previous_secret -> Nullable<Text>,
        previous_secret_until -> Nullable<Ts>,
        metadata -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::{Bool, Integer, Nullable, Text};
    use crate::timestamp::Ts;

    notifications (id) {
        id -> Text,
        webhook_id -> Text,
        platform_id -> Text,
        mode -> Text,
        event_id -> Text,
        event_type -> Text,
        state -> Text,
        due_on -> Ts,
        lease_until -> Nullable<Ts>,
        endpoint_url -> Nullable<Text>,
        request_body -> Nullable<Text>,
        response -> Nullable<Text>,
        requests -> Integer,
        attempted_on -> Nullable<Ts>,
        archived -> Bool,
        resent_from -> Nullable<Text>,
        created_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Integer, Nullable, Text};
    use crate::timestamp::Ts;

    emails (id) {
        id -> Text,
        recipient -> Text,
        subject -> Text,
        body -> Text,
        created_on -> Ts,
        due_on -> Ts,
        lease_until -> Nullable<Ts>,
        attempts -> Integer,
        sent_on -> Nullable<Ts>,
        failed_on -> Nullable<Ts>,
        last_error -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{Integer, Nullable, Text};

    plan_routes (plan_id, position) {
        plan_id -> Text,
        position -> Integer,
        brand -> Nullable<Text>,
        connection_id -> Text,
    }
}

diesel::table! {
    use diesel::sql_types::{BigInt, Binary, Nullable, Text};
    use crate::timestamp::Ts;

    client_sessions (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        amount -> BigInt,
        currency -> Text,
        payment_methods -> Text,
        secret_hash -> Binary,
        status -> Text,
        transaction_id -> Nullable<Text>,
        created_on -> Ts,
        expires_on -> Ts,
        closed_on -> Nullable<Ts>,
        held_until -> Nullable<Ts>,
    }
}

diesel::joinable!(notifications -> webhooks (webhook_id));
diesel::joinable!(notifications -> events (event_id));
diesel::joinable!(payouts -> ach_files (ach_file_id));

mod ledger;
mod lending;
mod onboarding;

pub use ledger::{ach_files, ledger_journals, payout_schedules, payouts, settlement_runs};
pub use lending::{loan_repayments, loans};
pub use onboarding::{boarding_forms, compliance_forms, processor_notices};

diesel::allow_tables_to_appear_in_same_query!(
    ach_files,
    loans,
    loan_repayments,
    ledger_journals,
    payouts,
    processor_notices,
    platforms,
    users,
    user_links,
    dashboard_sessions,
    audit_log,
    api_keys,
    merchants,
    processor_connections,
    plans,
    plan_routes,
    transactions,
    events,
    idempotency_keys,
    tokens,
    wallet_payments,
    client_sessions,
    webhooks,
    notifications,
    emails,
    boarding_forms,
    compliance_forms,
);
