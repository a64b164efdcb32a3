use std::io::BufRead as _;

use holdfast_domain::dashboard::Password;
use holdfast_domain::ids::UserId;
use holdfast_domain::user::Email;
use serde_json::json;

use super::{explain, invite_link, platform_id};
use crate::args::UserCommand;
use crate::output::{emit, user_json};
use holdfast_web::Services;

pub async fn run(
    services: &Services,
    cmd: UserCommand,
    email: bool,
    json: bool,
) -> anyhow::Result<()> {
    match cmd {
        UserCommand::Create {
            platform,
            email,
            role,
        } => {
            let platform = platform_id(&platform.platform)?;
            let email =
                Email::parse(&email).map_err(|e| anyhow::anyhow!("--email: {}", e.message))?;
            let user = services
                .users
                .create(
                    &holdfast_domain::audit::Actor::operator(),
                    &platform,
                    email,
                    role.into(),
                )
                .await
                .map_err(explain)?;
            emit(json, &user_json(&user), || {
                format!("{}  {}  {}", user.id, user.email, user.role)
            });
        }
        UserCommand::List { platform } => {
            let platform = platform_id(&platform.platform)?;
            let users = services.users.list(&platform).await.map_err(explain)?;
            let value = json!({ "data": users.iter().map(user_json).collect::<Vec<_>>() });
            emit(json, &value, || {
                users
                    .iter()
                    .map(|u| format!("{}  {}  {}", u.id, u.email, u.role))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        UserCommand::Delete { platform, user_id } => {
            let platform = platform_id(&platform.platform)?;
            let id = user_id_arg(&user_id)?;
            services
                .users
                .delete(&holdfast_domain::audit::Actor::operator(), &platform, &id)
                .await
                .map_err(explain)?;
            emit(json, &json!({ "id": id, "deleted": true }), || {
                format!("{id} deleted")
            });
        }
        UserCommand::Invite { platform, user_id } => {
            let platform = platform_id(&platform.platform)?;
            let id = user_id_arg(&user_id)?;
            let link = invite_link(services, &platform, &id, email).await?;
            emit(
                json,
                &json!({ "id": id, "link": link, "emailed": email }),
                || {
                    let emailed = if email {
                        "; also emailed to the user"
                    } else {
                        ""
                    };
                    format!("{link}\n(valid 24 hours, once{emailed})")
                },
            );
        }
        UserCommand::SetPassword {
            platform, user_id, ..
        } => {
            let platform = platform_id(&platform.platform)?;
            let id = user_id_arg(&user_id)?;
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            let typed = line.strip_suffix('\n').unwrap_or(&line);
            let typed = typed.strip_suffix('\r').unwrap_or(typed);
            let password =
                Password::parse(typed).map_err(|e| anyhow::anyhow!("password: {}", e.message))?;
            services
                .dashboard
                .set_password(
                    &holdfast_domain::audit::Actor::operator(),
                    &platform,
                    &id,
                    &password,
                )
                .await
                .map_err(explain)?;
            emit(json, &json!({ "id": id, "passwordSet": true }), || {
                format!("{id} password set; their sessions ended")
            });
        }
    }
    Ok(())
}

fn user_id_arg(raw: &str) -> anyhow::Result<UserId> {
    UserId::parse("user", raw).map_err(|e| anyhow::anyhow!("{e}"))
}
