// Included by `schema::pg` and `schema::sqlite`, which differ only in what `Ts` is: the same
// tables, so every query is written once for both backends.

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use super::Ts;

    platforms (id) {
        id -> Text,
        name -> Text,
        owner_id -> Text,
        created_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use super::Ts;

    users (id) {
        id -> Text,
        platform_id -> Text,
        email -> Text,
        created_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Binary, Bool, Nullable, Text};
    use super::Ts;

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
    use super::Ts;

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
    }
}

diesel::allow_tables_to_appear_in_same_query!(platforms, users, api_keys, merchants);
