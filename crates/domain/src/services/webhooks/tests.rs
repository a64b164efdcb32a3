use super::*;
use crate::ids::{KeyId, UserId};
use crate::mode::{KeyType, Mode};
use crate::ports::{MockIds, MockNotificationQueue, MockWebhookStore};
use crate::services::audit::recording::{self, recorded};
use crate::services::fixtures::clock_at_noon;

/// Spec 2.4: a delivery's record keeps its bodies 15 days, counted back from now (the
/// hourly retention) or from the time an operator gives.
#[tokio::test]
async fn deliveries_are_archived_after_fifteen_days() {
    use time::macros::datetime;
    let as_of = datetime!(2026-12-31 0:00 UTC);
    let mut queue = MockNotificationQueue::new();
    for (before, archived) in [
        // The clock's noon (2026-11-22 12:00), less 15 days.
        (datetime!(2026-11-07 12:00 UTC), 3),
        (datetime!(2026-12-16 0:00 UTC), 5),
    ] {
        queue
            .expect_archive_deliveries()
            .withf(move |at| *at == before)
            .times(1)
            .returning(move |_| Ok(archived));
    }
    let (auditor, _audit) = recording::auditor();
    let service = WebhookService::new(
        Arc::new(MockWebhookStore::new()),
        Arc::new(queue),
        Arc::new(clock_at_noon()),
        Arc::new(MockIds::new()),
        auditor,
    );
    assert_eq!(service.archive_deliveries(None).await.unwrap(), 3);
    assert_eq!(service.archive_deliveries(Some(as_of)).await.unwrap(), 5);
}

#[tokio::test]
async fn the_creator_is_the_user_behind_the_key_and_the_secret_is_standard() {
    let mut store = MockWebhookStore::new();
    store
        .expect_insert_webhook()
        .withf(|s, max, reply| {
            reply.is_none()
                && *max == DEFAULT_MAX_SUBSCRIPTIONS
                && s.creator.as_str() == "usr_gen"
                && s.mode == Mode::Live
                && s.consecutive_failures == 0
        })
        .returning(|_, _, _| Ok(true));
    let mut ids = MockIds::new();
    ids.expect_next_id().return_const("01".to_owned());
    ids.expect_key_secret().return_const("a".repeat(26));
    let (auditor, audit) = recording::auditor();
    let service = WebhookService::new(
        Arc::new(store),
        Arc::new(MockNotificationQueue::new()),
        Arc::new(clock_at_noon()),
        Arc::new(ids),
        auditor,
    );
    let who = Principal {
        scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Live),
        key_type: KeyType::Private,
        key_id: Some(KeyId::from_suffix("1")),
        user_id: UserId::from_suffix("gen"),
    };
    let created = service
        .create(
            &who,
            &Actor::api(KeyId::from_suffix("1"), None),
            NewWebhook {
                endpoint_url: EndpointUrl::parse("https://example.com/h").unwrap(),
                events: EventList::parse(&["transaction.created"]).unwrap(),
                description: None,
                custom_header: None,
                active: true,
                metadata: crate::metadata::Metadata::default(),
            },
            None,
        )
        .await
        .unwrap();
    assert_eq!(created.id.as_str(), "wh_01");
    assert_eq!(
        created.secret,
        format!("whsec_{}", STANDARD.encode("a".repeat(52)))
    );
    assert_eq!(
        recorded(&audit),
        [(Action::WebhookCreated, "wh_01".to_owned())]
    );
    assert_eq!(audit.lock().unwrap()[0].actor.door, crate::audit::Door::Api);
}

