use super::*;
use crate::dashboard::IDLE;
use crate::ports::{MockCredentialStore, MockIds, MockPasswordHasher, MockUserStore};
use crate::services::fixtures::{NOON, clock_at_noon};
use crate::user::{Role, User};
use std::sync::Mutex;

fn user(platform: &str) -> User {
    User {
        id: UserId::from_suffix(platform),
        platform_id: PlatformId::from_suffix(platform),
        email: Email::parse("ops@example.com").unwrap(),
        role: Role::Admin,
        created_on: NOON,
    }
}

/// A hasher whose "hash" of a password is `h:` + the password.
fn hasher() -> MockPasswordHasher {
    let mut hasher = MockPasswordHasher::new();
    hasher
        .expect_hash()
        .returning(|p, _| format!("h:{}", p.expose()));
    hasher.expect_verify_any().returning(|p, stored| {
        stored
            .iter()
            .position(|s| *s == format!("h:{}", p.expose()))
    });
    hasher
}

fn service(credentials: MockCredentialStore) -> DashboardService {
    service_with(credentials, MockUserStore::new(), hasher())
}

fn service_with(
    credentials: MockCredentialStore,
    users: MockUserStore,
    hasher: MockPasswordHasher,
) -> DashboardService {
    let mut ids = MockIds::new();
    ids.expect_key_secret()
        .returning(|| "ABCDEFGHIJKLMNOPQRSTUVWXYZ".into());
    let (auditor, _) = crate::services::audit::recording::auditor();
    DashboardService::new(
        Arc::new(credentials),
        Arc::new(users),
        Arc::new(hasher),
        Arc::new(clock_at_noon()),
        Arc::new(ids),
        auditor,
    )
}

/// One refusal for every way a sign-in is wrong, and a session only for the right pair; of
/// two accounts with that email, the one the password opens.
#[tokio::test]
async fn only_the_right_email_and_password_sign_in() {
    let mut credentials = MockCredentialStore::new();
    credentials.expect_sign_in_candidates().returning(|email| {
        Ok(if email.as_str() == "ops@example.com" {
            vec![
                (user("a"), "h:first password".into()),
                (user("b"), "h:second password".into()),
            ]
        } else {
            Vec::new()
        })
    });
    let saved = Arc::new(Mutex::new(Vec::new()));
    let sink = saved.clone();
    credentials.expect_insert_session().returning(move |s| {
        sink.lock().unwrap().push(s.clone());
        Ok(())
    });
    let service = service(credentials);
    for (email, password) in [
        ("ops@example.com", "wrong password"),
        ("nobody@example.com", "first password"),
        ("not an email", "first password"),
        ("ops@example.com", "short"),
        ("", ""),
    ] {
        let refused = service.sign_in(email, password, None, None).await;
        assert!(
            matches!(refused, Err(SignInError::Refused)),
            "{email}/{password}"
        );
    }
    assert!(saved.lock().unwrap().is_empty());
    let (secret, signed_in) = service
        .sign_in("ops@example.com", "second password", None, None)
        .await
        .unwrap();
    assert_eq!(signed_in.user.id, user("b").id);
    let session = &saved.lock().unwrap()[0];
    assert_eq!(session, &signed_in.session);
    assert_eq!(session.id_hash, secret.hash(), "kept by hash only");
    assert_eq!(
        (session.mode, session.expires_on),
        (Mode::Test, NOON + LIFETIME)
    );
}

/// Naming a platform signs in to that platform's account only, with that account's password.
#[tokio::test]
async fn a_named_platform_takes_only_its_own_accounts_password() {
    let mut credentials = MockCredentialStore::new();
    credentials.expect_sign_in_candidates().returning(|_| {
        Ok(vec![
            (user("a"), "h:first password".into()),
            (user("b"), "h:second password".into()),
        ])
    });
    credentials.expect_insert_session().returning(|_| Ok(()));
    let service = service(credentials);
    let (a, b) = (PlatformId::from_suffix("a"), PlatformId::from_suffix("b"));
    for (platform, password, opens) in [
        (&b, "first password", None),
        (&b, "second password", Some("b")),
        (&a, "first password", Some("a")),
        (&PlatformId::from_suffix("c"), "first password", None),
    ] {
        let got = service
            .sign_in("ops@example.com", password, Some(platform), None)
            .await;
        let opened = got.ok().map(|(_, s)| s.user.platform_id);
        assert_eq!(
            opened,
            opens.map(PlatformId::from_suffix),
            "{platform} {password}"
        );
    }
}

