//! The form's questions by name, with the words that label them.

/// Every question of the form, by its name (the page's, the API's, underwriting's), with the
/// words that label it. Underwriting asks again about these by name.
pub const FIELDS: &[(&str, &str)] = &[
    ("legalName", "Legal name"),
    ("dbaName", "Doing business as"),
    ("businessType", "Business type"),
    ("country", "Country"),
    ("taxId", "Tax id"),
    ("addressLine1", "Address"),
    ("addressLine2", "Address, second line"),
    ("city", "City"),
    ("region", "State or region"),
    ("postalCode", "Postal code"),
    ("website", "Website"),
    ("mcc", "Merchant category code"),
    ("monthlyVolume", "Expected monthly card volume"),
    ("owners", "Owners"),
    ("accountHolder", "Account holder"),
    ("routingNumber", "Routing number"),
    ("accountNumber", "Account number"),
    ("iban", "IBAN"),
];

/// The words that label field `name`, if it is one of the form's.
pub fn field_label(name: &str) -> Option<&'static str> {
    FIELDS.iter().find(|(f, _)| *f == name).map(|(_, l)| *l)
}
