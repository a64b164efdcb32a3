use super::*;
use crate::ids::{KeyId, PlatformId, UserId};
use crate::metadata::Metadata;
use crate::mode::KeyType;
use crate::mode::Mode;
use crate::payment::card::{CardInput, CvvRule};
use crate::payment::client_session::{ClientSecret, SessionStatus};
use crate::payment::token::{TakeTerms, Taken, TokenKind};
use crate::payment::wallet::{
    DISPLAY_NAME_MAX_CHARS, MerchantSession, MerchantValidation, WalletKind,
};
use crate::services::fixtures::{clock_at_noon, fixed_ids, visa_bins};

use crate::ports::{
    MockApplePayGateway, MockCardVault, MockClientSessionStore, MockTokenStore, MockWalletOpener,
    Sealed,
};

/// Retention erases what expired by the service's own clock, not a caller's.
#[tokio::test]
async fn expired_tokens_are_erased_as_of_the_services_clock() {
    let mut tokens = MockTokenStore::new();
    tokens
        .expect_erase_expired()
        .withf(|now| *now == crate::services::fixtures::NOON)
        .times(1)
        .returning(|_| Ok(2));
    let service = TokenService::new(
        Arc::new(tokens),
        Arc::new(MockClientSessionStore::new()),
        Arc::new(MockWalletOpener::new()),
        Arc::new(MockCardVault::new()),
        Arc::new(visa_bins()),
        Arc::new(clock_at_noon()),
        Arc::new(fixed_ids("01")),
    );
    assert_eq!(service.erase_expired().await.unwrap(), 2);
}

/// What a mocked store answers, made afresh for each call (a `StoreError` is not `Clone`).
type StoreAnswer = fn() -> Result<(), StoreError>;

/// A delete is asked of the caller's own scope; a token not there is `false` (a 404 to
/// come), and any other store failure stays a failure.
#[tokio::test]
async fn a_token_is_deleted_in_the_callers_scope() {
    let cases: [(StoreAnswer, Option<bool>); 3] = [
        (|| Ok(()), Some(true)),
        (|| Err(StoreError::NotFound), Some(false)),
        (|| Err(StoreError::Unexpected("down".into())), None),
    ];
    for (stored, expected) in cases {
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_delete()
            .withf(|scope, id| {
                scope.platform == PlatformId::from_suffix("1")
                    && scope.mode == Mode::Test
                    && id.as_str() == "tkn_gone"
            })
            .times(1)
            .returning(move |_, _| stored());
        let deleted = service(tokens)
            .delete(
                &who(KeyType::Private),
                &TokenId::from_trusted("tkn_gone".into()),
            )
            .await;
        assert_eq!(deleted.ok(), expected, "{:?}", stored());
    }
}

fn who(key_type: KeyType) -> Principal {
    Principal {
        scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Test),
        key_type,
        key_id: Some(KeyId::from_suffix("1")),
        user_id: UserId::from_suffix("1"),
    }
}

fn service(tokens: MockTokenStore) -> TokenService {
    service_with(tokens, MockClientSessionStore::new())
}

fn service_with(tokens: MockTokenStore, sessions: MockClientSessionStore) -> TokenService {
    service_with_wallets(tokens, sessions, MockWalletOpener::new())
}

fn service_with_wallets(
    tokens: MockTokenStore,
    sessions: MockClientSessionStore,
    wallets: MockWalletOpener,
) -> TokenService {
    let mut vault = MockCardVault::new();
    vault
        .expect_seal()
        .withf(|context, secret| context == "tkn_01" && secret.starts_with("4111111111111111|1230"))
        .returning(|_, _| Sealed {
            key_id: "k1".into(),
            nonce: vec![0; 12],
            ciphertext: vec![1; 40],
        });
    let bins = visa_bins();
    let clock = clock_at_noon();
    let ids = fixed_ids("01");
    TokenService::new(
        Arc::new(tokens),
        Arc::new(sessions),
        Arc::new(wallets),
        Arc::new(vault),
        Arc::new(bins),
        Arc::new(clock),
        Arc::new(ids),
    )
}

