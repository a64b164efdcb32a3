use holdfast_domain::api_key::{KeyEvent, KeyName};
use holdfast_domain::ids::{KeyId, UserId};
use serde_json::json;

use super::{explain, platform_id};
use crate::args::{KeyCommand, KeyTarget};
use crate::output::{created_key_json, created_key_line, emit, key_json, key_line};
use holdfast_web::Services;

pub async fn run(services: &Services, cmd: KeyCommand, json: bool) -> anyhow::Result<()> {
    match cmd {
        KeyCommand::Create {
            platform,
            name,
            key_type,
            mode,
            user,
        } => {
            let platform = platform_id(&platform.platform)?;
            let name = KeyName::parse(&name).map_err(|e| explain(e.into()))?;
            let user = match user {
                Some(raw) => UserId::parse("user", &raw).map_err(|e| anyhow::anyhow!("--{e}"))?,
                None => {
                    services
                        .platforms
                        .get(&platform)
                        .await
                        .map_err(explain)?
                        .owner_id
                }
            };
            let created = services
                .keys
                .generate(
                    &holdfast_domain::audit::Actor::operator(),
                    &platform,
                    &user,
                    name,
                    key_type.into(),
                    mode.into(),
                )
                .await
                .map_err(explain)?;
            emit(json, &created_key_json(&created), || {
                created_key_line(&created)
            });
        }
        KeyCommand::List { platform } => {
            let platform = platform_id(&platform.platform)?;
            services.platforms.get(&platform).await.map_err(explain)?;
            let keys = services.keys.list(&platform).await.map_err(explain)?;
            let value = json!({ "data": keys.iter().map(key_json).collect::<Vec<_>>() });
            emit(json, &value, || {
                keys.iter().map(key_line).collect::<Vec<_>>().join("\n")
            });
        }
        KeyCommand::Rename { target, name } => {
            let (platform, id) = target_ids(&target)?;
            let name = KeyName::parse(&name).map_err(|e| explain(e.into()))?;
            let key = services
                .keys
                .rename(
                    &holdfast_domain::audit::Actor::operator(),
                    &platform,
                    &id,
                    &name,
                )
                .await
                .map_err(explain)?;
            emit(json, &key_json(&key), || key_line(&key));
        }
        KeyCommand::Activate(target) => {
            lifecycle(services, &target, KeyEvent::Activate, json).await?;
        }
        KeyCommand::Deactivate(target) => {
            lifecycle(services, &target, KeyEvent::Deactivate, json).await?;
        }
        KeyCommand::Delete(target) => lifecycle(services, &target, KeyEvent::Delete, json).await?,
    }
    Ok(())
}

async fn lifecycle(
    services: &Services,
    target: &KeyTarget,
    event: KeyEvent,
    json: bool,
) -> anyhow::Result<()> {
    let (platform, id) = target_ids(target)?;
    match services
        .keys
        .apply(
            &holdfast_domain::audit::Actor::operator(),
            &platform,
            &id,
            event,
        )
        .await
        .map_err(explain)?
    {
        Some(key) => emit(json, &key_json(&key), || key_line(&key)),
        None => emit(json, &json!({ "id": id, "deleted": true }), || {
            format!("{id} deleted")
        }),
    }
    Ok(())
}

fn target_ids(target: &KeyTarget) -> anyhow::Result<(holdfast_domain::ids::PlatformId, KeyId)> {
    let platform = platform_id(&target.platform.platform)?;
    let id = KeyId::parse("key", &target.key_id).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((platform, id))
}
