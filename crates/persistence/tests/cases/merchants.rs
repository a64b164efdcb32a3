//! Merchants: scoped by platform and mode, patched column by column, paged newest first.

use super::*;

pub async fn merchants_are_scoped_by_platform_and_mode(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let b = new_platform(&stores, "B").await;
    let test = principal(&a, Mode::Test);
    let m = stored_merchant(&stores, &test, "Shop").await;
    let got = stores
        .merchants
        .get_merchant(&test.scope, &m.id)
        .await
        .unwrap();
    assert_eq!(got.as_ref(), Some(&m));
    for (platform, mode) in [(&a.platform.id, Mode::Live), (&b.platform.id, Mode::Test)] {
        assert!(
            stores
                .merchants
                .get_merchant(&Scope::new(platform.clone(), mode), &m.id)
                .await
                .unwrap()
                .is_none()
        );
        let page = PageRequest::new(None, None).unwrap();
        assert!(
            stores
                .merchants
                .list_merchants(&Scope::new(platform.clone(), mode), &page)
                .await
                .unwrap()
                .data
                .is_empty()
        );
        assert!(matches!(
            stores
                .merchants
                .delete_merchant_with_event(
                    &Scope::new(platform.clone(), mode),
                    &m.id,
                    T0,
                    &event_id()
                )
                .await,
            Err(StoreError::NotFound)
        ));
    }
}

pub async fn merchant_update_writes_only_what_is_sent(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Live);
    let m = stored_merchant(&stores, &p, "Shop").await;
    let later = T0 + time::Duration::seconds(5);
    // Two clients patch different fields from the same starting point: both changes stay.
    let rename = MerchantPatch {
        name: Some(MerchantName::parse("Shop renamed").unwrap()),
        ..MerchantPatch::default()
    };
    let clear_email = MerchantPatch {
        email: Some(None),
        ..MerchantPatch::default()
    };
    let after_rename = stores
        .merchants
        .update_merchant_with_event(&p.scope, &m.id, &rename, later, &event_id())
        .await
        .unwrap();
    assert_eq!(after_rename.details.name.as_str(), "Shop renamed");
    assert_eq!(after_rename.details.email, m.details.email);
    assert_eq!(after_rename.updated_on, later);
    assert_eq!(after_rename.created_on, m.created_on);
    let after_both = stores
        .merchants
        .update_merchant_with_event(&p.scope, &m.id, &clear_email, later, &event_id())
        .await
        .unwrap();
    assert_eq!(after_both.details.name.as_str(), "Shop renamed");
    assert_eq!(after_both.details.email, None);
    assert_eq!(after_both.details.currency, m.details.currency);
    let reread = stores
        .merchants
        .get_merchant(&p.scope, &m.id)
        .await
        .unwrap();
    assert_eq!(reread, Some(after_both));
}

pub async fn merchant_update_and_delete_are_scoped(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let b = new_platform(&stores, "B").await;
    let p = principal(&a, Mode::Live);
    let m = stored_merchant(&stores, &p, "Shop").await;
    let rename = MerchantPatch {
        name: Some(MerchantName::parse("Stolen").unwrap()),
        ..MerchantPatch::default()
    };
    for (platform, mode) in [(&a.platform.id, Mode::Test), (&b.platform.id, Mode::Live)] {
        let err = stores
            .merchants
            .update_merchant_with_event(
                &Scope::new(platform.clone(), mode),
                &m.id,
                &rename,
                T0,
                &event_id(),
            )
            .await;
        assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
        let err = stores
            .merchants
            .delete_merchant_with_event(&Scope::new(platform.clone(), mode), &m.id, T0, &event_id())
            .await;
        assert!(matches!(err, Err(StoreError::NotFound)), "{err:?}");
    }
    let unchanged = stores
        .merchants
        .get_merchant(&p.scope, &m.id)
        .await
        .unwrap();
    assert_eq!(unchanged, Some(m.clone()));

    stores
        .merchants
        .delete_merchant_with_event(&p.scope, &m.id, T0, &event_id())
        .await
        .unwrap();
    assert!(
        stores
            .merchants
            .get_merchant(&p.scope, &m.id)
            .await
            .unwrap()
            .is_none()
    );
    let err = stores
        .merchants
        .update_merchant_with_event(&p.scope, &m.id, &rename, T0, &event_id())
        .await;
    assert!(
        matches!(err, Err(StoreError::NotFound)),
        "a deleted merchant cannot be updated"
    );
    assert!(matches!(
        stores
            .merchants
            .delete_merchant_with_event(&p.scope, &m.id, T0, &event_id())
            .await,
        Err(StoreError::NotFound)
    ));
}

pub async fn merchant_pages_newest_first(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let mut ids = Vec::new();
    for i in 0..25 {
        let m = stored_merchant(&stores, &p, &format!("Shop {i}")).await;
        ids.push(m.id);
    }
    let deleted = ids.remove(3);
    stores
        .merchants
        .delete_merchant_with_event(&p.scope, &deleted, T0, &event_id())
        .await
        .unwrap();
    ids.reverse();

    let mut seen = Vec::new();
    let mut cursor = None;
    let mut pages = Vec::new();
    loop {
        let req = PageRequest::new(Some(10), cursor.clone()).unwrap();
        let page = stores
            .merchants
            .list_merchants(&p.scope, &req)
            .await
            .unwrap();
        pages.push((page.data.len(), page.has_more));
        cursor = page.data.last().map(|m| m.id.to_string());
        seen.extend(page.data.into_iter().map(|m| m.id));
        if !page.has_more {
            break;
        }
    }
    assert_eq!(pages, [(10, true), (10, true), (4, false)]);
    assert_eq!(seen, ids);
}