fn card() -> CardData {
    input()
        .check(crate::services::fixtures::NOON, CvvRule::Optional)
        .unwrap()
}

fn input() -> CardInput {
    CardInput {
        number: Some("4111111111111111".into()),
        cvv: None,
        expiration: Some("1230".into()),
        name: None,
    }
}

#[tokio::test]
async fn which_key_may_create_which_token() {
    let table = [
        (KeyType::Public, TokenKind::SingleUse, true),
        (KeyType::Private, TokenKind::SingleUse, true),
        (KeyType::Private, TokenKind::Vault, true),
        (KeyType::Public, TokenKind::Vault, false),
    ];
    for (key_type, kind, allowed) in table {
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_save()
            .times(usize::from(allowed))
            .returning(|_, _| Ok(()));
        let got = service(tokens)
            .create(
                &who(key_type),
                kind,
                input(),
                None,
                Metadata::default(),
                None,
            )
            .await;
        match (allowed, got) {
            (true, Ok(token)) => {
                assert_eq!(token.kind, kind);
                let lifetime = crate::payment::token::SINGLE_USE_LIFETIME;
                let expires = (kind == TokenKind::SingleUse)
                    .then(|| crate::services::fixtures::NOON + lifetime);
                assert_eq!(token.expires_on, expires, "by the service's clock");
                assert_eq!(
                    (token.card.bin.as_str(), token.card.last4.as_str()),
                    ("411111", "1111")
                );
            }
            (false, Err(TokenError::VaultNeedsPrivateKey)) => {}
            (_, other) => panic!("{key_type:?} {kind:?}: {other:?}"),
        }
    }
}

/// Metadata is kept on vault tokens only, so only a private key sets it: each row is (key,
/// kind, whether the token is saved with its pairs), and a refusal names `metadata` (or is the
/// vault's 403 for a public key) without storing anything.
#[tokio::test]
async fn only_vault_tokens_keep_metadata() {
    let pairs = || Metadata::parse([("customer".to_owned(), "cus_42".to_owned())].into()).unwrap();
    let table = [
        (KeyType::Private, TokenKind::Vault, true),
        (KeyType::Private, TokenKind::SingleUse, false),
        (KeyType::Public, TokenKind::SingleUse, false),
        (KeyType::Public, TokenKind::Vault, false),
    ];
    for (key_type, kind, kept) in table {
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_save()
            .times(usize::from(kept))
            .withf(|token, _| token.metadata.get("customer") == Some("cus_42"))
            .returning(|_, _| Ok(()));
        let got = service(tokens)
            .create(&who(key_type), kind, input(), None, pairs(), None)
            .await;
        match (kept, got) {
            (true, Ok(token)) => assert_eq!(token.metadata, pairs()),
            (false, Err(TokenError::Invalid(refusal))) => {
                assert_eq!(refusal.field, "metadata", "{key_type:?} {kind:?}");
            }
            (false, Err(TokenError::VaultNeedsPrivateKey)) => {
                assert_eq!((key_type, kind), (KeyType::Public, TokenKind::Vault));
            }
            (_, other) => panic!("{key_type:?} {kind:?}: {other:?}"),
        }
    }
}

