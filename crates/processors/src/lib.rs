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
mod metered;
mod sandbox;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use holdfast_adyen::AdyenConnector;
use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorConnection};
use holdfast_domain::ports::{Processor, ProcessorError, ProcessorReply, ProcessorRequest};

pub use bins::{BinTable, BinTableError};
pub use metered::MeteredProcessor;
pub use sandbox::{SANDBOX_CARDS, Sandbox, SandboxCard};

/// Every processor Holdfast can talk to, behind one timeout.
#[derive(Debug, Clone)]
pub struct Processors {
    sandbox: Sandbox,
    adyen: Option<Arc<AdyenConnector>>,
    timeout: Duration,
}

impl Processors {
    /// The sandbox alone; `timeout` bounds every processor call
    /// (`HOLDFAST_PROCESSOR_TIMEOUT_MS`).
    pub fn new(timeout: Duration) -> Self {
        Self {
            sandbox: Sandbox,
            adyen: None,
            timeout,
        }
    }

    /// Adyen connections reached through `adyen`; without it they are unavailable.
    #[must_use]
    pub fn with_adyen(self, adyen: AdyenConnector) -> Self {
        Self {
            adyen: Some(Arc::new(adyen)),
            ..self
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
        let call = async {
            match &connection.account {
                ProcessorAccount::Sandbox => self.sandbox.call(request).await,
                ProcessorAccount::Adyen(account) => match &self.adyen {
                    Some(adyen) => adyen.call(connection.id.as_str(), account, request).await,
                    None => Err(ProcessorError::Unavailable(
                        "this process has no Adyen connector".to_owned(),
                    )),
                },
            }
        };
        tokio::time::timeout(self.timeout, call)
            .await
            .unwrap_or_else(|_| {
                tracing::warn!(timeout_ms = self.timeout.as_millis(), "processor timed out");
                Err(ProcessorError::Timeout)
            })
    }
}
