//! The webhook sender, counted: each attempt by how it ended goes to the process's metrics
//! (`holdfast_telemetry::metrics`; docs/operations.md lists the series).

use std::sync::Arc;

use async_trait::async_trait;
use holdfast_domain::ports::{PostResult, SendFailure, WebhookPost, WebhookSender};
use holdfast_telemetry::metrics::metrics;

/// A webhook sender that counts each attempt by how it ended.
pub struct MeteredSender(pub Arc<dyn WebhookSender>);

impl std::fmt::Debug for MeteredSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MeteredSender")
    }
}

#[async_trait]
impl WebhookSender for MeteredSender {
    async fn post(&self, post: &WebhookPost) -> PostResult {
        let result = self.0.post(post).await;
        metrics().count_attempt(match &result {
            PostResult::Answered { status, .. } => match status {
                200..=299 => "2xx",
                300..=399 => "3xx",
                400..=499 => "4xx",
                _ => "5xx",
            },
            PostResult::Failed(SendFailure::Refused(_)) => "refused",
            PostResult::Failed(SendFailure::Dns(_)) => "dns",
            PostResult::Failed(SendFailure::Connect(_)) => "connect",
            PostResult::Failed(SendFailure::Timeout) => "timeout",
            PostResult::Failed(SendFailure::Invalid(_)) => "invalid",
        });
        result
    }
}