#[test]
fn sealed_text_round_trips_and_refuses_anything_else() {
    let text = sealed_text(&card());
    assert_eq!(text, "4111111111111111|1230");
    let back = unsealed_card(&text).unwrap();
    assert_eq!(
        (back.number.expose(), back.expiration.to_mmyy(), back.wallet),
        ("4111111111111111", "1230".to_owned(), None)
    );
    let proof = WalletProof {
        kind: WalletKind::GooglePay,
        cryptogram: Some("AgAAAAAABk4DWZ4C28yUQAAAAAA=".into()),
        eci: Some("05".into()),
    };
    let from_wallet = CardData {
        wallet: Some(proof.clone()),
        ..card()
    };
    let text = sealed_text(&from_wallet);
    assert_eq!(
        text,
        "4111111111111111|1230|google_pay|AgAAAAAABk4DWZ4C28yUQAAAAAA=|05"
    );
    assert_eq!(unsealed_card(&text).unwrap().wallet, Some(proof.clone()));
    let pan_only = "4111111111111111|1230|google_pay||";
    assert_eq!(
        unsealed_card(pan_only).unwrap().wallet.unwrap().cryptogram,
        None
    );
    // The name on the card goes last, whole, after the wallet's parts.
    let named = CardData {
        name: Some(CardholderName::parse("Ann | O'Neil").unwrap()),
        ..card()
    };
    let text = sealed_text(&named);
    assert_eq!(text, "4111111111111111|1230||||Ann | O'Neil");
    let back = unsealed_card(&text).unwrap();
    assert_eq!(
        (back.number.expose(), back.wallet, back.name),
        ("4111111111111111", None, named.name)
    );
    let named_wallet = CardData {
        wallet: Some(proof.clone()),
        name: Some(CardholderName::parse("Ann").unwrap()),
        ..card()
    };
    let text = sealed_text(&named_wallet);
    let back = unsealed_card(&text).unwrap();
    assert_eq!(
        (back.wallet, back.name),
        (named_wallet.wallet, named_wallet.name)
    );
    for bad in [
        "4111111111111111",
        "4111111111111112|1230",
        "4111111111111111|1330",
        "|",
        "4111111111111111|1230|paypal||",
        "4111111111111111|1230|google_pay|x",
        "4111111111111111|1230||x|05",
        "4111111111111111|1230||||",
        "4111111111111111|1230||||\u{7}",
    ] {
        assert!(unsealed_card(bad).is_none(), "{bad}");
    }
}

/// A wallet's token opens (by the port, with the caller's mode) to a single-use token that
/// names the wallet; one the page asked for another merchant than its client session's is
/// refused; a wallet not set up for the mode is refused as such.
#[tokio::test]
async fn a_wallet_token_becomes_a_single_use_token() {
    let opened = |hint: &str| crate::payment::wallet::WalletCard {
        number: CardNumber::parse("4111111111111111").unwrap(),
        expiration: Expiration::parse_mmyy("1230").unwrap(),
        proof: WalletProof {
            kind: WalletKind::GooglePay,
            cryptogram: None,
            eci: None,
        },
        merchant_hint: Some(hint.to_owned()),
        message_id: "AH2Ejtc".to_owned(),
    };
    let cases = [
        ("mid_1", None, Ok(())),
        ("mid_1", Some(secret().expose().to_owned()), Ok(())),
        (
            "mid_2",
            Some(secret().expose().to_owned()),
            Err("wallet.token"),
        ),
    ];
    for (hint, given, expected) in cases {
        let mut wallets = MockWalletOpener::new();
        let card = opened(hint);
        wallets
            .expect_open()
            .withf(|kind, mode, token, _| {
                *kind == WalletKind::GooglePay && *mode == Mode::Test && token == "sealed-by-google"
            })
            .return_once(move |_, _, _, _| Ok(card));
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_claim_wallet_payment()
            .returning(|_, _, _| Ok(true));
        tokens
            .expect_save()
            .withf(|t, _| t.wallet == Some(WalletKind::GooglePay) && t.kind == TokenKind::SingleUse)
            .times(usize::from(expected.is_ok()))
            .returning(|_, _| Ok(()));
        let mut sessions = MockClientSessionStore::new();
        sessions
            .expect_find()
            .returning(|_, _| Ok(Some(open_session(&secret()))));
        let got = service_with_wallets(tokens, sessions, wallets)
            .create_from_wallet(
                &who(KeyType::Public),
                WalletKind::GooglePay,
                "sealed-by-google",
                given.as_deref(),
                None,
            )
            .await;
        match (got, expected) {
            (Ok(token), Ok(())) => {
                assert_eq!(token.client_session_id.is_some(), given.is_some());
            }
            (Err(TokenError::Invalid(i)), Err(field)) => assert_eq!(i.field, field),
            (got, expected) => panic!("{hint} {given:?}: {got:?} against {expected:?}"),
        }
    }
    let mut wallets = MockWalletOpener::new();
    wallets
        .expect_open()
        .returning(|kind, _, _, _| Err(WalletRefusal::NotConfigured(kind)));
    let got = service_with_wallets(
        MockTokenStore::new(),
        MockClientSessionStore::new(),
        wallets,
    )
    .create_from_wallet(&who(KeyType::Public), WalletKind::ApplePay, "x", None, None)
    .await;
    assert!(matches!(
        got,
        Err(TokenError::Wallet(WalletRefusal::NotConfigured(
            WalletKind::ApplePay
        )))
    ));
}

