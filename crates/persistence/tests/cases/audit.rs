//! The audit log: entries of a platform, in the mode asked for plus those without a mode, newest
//! first, page after page; and a link's email queued with the link or not at all.

use holdfast_domain::audit::{Action, Actor, AuditEntry};
use holdfast_domain::dashboard::{LinkPurpose, UserLink};
use holdfast_domain::ports::{LinkEmail, OutgoingEmail};

use super::*;

fn entry(n: u32, platform: &PlatformId, mode: Option<Mode>, action: Action) -> AuditEntry {
    AuditEntry {
        id: format!("aud_{n:04}"),
        platform_id: platform.clone(),
        mode,
        actor: Actor::dashboard(
            UserId::from_suffix("1"),
            Some(std::net::IpAddr::from([192, 0, 2, 7])),
        ),
        action,
        target: format!("key_{n}"),
        created_on: T0,
    }
}

pub async fn the_audit_log_lists_a_platforms_mode_newest_first(db: Database) {
    let stores = db.stores();
    let (mine, theirs) = (PlatformId::from_suffix("a"), PlatformId::from_suffix("b"));
    let written = [
        entry(1, &mine, Some(Mode::Test), Action::KeyGenerated),
        entry(2, &mine, Some(Mode::Live), Action::KeyDeleted),
        entry(3, &mine, None, Action::UserCreated),
        entry(4, &theirs, Some(Mode::Test), Action::KeyRenamed),
        entry(5, &mine, Some(Mode::Test), Action::WebhookResent),
        AuditEntry {
            actor: Actor::operator(),
            ..entry(6, &mine, None, Action::UserPasswordSet)
        },
    ];
    for e in &written {
        stores.audit.record(e).await.unwrap();
    }
    let first = stores
        .audit
        .list_audit(&mine, Mode::Test, &PageRequest::new(Some(3), None).unwrap())
        .await
        .unwrap();
    let ids: Vec<&str> = first.data.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["aud_0006", "aud_0005", "aud_0003"]);
    assert!(first.has_more);
    assert_eq!(first.data[0], written[5], "read back as written");
    assert_eq!(first.data[1], written[4]);
    let next = stores
        .audit
        .list_audit(
            &mine,
            Mode::Test,
            &PageRequest::new(Some(3), Some("aud_0003".into())).unwrap(),
        )
        .await
        .unwrap();
    let ids: Vec<&str> = next.data.iter().map(|e| e.id.as_str()).collect();
    assert_eq!(ids, ["aud_0001"], "no live entry, none of another platform");
    assert!(!next.has_more);
}

pub async fn a_links_email_is_queued_with_it_or_not_at_all(db: Database) {
    let stores = db.stores();
    let created = new_platform(&stores, "Mail").await;
    let owner = &created.owner;
    let link = |secret: &str| UserLink {
        token_hash: KeyHash::of(secret),
        user_id: owner.id.clone(),
        platform_id: owner.platform_id.clone(),
        purpose: LinkPurpose::Reset,
        created_on: T0,
        expires_on: T0 + time::Duration::hours(1),
    };
    let email = |id: &str| LinkEmail {
        id: id.into(),
        email: OutgoingEmail {
            to: owner.email.as_str().into(),
            subject: "Reset".into(),
            body: "the link".into(),
        },
    };
    stores
        .credentials
        .insert_link(&link("R1"), Some(email("eml_1")))
        .await
        .unwrap();
    // The same link again breaks its key: its email is not queued either.
    let refused = stores
        .credentials
        .insert_link(&link("R1"), Some(email("eml_2")))
        .await;
    assert!(refused.is_err());
    let queued = stores.emails.claim_emails(T0, T0, 10).await.unwrap();
    let ids: Vec<&str> = queued.iter().map(|q| q.id.as_str()).collect();
    assert_eq!(ids, ["eml_1"]);
    assert_eq!(queued[0].email.body, "the link");
}
