//! `holdfast worker`: the background workers without the HTTP API.

use anyhow::Context;
use holdfast_persistence::Database;

use crate::config::WebhookArgs;
use crate::config::{DatabaseArgs, MetricsArgs, PaymentArgs, VaultArgs};
use crate::state::{AppState, Background};

pub async fn run(
    database: &DatabaseArgs,
    payments: &PaymentArgs,
    vault: &VaultArgs,
    webhooks: &WebhookArgs,
    metrics: &MetricsArgs,
) -> anyhow::Result<()> {
    let shutdown = crate::system::ShutdownSignal::listen()?;
    database.check_against(payments)?;
    Database::migrate(&database.url)
        .await
        .with_context(|| format!("migrating {}", database.url.redacted()))?;
    // Each delivery loop drives connections of its own, a share of the pool's size
    // (`holdfast_persistence::local_pools`).
    let loops = webhooks.workers.max(1);
    // The mail loop opens the bodies other processes sealed: the same vault keys.
    let vault = std::sync::Arc::new(vault.vault()?);
    let db = Database::open(&database.url, database.pool().shared_among(loops as usize))?
        .sealing_emails(vault.clone());
    db.ping().await.context("database unreachable")?;
    // Reconciliation reverses at the processor: Adyen's API keys open with the same vault.
    let state = AppState::with_payments(
        db.clone(),
        payments.bins()?,
        vault,
        holdfast_wallets::Wallets::default(),
        payments,
        holdfast_domain::services::DEFAULT_PUBLIC_URL,
    )?;
    let scraped = metrics
        .metrics_bind
        .map(|address| crate::metrics::serve(address, db.clone()))
        .transpose()?
        .map(|(handle, server)| (handle, tokio::spawn(server)));
    let mut workers = webhooks
        .workers(Background::new(&db, &state), payments)?
        .spawn(loops, None);
    // A loop that fails stops the process, non-zero, for its supervisor to start it again.
    let failed = tokio::select! {
        () = shutdown.received() => None,
        fault = workers.fault() => Some(fault),
    };
    if let Some(fault) = &failed {
        tracing::error!(error = %fault, "stopping workers: one failed");
    } else {
        tracing::info!("stopping workers");
    }
    workers.shutdown().await;
    if let Some((handle, server)) = scraped {
        handle.stop(true).await;
        let _ = server.await;
    }
    failed.map_or(Ok(()), Err)
}
