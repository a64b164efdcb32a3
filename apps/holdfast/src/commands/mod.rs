//! What each command does.

mod serve;
mod worker;

use anyhow::Context;
use holdfast_persistence::Database;

use crate::cli::{Cli, Command};
use crate::config::{DatabaseArgs, PaymentArgs, VaultArgs};
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
                &cli.metrics,
                cli.public_url.as_deref(),
            )
            .await
        }
        Command::Worker => {
            worker::run(
                &cli.database,
                &cli.payments,
                &cli.vault,
                &cli.webhooks,
                &cli.metrics,
            )
            .await
        }
        Command::Migrate => {
            let applied = Database::migrate(&cli.database.url).await?;
            tracing::info!(database = cli.database.url.redacted(), applied = ?applied, "migrated");
            holdfast_cli::output::emit(json, &serde_json::json!({ "applied": applied }), || {
                format!("{} migration(s) applied", applied.len())
            });
            Ok(())
        }
        Command::Operator(command) => {
            let state = open(&cli.database, &cli.vault, &cli.payments, &public_url).await?;
            let settings = holdfast_cli::Settings {
                json,
                email: cli.webhooks.smtp_url.is_some(),
            };
            holdfast_cli::run(&state.services, command, settings).await
        }
    }
}

/// Opens the database for an operator command, applying pending migrations first so the
/// commands work on a fresh database, and safely beside a running `serve`.
/// The commands open what `serve` and `worker` sealed with the same vault keys: the emails
/// they queue (invitations, reset links), and the bank accounts `ledger pay-out` pays to.
async fn open(
    database: &DatabaseArgs,
    vault: &VaultArgs,
    payments: &PaymentArgs,
    public_url: &str,
) -> anyhow::Result<AppState> {
    Database::migrate(&database.url)
        .await
        .with_context(|| format!("migrating {}", database.url.redacted()))?;
    let vault = std::sync::Arc::new(vault.vault()?);
    let db = Database::open(&database.url, database.pool())?.sealing_emails(vault.clone());
    Ok(AppState::with_payments(
        db,
        payments.bins()?,
        vault,
        holdfast_wallets::Wallets::default(),
        payments,
        public_url,
    )?
    .with_public_url(public_url))
}
