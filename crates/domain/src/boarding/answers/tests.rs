use super::*;
use time::macros::datetime;

const NOW: OffsetDateTime = datetime!(2026-11-24 12:00 UTC);

fn typed(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn complete_us() -> BTreeMap<String, String> {
    typed(&[
        ("legalName", "Corner Shop LLC"),
        ("businessType", "llc"),
        ("country", "US"),
        ("taxId", "12-3456789"),
        ("addressLine1", "1 Main St"),
        ("city", "Springfield"),
        ("postalCode", "12345"),
        ("website", "https://corner.example.com"),
        ("mcc", "5734"),
        ("monthlyVolume", "25,000"),
        ("owner1Name", "Ada Lovelace"),
        ("owner1DateOfBirth", "1980-04-30"),
        ("owner1Ownership", "60"),
        ("accountHolder", "Corner Shop LLC"),
        ("routingNumber", "021000021"),
        ("accountNumber", "000123456789"),
    ])
}

#[test]
fn a_complete_us_form_splits_secrets_off_and_misses_nothing() {
    let (answers, secrets) = check(&complete_us(), NOW, None).unwrap();
    assert_eq!(secrets.tax_id.as_deref(), Some("123456789"));
    assert_eq!(secrets.bank_account.as_deref(), Some("000123456789"));
    assert_eq!(answers.monthly_volume, Some(25_000));
    assert_eq!(answers.routing_number.as_deref(), Some("021000021"));
    assert!(answers.missing(true, true).is_empty());
    let kept = serde_json::to_string(&answers).unwrap();
    assert!(
        !kept.contains("3456789") && !kept.contains("123456789"),
        "{kept}"
    );
}

#[test]
fn every_refused_field_is_named_and_nothing_typed_is_repeated() {
    let cases: &[(&str, &str, &str)] = &[
        ("taxId", "98-76", "taxId"),
        ("routingNumber", "021000022", "routingNumber"),
        ("accountNumber", "12", "accountNumber"),
        ("mcc", "99", "mcc"),
        ("website", "http://corner.example.com", "website"),
        ("monthlyVolume", "lots", "monthlyVolume"),
        ("owner1DateOfBirth", "2015-01-01", "owner1DateOfBirth"),
        ("owner1Ownership", "20", "owner1Ownership"),
        ("businessType", "empire", "businessType"),
        ("country", "ZZ", "country"),
    ];
    for (field, value, named) in cases {
        let mut form = complete_us();
        form.insert((*field).to_owned(), (*value).to_owned());
        let errors = check(&form, NOW, None).unwrap_err();
        assert!(
            errors.iter().any(|e| e.field == *named),
            "{field}: {errors:?}"
        );
        for e in &errors {
            assert!(!e.message.contains(value), "{field}: {}", e.message);
        }
    }
}

#[test]
fn owners_add_up_to_at_most_the_whole() {
    let mut form = complete_us();
    form.extend(typed(&[
        ("owner2Name", "Charles Babbage"),
        ("owner2DateOfBirth", "1979-12-26"),
        ("owner2Ownership", "50"),
    ]));
    let errors = check(&form, NOW, None).unwrap_err();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].field, "owners");
}

#[test]
fn a_european_form_takes_an_iban_and_no_routing_number() {
    let mut form = complete_us();
    for f in ["routingNumber", "accountNumber"] {
        form.remove(f);
    }
    form.extend(typed(&[
        ("country", "DE"),
        ("taxId", "DE123456789"),
        ("iban", "DE89 3704 0044 0532 0130 00"),
    ]));
    let (answers, secrets) = check(&form, NOW, None).unwrap();
    assert_eq!(
        secrets.bank_account.as_deref(),
        Some("DE89370400440532013000")
    );
    assert!(answers.missing(true, true).is_empty());
    assert_eq!(answers.missing(true, false), ["iban"]);
}

#[test]
fn a_form_is_filled_over_several_visits() {
    let (first, _) = check(&typed(&[("legalName", "Corner Shop LLC")]), NOW, None).unwrap();
    let (second, _) = check(&typed(&[("city", "Springfield")]), NOW, None).unwrap();
    let both = first.merged(second);
    assert_eq!(both.legal_name.as_deref(), Some("Corner Shop LLC"));
    assert_eq!(both.city.as_deref(), Some("Springfield"));
    assert!(both.missing(false, false).contains(&"taxId"));
    let (us, _) = check(&complete_us(), NOW, None).unwrap();
    let (to_germany, _) = check(&typed(&[("country", "DE")]), NOW, Some(Country::Us)).unwrap();
    assert_eq!(
        us.merged(to_germany).routing_number,
        None,
        "a US routing number stays in the US"
    );
    let secrets_without_country = check(&typed(&[("taxId", "12-3456789")]), NOW, None).unwrap_err();
    assert_eq!(secrets_without_country[0].field, "taxId");
    let (_, later) = check(&typed(&[("taxId", "12-3456789")]), NOW, Some(Country::Us)).unwrap();
    assert_eq!(
        later.tax_id.as_deref(),
        Some("123456789"),
        "the country an earlier visit saved"
    );
}
