use holdfast_domain::platform::PlatformName;
use holdfast_domain::user::Email;
use serde_json::json;

use super::{explain, invite_link};
use crate::args::PlatformCommand;
use crate::output::{created_key_json, created_key_line, emit};
use holdfast_domain::payment::transaction::format_timestamp as rfc3339;
use holdfast_web::Services;

pub async fn run(
    services: &Services,
    cmd: PlatformCommand,
    email_link: bool,
    json: bool,
) -> anyhow::Result<()> {
    match cmd {
        PlatformCommand::Create { name, owner_email } => {
            let name = PlatformName::parse(&name).map_err(|e| explain(e.into()))?;
            let email = Email::parse(&owner_email)
                .map_err(|e| anyhow::anyhow!("--owner-email: {}", e.message))?;
            let created = services
                .platforms
                .create(&holdfast_domain::audit::Actor::operator(), name, email)
                .await
                .map_err(explain)?;
            let owner = &created.owner;
            let link = invite_link(services, &created.platform.id, &owner.id, email_link).await?;
            let value = json!({
                "platform": { "id": created.platform.id, "name": created.platform.name.as_str() },
                "user": { "id": owner.id, "email": owner.email.as_str(), "role": owner.role.as_str() },
                "signIn": { "link": link, "validFor": "24 hours, once", "emailed": email_link },
                "keys": created.keys.iter().map(created_key_json).collect::<Vec<_>>(),
            });
            emit(json, &value, || {
                let keys: Vec<_> = created.keys.iter().map(created_key_line).collect();
                format!(
                    "platform {}  {}\nowner    {}  {}\n{}\nthe owner sets a dashboard password at (24 hours, once):\n{link}",
                    created.platform.id,
                    created.platform.name.as_str(),
                    owner.id,
                    owner.email,
                    keys.join("\n")
                )
            });
            Ok(())
        }
        PlatformCommand::List => {
            let platforms = services.platforms.list().await.map_err(explain)?;
            let data: Vec<_> = platforms
                .iter()
                .map(|p| {
                    json!({
                        "id": p.id,
                        "name": p.name.as_str(),
                        "ownerId": p.owner_id,
                        "createdOn": rfc3339(p.created_on),
                    })
                })
                .collect();
            emit(json, &json!({ "data": data }), || {
                platforms
                    .iter()
                    .map(|p| format!("{}  {}", p.id, p.name.as_str()))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            Ok(())
        }
    }
}
