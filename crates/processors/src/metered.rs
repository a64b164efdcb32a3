//! The processor port, timed: each call's duration and outcome go to the process's metrics
//! (`holdfast_telemetry::metrics`; docs/operations.md lists the series).

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorConnection};
use holdfast_domain::ports::{Processor, ProcessorError, ProcessorReply, ProcessorRequest};
use holdfast_telemetry::metrics::metrics;

/// A processor port that times each call and counts its outcome.
pub struct MeteredProcessor(pub Arc<dyn Processor>);

impl std::fmt::Debug for MeteredProcessor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MeteredProcessor")
    }
}

#[async_trait]
impl Processor for MeteredProcessor {
    async fn call(
        &self,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) -> Result<ProcessorReply, ProcessorError> {
        let started = Instant::now();
        let result = self.0.call(connection, request).await;
        let kind = match connection.account {
            ProcessorAccount::Sandbox => "sandbox",
            ProcessorAccount::Adyen(_) => "adyen",
        };
        let outcome = match &result {
            Ok(reply) if reply.submitted => "submitted",
            Ok(reply) if reply.approved => "approved",
            Ok(_) => "declined",
            Err(ProcessorError::Unavailable(_)) => "unavailable",
            Err(ProcessorError::Timeout) => "timeout",
        };
        metrics().observe_processor_call(kind, outcome, started.elapsed().as_secs_f64());
        result
    }
}
