#![doc = include_str!("../README.md")]
// No input may stop the server (issue 37): what could panic is refused outside tests, and each
// proven-safe case says why in its `#[expect]`.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

mod args;
mod boarding;
mod keys;
mod ledger;
mod loans;
pub mod output;
mod platforms;
mod users;
mod webhooks;

use clap::Subcommand;
use holdfast_domain::ids::PlatformId;
use holdfast_domain::services::ServiceError;
use holdfast_web::Services;

pub use args::*;

/// The operator's commands, each over a platform's data.
#[derive(Debug, Subcommand)]
pub enum OperatorCommand {
    /// Platforms: the tenants that own users, keys and merchants.
    #[command(subcommand)]
    Platforms(PlatformCommand),
    /// API keys (the dashboard's API Keys page, spec 4.6).
    #[command(subcommand)]
    Keys(KeyCommand),
    /// Users of a platform.
    #[command(subcommand)]
    Users(UserCommand),
    /// Webhook subscriptions (the dashboard's Settings, then Webhooks; spec 4.6).
    #[command(subcommand)]
    Webhooks(WebhookCommand),
    /// Webhook delivery history and resend (spec 2.4, 6.4).
    #[command(subcommand)]
    Deliveries(DeliveryCommand),
    /// Underwriting of submitted boarding forms (live mode; the sandbox decides test forms).
    #[command(subcommand)]
    Boarding(BoardingCommand),
    /// Merchants' PCI compliance forms.
    #[command(subcommand)]
    Compliance(ComplianceCommand),
    /// The double-entry ledger under every payment (docs/money.md).
    #[command(subcommand)]
    Ledger(LedgerCommand),
    /// Merchant loans (docs/loans.md).
    #[command(subcommand)]
    Loans(LoanCommand),
}

/// How a command reports, and whether emails go out.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Print machine-readable JSON instead of text.
    pub json: bool,
    /// An SMTP server is configured: invitations and links are also emailed.
    pub email: bool,
}

/// Runs `command` over `services`.
pub async fn run(
    services: &Services,
    command: OperatorCommand,
    settings: Settings,
) -> anyhow::Result<()> {
    let Settings { json, email } = settings;
    match command {
        OperatorCommand::Platforms(cmd) => platforms::run(services, cmd, email, json).await,
        OperatorCommand::Keys(cmd) => keys::run(services, cmd, json).await,
        OperatorCommand::Users(cmd) => users::run(services, cmd, email, json).await,
        OperatorCommand::Webhooks(cmd) => webhooks::run_webhooks(services, cmd, json).await,
        OperatorCommand::Deliveries(cmd) => webhooks::run_deliveries(services, cmd, json).await,
        OperatorCommand::Boarding(cmd) => boarding::run(services, cmd, json).await,
        OperatorCommand::Ledger(cmd) => ledger::run(services, cmd, json).await,
        OperatorCommand::Loans(cmd) => loans::run(services, cmd, json).await,
        OperatorCommand::Compliance(ComplianceCommand::Maintain { as_of }) => {
            compliance_maintain(services, as_of, json).await
        }
    }
}

/// Marks forms past due overdue and issues each merchant's yearly form, as of `as_of`.
async fn compliance_maintain(
    services: &Services,
    as_of: Option<String>,
    json: bool,
) -> anyhow::Result<()> {
    let as_of = as_of
        .map(|raw| {
            time::OffsetDateTime::parse(&raw, &time::format_description::well_known::Rfc3339)
        })
        .transpose()
        .map_err(|e| anyhow::anyhow!("--as-of: must be an RFC 3339 time ({e})"))?;
    let (overdue, renewed) = services.compliance.maintain(as_of).await.map_err(explain)?;
    output::emit(
        json,
        &serde_json::json!({ "overdue": overdue, "renewed": renewed }),
        || format!("{overdue} form(s) now overdue, {renewed} form(s) issued (yearly, or a first)"),
    );
    Ok(())
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
pub async fn invite_link(
    services: &Services,
    platform: &PlatformId,
    user: &holdfast_domain::ids::UserId,
    email: bool,
) -> anyhow::Result<String> {
    services
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
