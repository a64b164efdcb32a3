use super::*;

const LIVE: &str =
    "https://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout/v71";

#[test]
fn checkout_urls_by_mode() {
    let strict = UrlPolicy::default();
    let loopback = UrlPolicy {
        allow_loopback: true,
    };
    let cases: &[(Option<&str>, Mode, UrlPolicy, Option<&str>)] = &[
        (None, Mode::Test, strict, Some(TEST_CHECKOUT_URL)),
        (None, Mode::Live, strict, None),
        (
            Some(TEST_CHECKOUT_URL),
            Mode::Test,
            strict,
            Some(TEST_CHECKOUT_URL),
        ),
        (
            Some("https://checkout-test.adyen.com/v71/"),
            Mode::Test,
            strict,
            Some(TEST_CHECKOUT_URL),
        ),
        (Some(TEST_CHECKOUT_URL), Mode::Live, strict, None),
        (Some(LIVE), Mode::Live, strict, Some(LIVE)),
        (Some(LIVE), Mode::Test, strict, None),
        (
            Some("http://1797a841fbb37ca7-AdyenDemo-checkout-live.adyenpayments.com/checkout/v71"),
            Mode::Live,
            strict,
            None,
        ),
        (
            Some("https://-checkout-live.adyenpayments.com/checkout/v71"),
            Mode::Live,
            strict,
            None,
        ),
        (
            Some("https://evil.example/x-checkout-live.adyenpayments.com/checkout/v71"),
            Mode::Live,
            strict,
            None,
        ),
        (
            Some("https://a.evil.example-checkout-live.adyenpayments.com/checkout/v71"),
            Mode::Live,
            strict,
            None,
        ),
        (Some("http://127.0.0.1:4010"), Mode::Test, strict, None),
        (
            Some("http://127.0.0.1:4010"),
            Mode::Live,
            loopback,
            Some("http://127.0.0.1:4010"),
        ),
        (
            Some("http://[::1]:9/v71"),
            Mode::Test,
            loopback,
            Some("http://[::1]:9/v71"),
        ),
        (
            Some("http://localhost:80/v71"),
            Mode::Test,
            loopback,
            Some("http://localhost:80/v71"),
        ),
        (Some("http://127.0.0.1:0"), Mode::Test, loopback, None),
        (
            Some("http://127.0.0.1.evil.example:80"),
            Mode::Test,
            loopback,
            None,
        ),
        (Some("http://10.0.0.1:80"), Mode::Test, loopback, None),
        (Some("http://user@127.0.0.1:80"), Mode::Test, loopback, None),
    ];
    for (raw, mode, policy, expected) in cases {
        let got = checkout_url(*raw, *mode, *policy);
        assert_eq!(got.as_deref().ok(), *expected, "{raw:?} in {mode:?}");
        if let Err(refused) = got {
            assert_eq!(refused.field, fields::CHECKOUT_URL);
            if let Some(raw) = raw {
                assert!(!refused.message.contains(raw), "never echoed");
            }
        }
    }
}

fn new_account() -> NewAdyenAccount {
    NewAdyenAccount {
        merchant_account: "HoldfastECOM".into(),
        checkout_url: None,
        api_key: Secret::new(
            "AQEyhmfxK4PNbhZGw0m/n3Q5qf3VYp5eHZJTfEA0SnT87bnhmUuNnMR1xGVMzlp".into(),
        ),
        hmac_key: Secret::new(
            "44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056".into(),
        ),
        notification_username: "adyen-notifications".into(),
        notification_password: Secret::new("correct horse".replace(' ', "-")),
    }
}

#[derive(Default)]
struct Reversing;

impl CardVault for Reversing {
    fn seal(&self, context: &str, secret: &str) -> Sealed {
        Sealed {
            key_id: "k1".into(),
            nonce: context.as_bytes().to_vec(),
            ciphertext: secret.bytes().rev().collect(),
        }
    }

    fn open(&self, context: &str, sealed: &Sealed) -> Result<String, VaultError> {
        if sealed.nonce != context.as_bytes() {
            return Err(VaultError::Corrupt);
        }
        String::from_utf8(sealed.ciphertext.iter().rev().copied().collect())
            .map_err(|_| VaultError::Corrupt)
    }
}

#[test]
fn secrets_are_sealed_for_their_connection_and_field() {
    let account = new_account()
        .seal(Mode::Test, UrlPolicy::default(), "midCon_1", &Reversing)
        .unwrap();
    assert_eq!(account.api_key.last4, "xGVMzlp"[3..]);
    assert_eq!(account.hmac_key.last4, "A056");
    let api_key = account.api_key("midCon_1", &Reversing).unwrap();
    assert!(api_key.expose().starts_with("AQEy"));
    let opened = account
        .notification_secrets("midCon_1", &Reversing)
        .unwrap();
    assert_eq!(opened.hmac_key.len(), 32);
    assert_eq!(opened.notification_password.expose(), "correct-horse");
    for other in [
        account.api_key("midCon_2", &Reversing).map(drop),
        account
            .notification_secrets("midCon_2", &Reversing)
            .map(drop),
    ] {
        assert_eq!(
            other.unwrap_err(),
            VaultError::Corrupt,
            "bound to its connection"
        );
    }
    let shown = format!("{:?} {api_key:?} {opened:?}", new_account());
    assert!(!shown.contains("AQEy") && !shown.contains("correct-horse"));
}

type Spoil = fn(&mut NewAdyenAccount);

#[test]
fn each_field_is_refused_by_name_without_its_value() {
    let cases: Vec<(&str, Spoil)> = vec![
        (fields::MERCHANT_ACCOUNT, |a| {
            a.merchant_account = "Holdfast ECOM".into();
        }),
        (fields::MERCHANT_ACCOUNT, |a| {
            a.merchant_account = String::new();
        }),
        (fields::API_KEY, |a| a.api_key = Secret::new("short".into())),
        (fields::API_KEY, |a| {
            a.api_key = Secret::new("AQEyhmfxK4PNbhZGw0m n3Q5qf3VYp5e".into());
        }),
        (fields::HMAC_KEY, |a| {
            a.hmac_key = Secret::new("not hex at all, not hex at all, not hex".into());
        }),
        (fields::HMAC_KEY, |a| {
            a.hmac_key = Secret::new("ABC".repeat(11));
        }),
        (fields::NOTIFICATION_USERNAME, |a| {
            a.notification_username = "a:b".into();
        }),
        (fields::NOTIFICATION_USERNAME, |a| {
            a.notification_username = String::new();
        }),
        (fields::NOTIFICATION_PASSWORD, |a| {
            a.notification_password = Secret::new("short".into());
        }),
        (fields::NOTIFICATION_PASSWORD, |a| {
            a.notification_password = Secret::new("has a space in it".into());
        }),
    ];
    for (field, spoil) in cases {
        let mut account = new_account();
        spoil(&mut account);
        let shown = format!("{account:?}");
        let refused = account
            .seal(Mode::Test, UrlPolicy::default(), "midCon_1", &Reversing)
            .unwrap_err();
        assert_eq!(refused.field, field, "{shown}");
        assert!(!refused.message.contains("short") && !refused.message.contains("a:b"));
    }
}
