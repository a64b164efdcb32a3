//! The tables of merchant onboarding (boarding and compliance forms) and of what processors
//! tell Holdfast later.

diesel::table! {
    use diesel::sql_types::{Binary, Nullable, Text};
    use crate::timestamp::Ts;

    boarding_forms (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        status -> Text,
        link_hash -> Binary,
        expires_on -> Ts,
        answers -> Text,
        tax_id_key -> Nullable<Text>,
        tax_id_nonce -> Nullable<Binary>,
        tax_id_sealed -> Nullable<Binary>,
        tax_id_last4 -> Nullable<Text>,
        bank_key -> Nullable<Text>,
        bank_nonce -> Nullable<Binary>,
        bank_sealed -> Nullable<Binary>,
        bank_last4 -> Nullable<Text>,
        requested_fields -> Text,
        reason -> Nullable<Text>,
        submitted_by -> Nullable<Text>,
        submitted_on -> Nullable<Ts>,
        submitted_from -> Nullable<Text>,
        created_on -> Ts,
        updated_on -> Ts,
    }
}

diesel::table! {
    use diesel::sql_types::{Nullable, Text};
    use crate::timestamp::Ts;

    compliance_forms (id) {
        id -> Text,
        platform_id -> Text,
        mode -> Text,
        merchant_id -> Text,
        status -> Text,
        issued_on -> Ts,
        due_on -> Ts,
        signer_name -> Nullable<Text>,
        signer_title -> Nullable<Text>,
        attested_on -> Nullable<Ts>,
        attested_from -> Nullable<Text>,
        attested_saq -> Nullable<Text>,
    }
}

diesel::table! {
    use diesel::sql_types::{Bool, Nullable, Text};
    use crate::timestamp::Ts;

    processor_notices (id) {
        id -> Text,
        connection_id -> Text,
        platform_id -> Text,
        mode -> Text,
        event_code -> Text,
        success -> Bool,
        psp_reference -> Text,
        merchant_reference -> Nullable<Text>,
        item -> Text,
        outcome -> Text,
        received_on -> Ts,
    }
}
