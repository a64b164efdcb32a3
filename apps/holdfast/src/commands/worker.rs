//! `holdfast worker`: the background workers without the HTTP API.

use anyhow::Context;
use holdfast_persistence::Database;

use crate::config::DatabaseArgs;
use crate::state::AppState;
use crate::webhook_config::WebhookArgs;

pub async fn run(database: &DatabaseArgs, webhooks: &WebhookArgs) -> anyhow::Result<()> {
    Database::migrate(&database.url)
        .await
        .with_context(|| format!("migrating {}", database.url.redacted()))?;
    let db = Database::open(&database.url, database.pool())?;
    db.ping().await.context("database unreachable")?;
    let state = AppState::new(db);
    let mut workers = webhooks.workers(&state)?.spawn(webhooks.workers.max(1));
    shutdown_signal().await;
    tracing::info!("stopping workers");
    workers.abort_all();
    while workers.join_next().await.is_some() {}
    Ok(())
}

/// SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::select! {
            _ = ctrl_c => {},
            _ = term.recv() => {},
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}
