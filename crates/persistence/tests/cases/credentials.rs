//! Dashboard credentials: passwords found by email across platforms, one-time links used once
//! and only in time, sessions found with their user and ended with a password change.

use holdfast_domain::api_key::KeyHash;
use holdfast_domain::dashboard::{LIFETIME, LinkPurpose, Session, UserLink};

use super::*;

fn session(user: &User, secret: &str) -> Session {
    Session {
        id_hash: KeyHash::of(secret),
        user_id: user.id.clone(),
        platform_id: user.platform_id.clone(),
        mode: Mode::Test,
        created_on: T0,
        last_seen_on: T0,
        expires_on: T0 + LIFETIME,
    }
}

fn link(user: &User, secret: &str, expires_on: OffsetDateTime) -> UserLink {
    UserLink {
        token_hash: KeyHash::of(secret),
        user_id: user.id.clone(),
        platform_id: user.platform_id.clone(),
        purpose: LinkPurpose::Invite,
        created_on: T0,
        expires_on,
    }
}

/// Passwords are found by email across platforms; a link sets one once, and only in time.
pub async fn passwords_links_and_sessions_are_kept_by_hash_and_used_once(db: Database) {
    let stores = db.stores();
    let credentials = &stores.credentials;
    let a = new_platform(&stores, "A").await;
    let b = new_platform(&stores, "B").await;
    let (owner_a, owner_b) = (a.owner.clone(), b.owner.clone());
    let email = owner_a.email.clone();
    assert!(
        credentials
            .sign_in_candidates(&email)
            .await
            .unwrap()
            .is_empty(),
        "no password yet"
    );

    // A link sets the password once, and only before it expires.
    credentials
        .insert_link(&link(&owner_a, "L1", T0 + time::Duration::hours(24)), None)
        .await
        .unwrap();
    credentials
        .insert_link(&link(&owner_b, "L2", T0), None)
        .await
        .unwrap();
    // Whose a link is, while it can be used: reading it uses nothing.
    for _ in 0..2 {
        let holder = credentials
            .usable_link_user(&KeyHash::of("L1"), T0)
            .await
            .unwrap();
        assert_eq!(holder.map(|u| u.id), Some(owner_a.id.clone()));
    }
    for (token, at) in [
        ("L2", T0),
        ("L1", T0 + time::Duration::hours(24)),
        ("L3", T0),
    ] {
        let holder = credentials
            .usable_link_user(&KeyHash::of(token), at)
            .await
            .unwrap();
        assert_eq!(holder, None, "{token} at {at}: expired or unknown");
    }
    let late = credentials
        .redeem_link(&KeyHash::of("L2"), T0, "h:late")
        .await
        .unwrap();
    assert_eq!(late, None, "an expired link sets nothing");
    let used = credentials
        .redeem_link(&KeyHash::of("L1"), T0, "h:first")
        .await
        .unwrap();
    assert_eq!(used.map(|u| u.id), Some(owner_a.id.clone()));
    let again = credentials
        .redeem_link(&KeyHash::of("L1"), T0, "h:again")
        .await
        .unwrap();
    assert_eq!(again, None, "a link is used once");
    let used_up = credentials
        .usable_link_user(&KeyHash::of("L1"), T0)
        .await
        .unwrap();
    assert_eq!(used_up, None, "a used link has no holder");
    credentials
        .set_password(&b.platform.id, &owner_b.id, "h:second")
        .await
        .unwrap();
    let candidates = credentials.sign_in_candidates(&email).await.unwrap();
    let found: Vec<_> = candidates
        .iter()
        .map(|(u, h)| (u.id.clone(), h.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (owner_a.id.clone(), "h:first"),
            (owner_b.id.clone(), "h:second")
        ],
        "both platforms' accounts with that email, oldest first"
    );
    let nobody = UserId::from_suffix("nobody");
    let missing = credentials
        .set_password(&a.platform.id, &nobody, "h:x")
        .await;
    assert!(matches!(missing, Err(StoreError::NotFound)));
    let elsewhere = credentials
        .set_password(&b.platform.id, &owner_a.id, "h:x")
        .await;
    assert!(
        matches!(elsewhere, Err(StoreError::NotFound)),
        "scoped by platform"
    );
}

