//! Payments: processors, their timeout and URLs, reconciliation, the BIN table.

use std::time::Duration;

use clap::Args;

use super::{AchArgs, WalletArgs};

/// Payments settings, used by `serve` (and by operator commands, which never call a processor).
#[derive(Debug, Clone, Args)]
pub struct PaymentArgs {
    /// Longest wait for a processor's answer, in milliseconds; then the call counts as timed out
    /// and is reversed.
    #[arg(
        long,
        env = "HOLDFAST_PROCESSOR_TIMEOUT_MS",
        default_value_t = 10_000,
        global = true
    )]
    pub processor_timeout_ms: u64,

    /// How old a `pending` transaction must be, in milliseconds, before the workers reverse it
    /// as left behind by a stopped process. Must exceed the processor timeout.
    #[arg(
        long,
        env = "HOLDFAST_RECONCILE_AFTER_MS",
        default_value_t = 60_000,
        global = true
    )]
    pub reconcile_after_ms: u64,

    /// How often the workers run settlement, in milliseconds (charges settle once their plan's
    /// delay has passed, at the first run after); 0 leaves it to `holdfast ledger settle`.
    #[arg(
        long,
        env = "HOLDFAST_SETTLE_EVERY_MS",
        default_value_t = 3_600_000,
        global = true
    )]
    pub settle_every_ms: u64,

    /// How often the workers hand payouts to their banks, in milliseconds (test mode's sandbox
    /// bank pays or returns them then, and the payout schedules due that day pay out); 0 leaves it
    /// to `holdfast ledger pay-out`.
    #[arg(
        long,
        env = "HOLDFAST_PAYOUT_EVERY_MS",
        default_value_t = 60_000,
        global = true
    )]
    pub payout_every_ms: u64,

    /// A CSV BIN table (`bin,brand,funding,issuer,country` with a header line) replacing the
    /// shipped one.
    #[arg(long, env = "HOLDFAST_BIN_TABLE", global = true)]
    pub bin_table: Option<std::path::PathBuf>,

    /// Lets an Adyen connection's Checkout URL be a loopback address over plain HTTP: a test's
    /// stand-in Adyen. Never on a server that takes real payments.
    #[arg(
        long,
        env = "HOLDFAST_ADYEN_ALLOW_LOOPBACK",
        default_value_t = false,
        global = true
    )]
    pub adyen_allow_loopback: bool,

    #[command(flatten)]
    pub wallets: WalletArgs,

    #[command(flatten)]
    pub ach: AchArgs,
}

impl PaymentArgs {
    pub fn processor_timeout(&self) -> Duration {
        Duration::from_millis(self.processor_timeout_ms.max(1))
    }

    /// How often the workers settle; `None` when they do not.
    pub fn settle_every(&self) -> Option<Duration> {
        (self.settle_every_ms > 0).then(|| Duration::from_millis(self.settle_every_ms))
    }

    /// How often the workers run the payout rails; `None` when they do not.
    pub fn payout_every(&self) -> Option<Duration> {
        (self.payout_every_ms > 0).then(|| Duration::from_millis(self.payout_every_ms))
    }

    /// The age past which a pending transaction is reconciled; refused unless it exceeds the
    /// processor timeout, or a live request could be reversed under its own feet.
    pub fn reconcile_after(&self) -> anyhow::Result<Duration> {
        self.reconcile_after_beyond(Duration::ZERO)
    }

    /// The reconcile age, refused unless it exceeds the processor timeout plus
    /// `completion_wait` (how long a request's completion may then wait for the database).
    pub fn reconcile_after_beyond(&self, completion_wait: Duration) -> anyhow::Result<Duration> {
        let after = Duration::from_millis(self.reconcile_after_ms);
        let needed = self.processor_timeout().saturating_add(completion_wait);
        anyhow::ensure!(
            after > needed,
            "HOLDFAST_RECONCILE_AFTER_MS ({} ms) must exceed HOLDFAST_PROCESSOR_TIMEOUT_MS plus \
             HOLDFAST_DB_COMPLETION_WAIT_MS ({} ms)",
            self.reconcile_after_ms,
            needed.as_millis()
        );
        Ok(after)
    }

    /// Which processor URLs connections may name besides the processors' own.
    pub fn processor_urls(&self) -> holdfast_domain::payment::adyen::UrlPolicy {
        holdfast_domain::payment::adyen::UrlPolicy {
            allow_loopback: self.adyen_allow_loopback,
        }
    }

    /// The BIN table to use: the configured file, or the shipped one.
    pub fn bins(&self) -> anyhow::Result<holdfast_processors::BinTable> {
        match &self.bin_table {
            None => Ok(holdfast_processors::BinTable::shipped()),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| anyhow::anyhow!("HOLDFAST_BIN_TABLE {}: {e}", path.display()))?;
                holdfast_processors::BinTable::from_csv(&text)
                    .map_err(|e| anyhow::anyhow!("HOLDFAST_BIN_TABLE {}: {e}", path.display()))
            }
        }
    }
}

impl Default for PaymentArgs {
    fn default() -> Self {
        Self {
            processor_timeout_ms: 10_000,
            reconcile_after_ms: 60_000,
            settle_every_ms: 3_600_000,
            payout_every_ms: 60_000,
            bin_table: None,
            adyen_allow_loopback: false,
            wallets: WalletArgs::default(),
            ach: AchArgs::default(),
        }
    }
}