/// A rotation made from a secret another rotation replaced first writes nothing and says
/// so (409); the one made from the current secret keeps that secret as the previous one.
#[tokio::test]
async fn a_rotation_racing_another_is_a_conflict() {
    let who = Principal {
        scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), Mode::Test),
        key_type: KeyType::Private,
        key_id: Some(KeyId::from_suffix("1")),
        user_id: UserId::from_suffix("1"),
    };
    for (won, conflict) in [(true, false), (false, true)] {
        let mut store = MockWebhookStore::new();
        store.expect_get_webhook().returning(|scope, id| {
            Ok(Some(Subscription {
                id: id.clone(),
                platform_id: scope.platform.clone(),
                active: true,
                consecutive_failures: 0,
                ..subscription_in(scope.mode)
            }))
        });
        store
            .expect_rotate_secret()
            .withf(|rotated, expected, _| {
                expected == "whsec_b2xk"
                    && rotated.previous_secret.as_ref().map(|p| p.secret.as_str())
                        == Some("whsec_b2xk")
            })
            .times(1)
            .returning(move |_, _, _| Ok(won));
        let mut ids = MockIds::new();
        ids.expect_key_secret().return_const("n".repeat(26));
        let (auditor, audit) = recording::auditor();
        let service = WebhookService::new(
            Arc::new(store),
            Arc::new(MockNotificationQueue::new()),
            Arc::new(clock_at_noon()),
            Arc::new(ids),
            auditor,
        );
        let got = service
            .rotate_secret(&who, &Actor::operator(), &WebhookId::from_suffix("1"), None)
            .await;
        assert_eq!(
            matches!(got, Err(ServiceError::Conflict { .. })),
            conflict,
            "{got:?}"
        );
        let expected: &[_] = if conflict {
            &[]
        } else {
            &[(Action::WebhookSecretRotated, "wh_1".to_owned())]
        };
        assert_eq!(recorded(&audit), expected);
    }
}

/// Subscription `wh_1` of platform `pfm_1` in `mode`.
fn subscription_in(mode: Mode) -> Subscription {
    Subscription {
        id: WebhookId::from_suffix("1"),
        platform_id: PlatformId::from_suffix("1"),
        mode,
        endpoint_url: EndpointUrl::parse("https://example.com/h").unwrap(),
        events: EventList::parse(&["transaction.created"]).unwrap(),
        description: None,
        custom_header: None,
        active: false,
        secret: "whsec_b2xk".into(),
        previous_secret: None,
        creator: UserId::from_suffix("1"),
        consecutive_failures: 3,
        created_on: time::macros::datetime!(2026-01-01 0:00 UTC),
        updated_on: time::macros::datetime!(2026-01-01 0:00 UTC),
        metadata: crate::metadata::Metadata::default(),
    }
}

/// The dashboard's toggle acts only in the session's mode: another mode's subscription is
/// not found and is left as it was.
#[tokio::test]
async fn the_dashboard_toggle_stays_in_its_mode() {
    let mut store = MockWebhookStore::new();
    store
        .expect_get_webhook()
        .returning(|scope, _| Ok((scope.mode == Mode::Live).then(|| subscription_in(Mode::Live))));
    store
        .expect_toggle_webhook()
        .withf(|_, _, active, _| *active)
        .times(1)
        .returning(|_, _, _, _| Ok(subscription_in(Mode::Live)));
    let (auditor, audit) = recording::auditor();
    let service = WebhookService::new(
        Arc::new(store),
        Arc::new(MockNotificationQueue::new()),
        Arc::new(clock_at_noon()),
        Arc::new(MockIds::new()),
        auditor,
    );
    let id = WebhookId::from_suffix("1");
    let in_mode = |mode| Principal {
        scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), mode),
        key_type: KeyType::Private,
        key_id: None,
        user_id: UserId::from_suffix("1"),
    };
    let other = service
        .set_active(&in_mode(Mode::Test), &Actor::operator(), &id, true)
        .await;
    assert!(
        matches!(other, Err(ServiceError::NotFound("webhook"))),
        "{other:?}"
    );
    service
        .set_active(&in_mode(Mode::Live), &Actor::operator(), &id, true)
        .await
        .unwrap();
    assert_eq!(
        recorded(&audit),
        [(Action::WebhookActivated, "wh_1".to_owned())],
        "the refusal in the other mode records nothing"
    );
}
