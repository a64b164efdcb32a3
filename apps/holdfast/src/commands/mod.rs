//! What each command does.

mod boarding;
mod keys;
mod platforms;
mod serve;
mod users;
mod webhooks;
mod worker;

use anyhow::Context;
use holdfast_domain::ids::PlatformId;
use holdfast_domain::services::ServiceError;
use holdfast_persistence::Database;

use crate::cli::{Cli, Command};
use crate::config::{DatabaseArgs, VaultArgs};
use crate::state::AppState;

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let json = cli.json;
    let public_url = cli.public_url();
    match cli.command {
        Command::Serve(args) => {
            serve::run(
                &cli.database,
                &cli.payments,
                &cli.vault,
                &cli.webhooks,
                &args,
                cli.public_url.as_deref(),
            )
            .await
        }
        Command::Worker => {
            worker::run(&cli.database, &cli.payments, &cli.vault, &cli.webhooks).await
        }
        Command::Migrate => {
            let applied = Database::migrate(&cli.database.url).await?;
            tracing::info!(database = cli.database.url.redacted(), applied = ?applied, "migrated");
            crate::output::emit(json, &serde_json::json!({ "applied": applied }), || {
                format!("{} migration(s) applied", applied.len())
            });
            Ok(())
        }
        Command::Platforms(cmd) => {
            let state = open(&cli.database, &cli.vault, &public_url).await?;
            let email = cli.webhooks.smtp_url.is_some();
            platforms::run(&state, cmd, email, json).await
        }
        Command::Keys(cmd) => {
            keys::run(
                &open(&cli.database, &cli.vault, &public_url).await?,
                cmd,
                json,
            )
            .await
        }
        Command::Users(cmd) => {
            let state = open(&cli.database, &cli.vault, &public_url).await?;
            let email = cli.webhooks.smtp_url.is_some();
            users::run(&state, cmd, email, json).await
        }
        Command::Webhooks(cmd) => {
            let state = open(&cli.database, &cli.vault, &public_url).await?;
            webhooks::run_webhooks(&state, cmd, json).await
        }
        Command::Compliance(crate::cli::ComplianceCommand::Maintain { as_of }) => {
            let state = open(&cli.database, &cli.vault, &public_url).await?;
            let as_of = as_of
                .map(|raw| {
                    time::OffsetDateTime::parse(
                        &raw,
                        &time::format_description::well_known::Rfc3339,
                    )
                })
                .transpose()
                .map_err(|e| anyhow::anyhow!("--as-of: must be an RFC 3339 time ({e})"))?;
            let (overdue, renewed) = state.compliance.maintain(as_of).await.map_err(explain)?;
            crate::output::emit(
                json,
                &serde_json::json!({ "overdue": overdue, "renewed": renewed }),
                || {
                    format!(
                        "{overdue} form(s) now overdue, {renewed} form(s) issued (yearly, or a first)"
                    )
                },
            );
            Ok(())
        }
        Command::Boarding(cmd) => {
            let state = open(&cli.database, &cli.vault, &public_url).await?;
            boarding::run(&state, cmd, json).await
        }
        Command::Deliveries(cmd) => {
            let state = open(&cli.database, &cli.vault, &public_url).await?;
            webhooks::run_deliveries(&state, cmd, json).await
        }
    }
}

/// Opens the database for an operator command, applying pending migrations first so the
/// commands work on a fresh database, and safely beside a running `serve`.
/// The emails a command queues (invitations, reset links) are sealed with the vault's key, as
/// `serve` and `worker` seal and open them.
async fn open(
    database: &DatabaseArgs,
    vault: &VaultArgs,
    public_url: &str,
) -> anyhow::Result<AppState> {
    Database::migrate(&database.url)
        .await
        .with_context(|| format!("migrating {}", database.url.redacted()))?;
    let db = Database::open(&database.url, database.pool())?.sealing_emails(vault.sealer()?);
    Ok(AppState::new(db).with_public_url(public_url))
}

fn platform_id(raw: &str) -> anyhow::Result<PlatformId> {
    PlatformId::parse("platform", raw).map_err(|e| anyhow::anyhow!("--{e}"))
}

/// Service errors as an operator reads them.
fn explain(err: ServiceError) -> anyhow::Error {
    match err {
        ServiceError::Invalid(invalid) => anyhow::anyhow!("--{invalid}"),
        other => anyhow::Error::new(other),
    }
}

/// The one-time link that sets `user`'s password on the dashboard, valid 24 hours; with
/// `email`, also queued to the user's address.
async fn invite_link(
    state: &AppState,
    platform: &PlatformId,
    user: &holdfast_domain::ids::UserId,
    email: bool,
) -> anyhow::Result<String> {
    state
        .dashboard
        .link(
            &holdfast_domain::audit::Actor::operator(),
            platform,
            user,
            holdfast_domain::dashboard::LinkPurpose::Invite,
            email,
        )
        .await
        .map_err(explain)
}
