//! Metadata on merchants, tokens and subscriptions, and the test event of a subscription.

use holdfast_domain::metadata::Metadata;
use holdfast_domain::ports::{DeliveryState, Replacement, TestEvent, TestEventError};

use super::*;

fn pairs(list: &[(&str, &str)]) -> Metadata {
    Metadata::parse(
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
    .unwrap()
}

/// What is written comes back, in the merchant's event too; a patch or a replacement that
/// carries metadata replaces it whole, one that carries none (the dashboard's) leaves it.
pub async fn metadata_is_kept_on_merchants_tokens_and_subscriptions(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);

    let mut m = merchant(&p, "Shop");
    m.details.metadata = pairs(&[("crm", "acct-7"), ("tier", "gold")]);
    stores
        .merchants
        .insert_merchant_with_event(&m, &event_id(), None)
        .await
        .unwrap();
    let read = stores
        .merchants
        .get_merchant(&p.scope, &m.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read.details.metadata, m.details.metadata);
    let events = stores.events.list_events(&p.scope).await.unwrap();
    assert!(
        events[0]
            .data
            .contains(r#""metadata":{"crm":"acct-7","tier":"gold"}"#),
        "{}",
        events[0].data
    );
    let patch = |metadata: Option<Metadata>| MerchantPatch {
        name: Some(MerchantName::parse("Renamed").unwrap()),
        metadata,
        ..MerchantPatch::default()
    };
    let patched = |patch: MerchantPatch| {
        let stores = stores.clone();
        let (scope, id) = (p.scope.clone(), m.id.clone());
        async move {
            stores
                .merchants
                .update_merchant_with_event(&scope, &id, &patch, T0, &event_id())
                .await
                .unwrap()
                .details
                .metadata
        }
    };
    assert_eq!(
        patched(patch(None)).await,
        m.details.metadata,
        "left as it is"
    );
    let replaced = pairs(&[("crm", "acct-8")]);
    assert_eq!(patched(patch(Some(replaced.clone()))).await, replaced);
    assert!(patched(patch(Some(Metadata::default()))).await.is_empty());

    let mut vault = token(&p, "vault", TokenKind::Vault);
    vault.metadata = pairs(&[("customer", "cus_42")]);
    stores.tokens.save(&vault, None).await.unwrap();
    let found = stores
        .tokens
        .find(&p.scope, &vault.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.metadata, vault.metadata);

    let mut hook = subscription(&p, "labelled", &["merchant.created"], true);
    hook.metadata = pairs(&[("team", "payments")]);
    stores
        .webhooks
        .insert_webhook(&hook, u32::MAX, None)
        .await
        .unwrap();
    let replacement = |metadata: Option<Metadata>| Replacement {
        endpoint_url: hook.endpoint_url.clone(),
        events: hook.events.clone(),
        description: None,
        custom_header: None,
        active: None,
        metadata,
    };
    let replaced_with = |r: Replacement| {
        let stores = stores.clone();
        let (scope, id) = (p.scope.clone(), hook.id.clone());
        async move {
            stores
                .webhooks
                .replace_webhook(&scope, &id, &r, T0)
                .await
                .unwrap()
                .metadata
        }
    };
    assert_eq!(replaced_with(replacement(None)).await, hook.metadata);
    let other = pairs(&[("team", "risk")]);
    assert_eq!(replaced_with(replacement(Some(other.clone()))).await, other);
    let got = stores
        .webhooks
        .get_webhook(&p.scope, &hook.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(got.metadata, other);
}

fn test_event(p: &Principal, webhook: &WebhookId) -> Event {
    Event {
        id: event_id(),
        platform_id: p.scope.platform.clone(),
        mode: p.scope.mode,
        data: EventData::WebhookTest(TestEvent {
            webhook_id: webhook.clone(),
            message: TestEvent::MESSAGE,
        }),
        created_on: T0,
    }
}

/// A test event is written with one notification, for the subscription it was asked for only
/// (another that names `webhook.test` gets nothing); an inactive subscription, another mode's
/// or an unknown one gets none, and nothing is written for them.
pub async fn a_test_event_goes_to_its_subscription_only(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let hooks = &stores.webhooks;
    for (suffix, events, active) in [
        ("asked", &["merchant.created"][..], true),
        ("listening", &["webhook.test"][..], true),
        ("off", &["webhook.test"][..], false),
    ] {
        hooks
            .insert_webhook(&subscription(&p, suffix, events, active), u32::MAX, None)
            .await
            .unwrap();
    }
    let asked = WebhookId::from_suffix("asked");
    let queued = stores
        .notifications
        .queue_test(&p.scope, &asked, &test_event(&p, &asked))
        .await
        .unwrap();
    assert_eq!(
        (
            queued.webhook_id.as_str(),
            queued.event_type.as_str(),
            queued.state
        ),
        ("wh_asked", "webhook.test", DeliveryState::Pending)
    );
    let claimed = claim_all_due(&stores, T0 + time::Duration::seconds(1)).await;
    let to: Vec<&str> = claimed.iter().map(|c| c.webhook_id.as_str()).collect();
    assert_eq!(
        to,
        ["wh_asked"],
        "one notification, to the subscription asked"
    );
    assert!(claimed[0].event_data.contains(r#""webhookId":"wh_asked""#));

    let off = WebhookId::from_suffix("off");
    let live = principal(&a, Mode::Live);
    let refusals = [
        (&p, off.clone(), "inactive"),
        (&live, asked.clone(), "another mode's"),
        (&p, WebhookId::from_suffix("nowhere"), "unknown"),
    ];
    for (who, id, what) in refusals {
        let got = stores
            .notifications
            .queue_test(&who.scope, &id, &test_event(who, &id))
            .await;
        let expected_inactive = what == "inactive";
        assert!(
            matches!(
                (&got, expected_inactive),
                (Err(TestEventError::Inactive), true) | (Err(TestEventError::NotFound), false)
            ),
            "{what}: {got:?}"
        );
    }
    assert_eq!(
        stores.events.list_events(&p.scope).await.unwrap().len(),
        1,
        "nothing written for a refused test"
    );
}
