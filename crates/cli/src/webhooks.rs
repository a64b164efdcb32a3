//! `holdfast webhooks …` and `holdfast deliveries …`: the dashboard's webhook operations
//! (spec 4.6) for operators.

use holdfast_domain::ids::{NotificationId, WebhookId};
use holdfast_domain::page::PageRequest;
use holdfast_domain::ports::{DeliveryState, ResendError};
use serde_json::json;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{explain, platform_id};
use crate::args::{DeliveryCommand, WebhookCommand};
use crate::output::emit;
use holdfast_web::Services;
use holdfast_web::views::webhooks::{delivery_view, view};

pub async fn run_webhooks(
    services: &Services,
    cmd: WebhookCommand,
    json: bool,
) -> anyhow::Result<()> {
    let (platform, id, active) = match cmd {
        WebhookCommand::Enable {
            platform,
            webhook_id,
        } => (platform, webhook_id, true),
        WebhookCommand::Disable {
            platform,
            webhook_id,
        } => (platform, webhook_id, false),
    };
    let platform = platform_id(&platform)?;
    let id = WebhookId::parse("webhook", &id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let subscription = services
        .webhooks
        .toggle(
            &holdfast_domain::audit::Actor::operator(),
            &platform,
            &id,
            active,
        )
        .await
        .map_err(explain)?;
    emit(json, &view(&subscription), || {
        format!(
            "{} is now {} (failure counter {})",
            subscription.id,
            if subscription.active {
                "active"
            } else {
                "inactive"
            },
            subscription.consecutive_failures
        )
    });
    Ok(())
}

pub async fn run_deliveries(
    services: &Services,
    cmd: DeliveryCommand,
    json: bool,
) -> anyhow::Result<()> {
    match cmd {
        DeliveryCommand::List {
            platform,
            webhook,
            limit,
        } => {
            let platform = platform_id(&platform)?;
            let id = WebhookId::parse("webhook", &webhook).map_err(|e| anyhow::anyhow!("--{e}"))?;
            let page = PageRequest::new(Some(i64::from(limit)), None)
                .map_err(|e| anyhow::anyhow!("--{e}"))?;
            let found = services
                .webhooks
                .operator_deliveries(&platform, &id, &page)
                .await
                .map_err(explain)?;
            let value = json!({ "data": found.data.iter().map(delivery_view).collect::<Vec<_>>(), "hasMore": found.has_more });
            emit(json, &value, || {
                found
                    .data
                    .iter()
                    .map(|d| {
                        format!(
                            "{}  {}  {}  {} request(s)",
                            d.id,
                            d.event_type,
                            state_word(d.state),
                            d.requests
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        DeliveryCommand::Resend {
            platform,
            notification_id,
        } => {
            let platform = platform_id(&platform)?;
            let id = NotificationId::parse("notification", &notification_id)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            let queued = services
                .webhooks
                .resend(&holdfast_domain::audit::Actor::operator(), &platform, &id)
                .await
                .map_err(|e| match e {
                    ResendError::Store(store) => anyhow::Error::new(store),
                    refused => anyhow::anyhow!("cannot resend {id}: {refused}"),
                })?;
            emit(json, &delivery_view(&queued), || {
                format!(
                    "accepted: queued as {} (delivery follows; see `deliveries list`)",
                    queued.id
                )
            });
        }
        DeliveryCommand::Archive { as_of } => {
            let as_of = as_of
                .map(|raw| OffsetDateTime::parse(&raw, &Rfc3339))
                .transpose()
                .map_err(|e| anyhow::anyhow!("--as-of: must be an RFC 3339 time ({e})"))?;
            let archived = services.webhooks.archive_deliveries(as_of).await?;
            emit(json, &json!({ "archived": archived }), || {
                format!("{archived} delivery record(s) archived")
            });
        }
    }
    Ok(())
}

/// A delivery's state as a person reads it: `pending`, or its outcome (`succeeded`, `failed`,
/// `skipped`), the words the API's `state` uses.
fn state_word(state: DeliveryState) -> &'static str {
    match state {
        DeliveryState::Pending => "pending",
        DeliveryState::Done(outcome) => outcome.as_str(),
    }
}
