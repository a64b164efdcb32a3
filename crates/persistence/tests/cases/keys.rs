//! API keys: found by hash only, every other operation scoped by platform.

use super::*;

pub async fn key_is_found_by_hash_only(db: Database) {
    let stores = db.stores();
    let created = new_platform(&stores, "Acme").await;
    let public = &created.keys[1];
    let found = stores
        .keys
        .find_key_by_hash(&public.value.hash())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found, public.key);
    assert_eq!(found.last4, public.value.last4());
    let unknown = KeyHash::of("pub_test_00000000000000000000000000");
    assert!(
        stores
            .keys
            .find_key_by_hash(&unknown)
            .await
            .unwrap()
            .is_none()
    );
}

pub async fn key_lifecycle_is_scoped_by_platform(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let b = new_platform(&stores, "B").await;
    let id = &a.keys[0].key.id;
    let foreign = &b.platform.id;
    let name = KeyName::parse("Renamed key").unwrap();
    assert!(matches!(
        stores.keys.rename_key(foreign, id, &name).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        stores
            .keys
            .set_key_status(foreign, id, KeyStatus::Inactive)
            .await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        stores.keys.delete_key(foreign, id).await,
        Err(StoreError::NotFound)
    ));
    assert!(stores.keys.get_key(foreign, id).await.unwrap().is_none());

    let own = &a.platform.id;
    stores.keys.rename_key(own, id, &name).await.unwrap();
    stores
        .keys
        .set_key_status(own, id, KeyStatus::Inactive)
        .await
        .unwrap();
    let key = stores.keys.get_key(own, id).await.unwrap().unwrap();
    assert_eq!(
        (key.name.as_str(), key.status),
        ("Renamed key", KeyStatus::Inactive)
    );
    assert_eq!(key.mode, Mode::Test, "mode never changes");

    let last_used = async |platform| {
        stores
            .keys
            .get_key(platform, id)
            .await
            .unwrap()
            .map(|k| k.last_used_on)
    };
    stores.keys.touch_key(foreign, id, T0).await.unwrap();
    assert_eq!(
        last_used(own).await,
        Some(None),
        "touching is scoped by platform"
    );
    stores.keys.touch_key(own, id, T0).await.unwrap();
    assert_eq!(last_used(own).await, Some(Some(T0)));

    stores.keys.delete_key(own, id).await.unwrap();
    assert!(stores.keys.get_key(own, id).await.unwrap().is_none());
    assert!(
        stores
            .keys
            .find_key_by_hash(&a.keys[0].value.hash())
            .await
            .unwrap()
            .is_none()
    );
    assert!(matches!(
        stores.keys.delete_key(own, id).await,
        Err(StoreError::NotFound)
    ));
}
