//! The command line: `holdfast serve | migrate | platforms … | keys … | users …`.

use clap::{Parser, Subcommand};
use holdfast_cli::OperatorCommand;

use crate::config::WebhookArgs;
use crate::config::{DatabaseArgs, LogArgs, MetricsArgs, PaymentArgs, ServeArgs, VaultArgs};

#[derive(Debug, Parser)]
#[command(name = "holdfast", version, about = "Holdfast payment platform API", long_about = None)]
pub struct Cli {
    /// Where people reach this Holdfast: the start of every link it gives (dashboard, resets,
    /// invitations, boarding forms). `serve` defaults it to the address it listens on; the
    /// other commands to `HOLDFAST_BIND`'s, then `http://127.0.0.1:8080`.
    #[arg(long, env = "HOLDFAST_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,

    /// Print machine-readable JSON instead of text (operator commands).
    #[arg(long, global = true)]
    pub json: bool,

    #[command(flatten, next_help_heading = "Database")]
    pub database: DatabaseArgs,

    #[command(flatten, next_help_heading = "Logs")]
    pub log: LogArgs,

    #[command(flatten, next_help_heading = "Metrics")]
    pub metrics: MetricsArgs,

    #[command(flatten, next_help_heading = "Payments and wallets")]
    pub payments: PaymentArgs,

    #[command(flatten, next_help_heading = "Vault")]
    pub vault: VaultArgs,

    #[command(flatten, next_help_heading = "Webhooks, workers and email")]
    pub webhooks: WebhookArgs,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// The start of the links an operator command prints: `HOLDFAST_PUBLIC_URL`, else the
    /// address `HOLDFAST_BIND` names (where `serve` is then listening), else the default.
    pub fn public_url(&self) -> String {
        if let Some(url) = &self.public_url {
            return url.clone();
        }
        std::env::var("HOLDFAST_BIND")
            .ok()
            .and_then(|raw| raw.parse::<std::net::SocketAddr>().ok())
            .filter(|bound| bound.port() != 0 && !bound.ip().is_unspecified())
            .map_or_else(
                || holdfast_domain::services::DEFAULT_PUBLIC_URL.to_owned(),
                |bound| format!("http://{bound}"),
            )
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP API (applies pending migrations first).
    Serve(ServeArgs),
    /// Run the background workers alone: webhook delivery, emails, history retention.
    Worker,
    /// Apply pending database migrations and exit.
    Migrate,
    /// The operator's commands over a platform's data (`holdfast_cli`).
    #[command(flatten)]
    Operator(OperatorCommand),
}

#[cfg(test)]
mod tests;
