use super::*;
use crate::ports::{MockIds, MockKeyStore, MockUserStore};
use crate::services::audit::recording::{self, recorded};
use crate::services::fixtures::clock_at_noon;
use crate::user::{Email, User};
use time::macros::datetime;

type Audit = Arc<std::sync::Mutex<Vec<crate::audit::AuditEntry>>>;

fn operator() -> Actor {
    Actor::operator()
}

fn ids() -> MockIds {
    let mut ids = MockIds::new();
    ids.expect_next_id().return_const("01JDX".to_owned());
    ids.expect_key_secret()
        .return_const("ABCDEFGHIJKLMNOPQRSTUVWXYZ".to_owned());
    ids
}

fn service(keys: MockKeyStore, users: MockUserStore) -> (KeyService, Audit) {
    let (auditor, entries) = recording::auditor();
    let service = KeyService::new(
        Arc::new(keys),
        Arc::new(users),
        Arc::new(clock_at_noon()),
        Arc::new(ids()),
        auditor,
    );
    (service, entries)
}

fn user() -> User {
    User {
        id: UserId::from_suffix("1"),
        platform_id: PlatformId::from_suffix("1"),
        role: crate::user::Role::Admin,
        email: Email::parse("owner@example.com").unwrap(),
        created_on: datetime!(2026-01-01 0:00 UTC),
    }
}

#[tokio::test]
async fn generate_stores_only_hash_and_returns_value_once() {
    let mut users = MockUserStore::new();
    users.expect_get_user().returning(|_, _| Ok(Some(user())));
    let mut keys = MockKeyStore::new();
    keys.expect_insert_key()
        .withf(|k| {
            k.status == KeyStatus::Active
                && k.last4 == "WXYZ"
                && k.hash == crate::api_key::KeyHash::of("priv_ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        })
        .times(1)
        .returning(|_| Ok(()));
    let (service, audit) = service(keys, users);
    let created = service
        .generate(
            &operator(),
            &PlatformId::from_suffix("1"),
            &UserId::from_suffix("1"),
            KeyName::parse("Backend").unwrap(),
            KeyType::Private,
            Mode::Live,
        )
        .await
        .unwrap();
    assert_eq!(created.value.expose(), "priv_ABCDEFGHIJKLMNOPQRSTUVWXYZ");
    assert_eq!(created.key.id.as_str(), "key_01JDX");
    assert_eq!(created.key.mode, Mode::Live);
    assert_eq!(
        recorded(&audit),
        [(Action::KeyGenerated, "key_01JDX".to_owned())]
    );
}

#[tokio::test]
async fn generate_for_unknown_user_writes_nothing() {
    let mut users = MockUserStore::new();
    users.expect_get_user().returning(|_, _| Ok(None));
    let mut keys = MockKeyStore::new();
    keys.expect_insert_key().never();
    let (service, audit) = service(keys, users);
    let err = service
        .generate(
            &operator(),
            &PlatformId::from_suffix("1"),
            &UserId::from_suffix("2"),
            KeyName::parse("Backend").unwrap(),
            KeyType::Public,
            Mode::Test,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound("user")), "{err:?}");
    assert!(recorded(&audit).is_empty(), "a refusal is no change");
}

#[tokio::test]
async fn lifecycle_events_reach_the_store() {
    let platform = PlatformId::from_suffix("1");
    let id = KeyId::from_suffix("1");
    let cases = [
        (
            KeyEvent::Deactivate,
            Some(KeyStatus::Inactive),
            Action::KeyDeactivated,
        ),
        (
            KeyEvent::Activate,
            Some(KeyStatus::Active),
            Action::KeyActivated,
        ),
        (KeyEvent::Delete, None, Action::KeyDeleted),
    ];
    for (event, expected, action) in cases {
        let mut keys = MockKeyStore::new();
        keys.expect_get_key().returning(|_, _| {
            let created = new_key(
                &clock_at_noon(),
                &ids(),
                &PlatformId::from_suffix("1"),
                &UserId::from_suffix("1"),
                KeyName::parse("Backend").unwrap(),
                KeyType::Private,
                Mode::Test,
            );
            Ok(Some(created.key))
        });
        if let Some(status) = expected {
            keys.expect_set_key_status()
                .withf(move |_, _, s| *s == status)
                .times(1)
                .returning(|_, _, _| Ok(()));
            keys.expect_delete_key().never();
        } else {
            keys.expect_delete_key().times(1).returning(|_, _| Ok(()));
            keys.expect_set_key_status().never();
        }
        let (service, audit) = service(keys, MockUserStore::new());
        let after = service
            .apply(&operator(), &platform, &id, event)
            .await
            .unwrap();
        assert_eq!(after.map(|k| k.status), expected, "{event:?}");
        assert_eq!(recorded(&audit), [(action, "key_01JDX".to_owned())]);
    }
}

#[tokio::test]
async fn rename_writes_the_name_and_returns_the_key() {
    let mut keys = MockKeyStore::new();
    keys.expect_rename_key()
        .withf(|p, id, name| {
            p.as_str() == "pfm_1" && id.as_str() == "key_01JDX" && name.as_str() == "Checkout"
        })
        .times(1)
        .returning(|_, _, _| Ok(()));
    keys.expect_get_key().returning(|_, _| {
        let mut created = new_key(
            &clock_at_noon(),
            &ids(),
            &PlatformId::from_suffix("1"),
            &UserId::from_suffix("1"),
            KeyName::parse("Checkout").unwrap(),
            KeyType::Private,
            Mode::Test,
        );
        created.key.status = KeyStatus::Inactive;
        Ok(Some(created.key))
    });
    let (service, audit) = service(keys, MockUserStore::new());
    let key = service
        .rename(
            &operator(),
            &PlatformId::from_suffix("1"),
            &KeyId::from_suffix("01JDX"),
            &KeyName::parse("Checkout").unwrap(),
        )
        .await
        .unwrap();
    assert_eq!(key.name.as_str(), "Checkout");
    assert_eq!(
        recorded(&audit),
        [(Action::KeyRenamed, "key_01JDX".to_owned())]
    );
}

#[tokio::test]
async fn rename_of_a_missing_key_is_not_found() {
    let mut keys = MockKeyStore::new();
    keys.expect_rename_key()
        .returning(|_, _, _| Err(crate::ports::StoreError::NotFound));
    let (service, audit) = service(keys, MockUserStore::new());
    let err = service
        .rename(
            &operator(),
            &PlatformId::from_suffix("1"),
            &KeyId::from_suffix("9"),
            &KeyName::parse("Checkout").unwrap(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ServiceError::NotFound("key")), "{err:?}");
    assert!(recorded(&audit).is_empty());
}

#[tokio::test]
async fn events_on_a_missing_key_are_not_found() {
    let mut keys = MockKeyStore::new();
    keys.expect_get_key().returning(|_, _| Ok(None));
    let (service, audit) = service(keys, MockUserStore::new());
    for event in [KeyEvent::Activate, KeyEvent::Deactivate, KeyEvent::Delete] {
        let err = service
            .apply(
                &operator(),
                &PlatformId::from_suffix("1"),
                &KeyId::from_suffix("9"),
                event,
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ServiceError::NotFound("key")), "{err:?}");
    }
    assert!(recorded(&audit).is_empty());
}
