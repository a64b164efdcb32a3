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

mod bins;
mod sandbox;

use std::time::Duration;

use async_trait::async_trait;
use holdfast_domain::payment::routing::{ProcessorConnection, ProcessorKind};
use holdfast_domain::ports::{Processor, ProcessorError, ProcessorReply, ProcessorRequest};

pub use bins::{BinTable, BinTableError};
pub use sandbox::{SANDBOX_CARDS, Sandbox, SandboxCard};

/// Every processor Holdfast can talk to, behind one timeout.
#[derive(Debug, Clone)]
pub struct Processors {
    sandbox: Sandbox,
    timeout: Duration,
}

impl Processors {
    /// `timeout` bounds every processor call (`HOLDFAST_PROCESSOR_TIMEOUT_MS`).
    pub fn new(timeout: Duration) -> Self {
        Self {
            sandbox: Sandbox,
            timeout,
        }
    }
}

#[async_trait]
impl Processor for Processors {
    #[tracing::instrument(skip_all, fields(connection = %connection.id, reference = %request.reference))]
    async fn call(
        &self,
        connection: &ProcessorConnection,
        request: &ProcessorRequest,
    ) -> Result<ProcessorReply, ProcessorError> {
        let call = match connection.kind {
            ProcessorKind::Sandbox => self.sandbox.call(request),
        };
        tokio::time::timeout(self.timeout, call)
            .await
            .unwrap_or_else(|_| {
                tracing::warn!(timeout_ms = self.timeout.as_millis(), "processor timed out");
                Err(ProcessorError::Timeout)
            })
    }
}