/// A session is found with its user and mode; a password change and a deletion end sessions.
pub async fn sessions_are_found_with_their_user_and_ended_with_it(db: Database) {
    let stores = db.stores();
    let credentials = &stores.credentials;
    let a = new_platform(&stores, "A").await;
    let owner_a = a.owner.clone();
    credentials
        .insert_session(&session(&owner_a, "S1"))
        .await
        .unwrap();
    credentials
        .set_session_mode(&KeyHash::of("S1"), Mode::Live)
        .await
        .unwrap();
    credentials
        .touch_session(&KeyHash::of("S1"), T0 + time::Duration::minutes(5))
        .await
        .unwrap();
    let signed_in = credentials
        .find_session(&KeyHash::of("S1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(signed_in.user, owner_a);
    assert_eq!(
        (signed_in.session.mode, signed_in.session.last_seen_on),
        (Mode::Live, T0 + time::Duration::minutes(5))
    );
    assert_eq!(
        credentials.find_session(&KeyHash::of("S2")).await.unwrap(),
        None
    );
    credentials
        .set_password(&a.platform.id, &owner_a.id, "h:new")
        .await
        .unwrap();
    assert_eq!(
        credentials.find_session(&KeyHash::of("S1")).await.unwrap(),
        None
    );

    let dev = User {
        id: UserId::from_suffix("dev"),
        platform_id: a.platform.id.clone(),
        email: Email::parse("dev@example.com").unwrap(),
        role: holdfast_domain::user::Role::Viewer,
        created_on: T0,
    };
    stores.users.insert_user(&dev).await.unwrap();
    credentials
        .insert_session(&session(&dev, "S3"))
        .await
        .unwrap();
    assert!(
        credentials
            .find_session(&KeyHash::of("S3"))
            .await
            .unwrap()
            .is_some()
    );
    stores
        .users
        .delete_user(&a.platform.id, &dev.id)
        .await
        .unwrap();
    assert_eq!(
        credentials.find_session(&KeyHash::of("S3")).await.unwrap(),
        None
    );
    credentials
        .delete_session(&KeyHash::of("S3"))
        .await
        .unwrap();
}

/// A session's flash is kept for its next page, replaced by a later one, and taken once: of
/// several pages asking at once, one gets it; another session never sees it.
pub async fn a_sessions_flash_is_taken_once(db: Database) {
    let stores = db.stores();
    let credentials = &stores.credentials;
    let a = new_platform(&stores, "A").await;
    for secret in ["S1", "S2"] {
        credentials
            .insert_session(&session(&a.owner, secret))
            .await
            .unwrap();
    }
    let (s1, s2) = (KeyHash::of("S1"), KeyHash::of("S2"));
    assert_eq!(
        credentials.take_session_flash(&s1, "/k").await.unwrap(),
        None
    );
    credentials
        .set_session_flash(&s1, "/k", "first")
        .await
        .unwrap();
    credentials
        .set_session_flash(&s1, "/k", "second")
        .await
        .unwrap();
    // The page it waits for is read with the session, so other pages ask nothing.
    let waiting = |id: KeyHash| {
        let credentials = credentials.clone();
        async move {
            credentials
                .find_session(&id)
                .await
                .unwrap()
                .unwrap()
                .flash_for
        }
    };
    assert_eq!(waiting(s1.clone()).await.as_deref(), Some("/k"));
    assert_eq!(waiting(s2.clone()).await, None);
    assert_eq!(
        credentials.take_session_flash(&s2, "/k").await.unwrap(),
        None
    );
    // Another page of the same session leaves it for its own page.
    assert_eq!(
        credentials.take_session_flash(&s1, "/other").await.unwrap(),
        None
    );
    assert_eq!(
        credentials.take_session_flash(&s1, "/k/x").await.unwrap(),
        None
    );
    let takers = (0..4).map(|_| {
        let credentials = credentials.clone();
        let s1 = s1.clone();
        tokio::spawn(async move { credentials.take_session_flash(&s1, "/k").await })
    });
    let mut taken = Vec::new();
    for taker in takers {
        if let Some(flash) = taker.await.unwrap().unwrap() {
            taken.push(flash);
        }
    }
    assert_eq!(taken, ["second"]);
    assert_eq!(
        credentials.take_session_flash(&s1, "/k").await.unwrap(),
        None
    );
    // The session itself is untouched by its flash, and no flash waits any more.
    assert_eq!(waiting(s1.clone()).await, None);
}