/// A session idle too long is ended when it comes back, not honoured.
#[tokio::test]
async fn an_idle_session_is_ended() {
    for (idle, live) in [(IDLE - time::Duration::SECOND, true), (IDLE, false)] {
        let mut credentials = MockCredentialStore::new();
        credentials.expect_find_session().returning(move |id| {
            Ok(Some(SignedIn {
                user: user("a"),
                session: Session {
                    id_hash: id.clone(),
                    user_id: user("a").id,
                    platform_id: user("a").platform_id,
                    mode: Mode::Live,
                    created_on: NOON - idle,
                    last_seen_on: NOON - idle,
                    expires_on: NOON - idle + LIFETIME,
                },
                flash_for: None,
            }))
        });
        credentials
            .expect_delete_session()
            .times(usize::from(!live))
            .returning(|_| Ok(()));
        credentials
            .expect_touch_session()
            .times(usize::from(live))
            .returning(|_, _| Ok(()));
        let secret = BearerSecret::new("ABCDEFGHIJKLMNOPQRSTUVWXYZ".into());
        let found = service(credentials).signed_in(&secret).await.unwrap();
        assert_eq!(found.is_some(), live, "{idle}");
    }
}

/// A password set for one account of an email is hashed alike with the email's other
/// accounts (the hasher is handed their hashes, oldest first), through a link or from the
/// CLI, so that sign-in checks them all at once; an email's only account is handed none,
/// and an unusable link is refused before anything is hashed.
#[tokio::test]
async fn a_new_password_is_hashed_like_the_emails_other_accounts() {
    let (a, b, c) = (user("a"), user("b"), user("c"));
    let mut solo = user("d");
    solo.email = Email::parse("solo@example.com").unwrap();
    let link = |n: u8| BearerSecret::new(format!("ABCDEFGHIJKLMNOPQRSTUVWXY{n}"));
    let holders = [
        (link(1), b.clone()),
        (link(2), a.clone()),
        (link(3), solo.clone()),
    ];
    let mut credentials = MockCredentialStore::new();
    credentials
        .expect_usable_link_user()
        .returning(move |token, _| {
            Ok(holders
                .iter()
                .find(|(link, _)| link.hash() == *token)
                .map(|(_, user)| user.clone()))
        });
    let accounts = vec![
        (a.clone(), "h:of a".to_owned()),
        (b.clone(), "h:of b".to_owned()),
        (c, "h:of c".to_owned()),
    ];
    let (all, alone) = (accounts.clone(), accounts[..1].to_vec());
    let only = vec![(solo, "h:of d".to_owned())];
    credentials
        .expect_sign_in_candidates()
        .returning(move |email| {
            Ok(if email.as_str() == "solo@example.com" {
                only.clone()
            } else {
                all.clone()
            })
        });
    credentials
        .expect_redeem_link()
        .returning(move |_, _, _| Ok(Some(b.clone())));
    credentials
        .expect_set_password()
        .returning(|_, _, _| Ok(()));
    let mut users = MockUserStore::new();
    users.expect_get_user().returning(move |_, id| {
        Ok(alone
            .iter()
            .find(|(u, _)| &u.id == id)
            .map(|(u, _)| u.clone()))
    });
    let handed = Arc::new(Mutex::new(Vec::new()));
    let seen = handed.clone();
    let mut hasher = MockPasswordHasher::new();
    hasher.expect_hash().returning(move |p, alike| {
        seen.lock().unwrap().push(alike);
        format!("h:{}", p.expose())
    });
    let service = service_with(credentials, users, hasher);
    let password = Password::parse("a new password").unwrap();
    for n in 1..=3 {
        service.redeem(&link(n), &password, None).await.unwrap();
    }
    let unknown = service.redeem(&link(4), &password, None).await;
    assert!(
        matches!(unknown, Err(ServiceError::NotFound("link"))),
        "{unknown:?}"
    );
    service
        .set_password(&Actor::operator(), &a.platform_id, &a.id, &password)
        .await
        .unwrap();
    let missing = service
        .set_password(
            &Actor::operator(),
            &a.platform_id,
            &UserId::from_suffix("z"),
            &password,
        )
        .await;
    assert!(
        matches!(missing, Err(ServiceError::NotFound("user"))),
        "{missing:?}"
    );
    let of = |hashes: &[&str]| hashes.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        *handed.lock().unwrap(),
        [
            of(&["h:of a", "h:of c"]),
            of(&["h:of b", "h:of c"]),
            of(&[]),
            of(&["h:of b", "h:of c"]),
        ],
        "b's link, a's link, the solo account's link, then a from the CLI; nothing hashed \
         for the unknown link or the missing user"
    );
}