fn validation(url: &str, domain: &str, name: &str) -> MerchantValidation {
    MerchantValidation {
        validation_url: url.to_owned(),
        domain: domain.to_owned(),
        display_name: name.to_owned(),
    }
}

const APPLE_CERT_URL: &str =
    "https://apple-pay-gateway-cert.apple.com/paymentservices/startSession";

#[tokio::test]
async fn merchant_validation_is_checked_before_apple_is_asked() {
    let long_name = "n".repeat(DISPLAY_NAME_MAX_CHARS + 1);
    let cases = [
        (
            "https://evil.example/paymentservices/startSession",
            "shop.example",
            "Shop",
            "validationUrl",
        ),
        (APPLE_CERT_URL, "Shop.Example", "Shop", "domainName"),
        (APPLE_CERT_URL, "shop.example/x", "Shop", "domainName"),
        (APPLE_CERT_URL, "", "Shop", "domainName"),
        (APPLE_CERT_URL, "shop.example", "", "displayName"),
        (APPLE_CERT_URL, "shop.example", "Sh\u{7}op", "displayName"),
        (
            APPLE_CERT_URL,
            "shop.example",
            "Shop \u{202e}gnp.exe",
            "displayName",
        ),
        (APPLE_CERT_URL, "shop.example", "   ", "displayName"),
        (APPLE_CERT_URL, "shop.example", &long_name, "displayName"),
    ];
    for (url, domain, name, field) in cases {
        // A gateway that must not be asked.
        let got = service(MockTokenStore::new())
            .with_apple_pay_gateway(Arc::new(MockApplePayGateway::new()))
            .apple_pay_merchant_session(&who(KeyType::Public), validation(url, domain, name))
            .await;
        match got {
            Err(TokenError::Invalid(invalid)) => {
                assert_eq!(invalid.field, field, "{url} {domain} {name}");
            }
            other => panic!("{url} {domain} {name}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn merchant_sessions_come_from_apple_when_a_certificate_is_configured() {
    let mut gateway = MockApplePayGateway::new();
    gateway
        .expect_start_session()
        .withf(|asked| *asked == validation(APPLE_CERT_URL, "shop.example", "Shop"))
        .times(2)
        .returning(|_| Ok(r#"{"merchantSessionIdentifier":"SSH1"}"#.to_owned()));
    let apple = service(MockTokenStore::new()).with_apple_pay_gateway(Arc::new(gateway));
    for mode in [Mode::Test, Mode::Live] {
        let mut caller = who(KeyType::Public);
        caller.scope.mode = mode;
        let got = apple
            .apple_pay_merchant_session(&caller, validation(APPLE_CERT_URL, "shop.example", "Shop"))
            .await
            .unwrap();
        assert_eq!(
            got,
            MerchantSession::Apple(r#"{"merchantSessionIdentifier":"SSH1"}"#.to_owned())
        );
    }
    let mut failing = MockApplePayGateway::new();
    failing
        .expect_start_session()
        .returning(|_| Err(GatewayFailure("Apple's gateway refused".to_owned())));
    let got = service(MockTokenStore::new())
        .with_apple_pay_gateway(Arc::new(failing))
        .apple_pay_merchant_session(
            &who(KeyType::Public),
            validation(APPLE_CERT_URL, "shop.example", "Shop"),
        )
        .await;
    assert!(
        matches!(got, Err(TokenError::ApplePayGateway(_))),
        "{got:?}"
    );
}

#[tokio::test]
async fn without_a_certificate_test_mode_gets_a_sandbox_session_and_live_mode_none() {
    let service = service(MockTokenStore::new());
    let got = service
        .apple_pay_merchant_session(
            &who(KeyType::Public),
            validation(APPLE_CERT_URL, "shop.example", "Shop"),
        )
        .await
        .unwrap();
    let MerchantSession::Sandbox(sandbox) = got else {
        panic!("{got:?}")
    };
    assert_eq!(sandbox.merchant_session_identifier, "SANDBOX_01");
    assert_eq!(sandbox.domain_name, "shop.example");
    assert_eq!(sandbox.display_name, "Shop");
    assert_eq!(sandbox.expires_at - sandbox.epoch_timestamp, 5 * 60 * 1000);
    let mut live = who(KeyType::Public);
    live.scope.mode = Mode::Live;
    let got = service
        .apple_pay_merchant_session(&live, validation(APPLE_CERT_URL, "shop.example", "Shop"))
        .await;
    assert!(
        matches!(
            got,
            Err(TokenError::Wallet(WalletRefusal::NotConfigured(
                WalletKind::ApplePay
            )))
        ),
        "{got:?}"
    );
}

fn token(client_session_id: Option<ClientSessionId>) -> Token {
    Token {
        client_session_id,
        ..crate::services::fixtures::token(None)
    }
}

fn opening(sealed: &'static str) -> MockCardVault {
    let mut vault = MockCardVault::new();
    vault
        .expect_open()
        .withf(|context, _| context == "tkn_01")
        .returning(move |_, _| Ok(sealed.to_owned()));
    vault
}

fn terms(merchant: &MerchantId, amount: i64) -> PaymentTerms<'_> {
    PaymentTerms {
        merchant,
        amount,
        currency: Currency::USD,
    }
}

/// A payment's token: taken in the caller's scope on the payment's terms at the service's
/// clock, opened by the vault; each way the store refuses it is a refusal on
/// `payment.token` (or the field the terms named), and a card that expired inside its token
/// is refused after the take (the take is what spends a single-use token) with its session
/// released.
/// The hold of a payment taking a token of session `cs_01S` at noon.
fn held() -> HeldSession {
    HeldSession {
        id: ClientSessionId::from_suffix("01S"),
        until: crate::services::fixtures::NOON + crate::payment::token::SESSION_HOLD,
    }
}

#[tokio::test]
async fn redeeming_a_token_for_a_payment() {
    type Expected = Result<&'static str, (&'static str, &'static str)>;
    let id = TokenId::from_suffix("01");
    let merchant = MerchantId::from_suffix("1");
    let bound = || Taken::Token(Box::new(token(Some(ClientSessionId::from_suffix("01S")))));
    // (what the store answers, the sealed card, the card's last four or the refusal, released)
    let cases: [(Taken, &str, Expected, bool); 6] = [
        (
            Taken::Token(Box::new(token(None))),
            "4111111111111111|1230",
            Ok("1111"),
            false,
        ),
        (bound(), "4111111111111111|1230", Ok("1111"), false),
        (
            bound(),
            "4111111111111111|1025",
            Err(("payment.token", "the tokenized card has expired")),
            true,
        ),
        (
            Taken::Unusable,
            "",
            Err((
                "payment.token",
                "no such token, or it was used or has expired",
            )),
            false,
        ),
        (
            Taken::SessionHeld,
            "",
            Err((
                "payment.token",
                "another payment under the token's client session is in progress",
            )),
            false,
        ),
        (
            Taken::Refused(Invalid::new(
                "amount",
                "is not the amount of the token's client session",
            )),
            "",
            Err(("amount", "is not the amount of the token's client session")),
            false,
        ),
    ];
    for (taken, sealed, expect, released) in cases {
        let mut tokens = MockTokenStore::new();
        let hint = format!("{taken:?}");
        tokens
            .expect_take()
            .withf(|scope, id, terms| {
                *scope == who(KeyType::Private).scope
                    && id.as_str() == "tkn_01"
                    && *terms
                        == TakeTerms {
                            merchant: MerchantId::from_suffix("1"),
                            amount: 100,
                            currency: Currency::USD,
                            now: crate::services::fixtures::NOON,
                        }
            })
            .times(1)
            .return_once(move |_, _, _| Ok(taken));
        let mut sessions = MockClientSessionStore::new();
        sessions
            .expect_release()
            .withf(|_, released| *released == held())
            .times(usize::from(released))
            .returning(|_, _| Ok(()));
        let service = TokenService::new(
            Arc::new(tokens),
            Arc::new(sessions),
            Arc::new(MockWalletOpener::new()),
            Arc::new(opening(sealed)),
            Arc::new(visa_bins()),
            Arc::new(clock_at_noon()),
            Arc::new(fixed_ids("01")),
        );
        let got = service
            .redeem(&who(KeyType::Private), &id, terms(&merchant, 100))
            .await;
        match (got, expect) {
            (Ok(redeemed), Ok(last4)) => {
                assert_eq!(redeemed.card.number.last4(), last4);
                assert!(redeemed.card.cvv.is_none(), "a token never holds a CVV");
                if hint.contains("01S") {
                    assert_eq!(redeemed.client_session, Some(held()));
                } else {
                    assert!(redeemed.client_session.is_none());
                }
            }
            (Err(TokenError::Invalid(i)), Err((field, message))) => {
                assert_eq!((i.field, i.message.as_str()), (field, message), "{hint}");
            }
            (got, expect) => panic!("{hint} {sealed}: {got:?} against {expect:?}"),
        }
    }
}

fn open_session(secret: &ClientSecret) -> crate::payment::client_session::ClientSession {
    crate::payment::client_session::ClientSession {
        secret_hash: secret.hash(),
        ..crate::services::fixtures::client_session(SessionStatus::Open)
    }
}

fn secret() -> ClientSecret {
    ClientSecret::new(
        &ClientSessionId::from_suffix("01S"),
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    )
}

/// A public key binds its token to an open session by its secret; a wrong secret, or one
/// given for a vault token, is refused by name and nothing is written.
#[tokio::test]
async fn a_client_secret_binds_the_token_to_its_open_session() {
    let right = secret();
    let wrong = ClientSecret::new(
        &ClientSessionId::from_suffix("01S"),
        "ZZZZZZZZZZZZZZZZZZZZZZZZZZ",
    );
    let cases = [
        (
            KeyType::Public,
            TokenKind::SingleUse,
            right.expose().to_owned(),
            true,
        ),
        (
            KeyType::Public,
            TokenKind::SingleUse,
            wrong.expose().to_owned(),
            false,
        ),
        (
            KeyType::Public,
            TokenKind::SingleUse,
            "cs_01S".to_owned(),
            false,
        ),
        (
            KeyType::Private,
            TokenKind::Vault,
            right.expose().to_owned(),
            false,
        ),
    ];
    for (key_type, kind, given, bound) in cases {
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_save()
            .withf(|t, _| t.client_session_id == Some(ClientSessionId::from_suffix("01S")))
            .times(usize::from(bound))
            .returning(|_, _| Ok(()));
        let mut sessions = MockClientSessionStore::new();
        sessions
            .expect_find()
            .returning(|_, _| Ok(Some(open_session(&secret()))));
        let got = service_with(tokens, sessions)
            .create(
                &who(key_type),
                kind,
                input(),
                Some(&given),
                Metadata::default(),
                None,
            )
            .await;
        match (got, bound) {
            (Ok(token), true) => assert!(token.client_session_id.is_some()),
            (Err(TokenError::Invalid(i)), false) => assert_eq!(i.field, "clientSecret"),
            (got, _) => panic!("{given}: {got:?}"),
        }
    }
}
