use holdfast_domain::ids::UserId;
use holdfast_domain::user::Email;
use serde_json::json;

use super::{explain, platform_id};
use crate::cli::UserCommand;
use crate::output::{emit, user_json};
use crate::state::AppState;

pub async fn run(state: &AppState, cmd: UserCommand, json: bool) -> anyhow::Result<()> {
    match cmd {
        UserCommand::Create { platform, email } => {
            let platform = platform_id(&platform.platform)?;
            let email =
                Email::parse(&email).map_err(|e| anyhow::anyhow!("--email: {}", e.message))?;
            let user = state
                .users
                .create(&platform, email)
                .await
                .map_err(explain)?;
            emit(json, &user_json(&user), || {
                format!("{}  {}", user.id, user.email)
            });
        }
        UserCommand::List { platform } => {
            let platform = platform_id(&platform.platform)?;
            let users = state.users.list(&platform).await.map_err(explain)?;
            let value = json!({ "data": users.iter().map(user_json).collect::<Vec<_>>() });
            emit(json, &value, || {
                users
                    .iter()
                    .map(|u| format!("{}  {}", u.id, u.email))
                    .collect::<Vec<_>>()
                    .join("\n")
            });
        }
        UserCommand::Delete { platform, user_id } => {
            let platform = platform_id(&platform.platform)?;
            let id = UserId::parse("user", &user_id).map_err(|e| anyhow::anyhow!("{e}"))?;
            state.users.delete(&platform, &id).await.map_err(explain)?;
            emit(json, &json!({ "id": id, "deleted": true }), || {
                format!("{id} deleted")
            });
        }
    }
    Ok(())
}
