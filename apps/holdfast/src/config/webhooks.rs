//! Webhook delivery and email settings, read by `serve` and `worker`.
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `HOLDFAST_WORKERS` | `1` | delivery worker loops `serve` runs itself; `0`: none (run `holdfast worker`) |
//! | `HOLDFAST_WEBHOOK_TIMEOUT_MS` | `5000` | timeout of each webhook request (spec 6.2) |
//! | `HOLDFAST_WEBHOOK_BACKOFF_BASE_MS` | `1000` | the first retry's backoff; doubles after it, with jitter |
//! | `HOLDFAST_WEBHOOK_ALLOW_NETWORKS` | none | CIDRs the SSRF guard lets through (`127.0.0.0/8,10.0.0.0/8`) |
//! | `HOLDFAST_WEBHOOK_CONCURRENCY` | `128` | attempts in flight per worker |
//! | `HOLDFAST_WEBHOOK_SUBSCRIPTION_IN_FLIGHT` | `16` | attempts in flight per subscription, across all workers |
//! | `HOLDFAST_WEBHOOK_PLATFORM_IN_FLIGHT` | `64` | attempts in flight per platform, across all workers; below the concurrency |
//! | `HOLDFAST_WEBHOOK_MAX_SUBSCRIPTIONS` | `16` | subscriptions per platform and mode |
//! | `HOLDFAST_WEBHOOK_SECRET_OVERLAP_S` | `86400` | how long a rotated-out signing secret keeps signing beside the new one |
//! | `HOLDFAST_WORKER_POLL_MS` | `50` | how often a worker looks for due notifications |
//! | `HOLDFAST_WORKER_IDLE_POLL_MS` | `1000` | how often a worker looks while nothing is in flight nor pending, on PostgreSQL, where it hears of new notifications as they are written |
//! | `HOLDFAST_SERVICE_NAME` | `Holdfast` | the name in the disable email's subject |
//! | `HOLDFAST_SMTP_URL` | none | `smtp://host:port` (or `smtps://`); without it, emails are files |
//! | `HOLDFAST_MAIL_DIR` | `./data/mail` | where emails are written when no SMTP server is set |
//! | `HOLDFAST_EMAIL_FROM` | `Holdfast <noreply@holdfast.invalid>` | the sender of our emails |

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use holdfast_worker::{DeliveryLoad, HandOffs};

#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// Delivery worker loops run inside `serve`; 0 runs none.
    #[arg(long, env = "HOLDFAST_WORKERS", default_value_t = 1, global = true)]
    pub workers: u32,

    /// Timeout of each webhook request, in milliseconds.
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_TIMEOUT_MS",
        default_value_t = 5_000,
        global = true
    )]
    pub webhook_timeout_ms: u64,

    /// The first retry's backoff in milliseconds; it doubles for each retry after it.
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_BACKOFF_BASE_MS",
        default_value_t = 1_000,
        global = true
    )]
    pub webhook_backoff_base_ms: u64,

    /// Networks the SSRF guard allows, comma-separated CIDRs.
    #[arg(long, env = "HOLDFAST_WEBHOOK_ALLOW_NETWORKS", global = true)]
    pub webhook_allow_networks: Option<String>,

    /// Delivery attempts in flight per worker.
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_CONCURRENCY",
        default_value_t = 128,
        global = true
    )]
    pub webhook_concurrency: u32,

    /// Delivery attempts in flight per subscription, across all workers.
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_SUBSCRIPTION_IN_FLIGHT",
        default_value_t = 16,
        global = true
    )]
    pub webhook_subscription_in_flight: u32,

    /// Delivery attempts in flight per platform (both modes), across all workers. Below
    /// the delivery concurrency, so another platform always finds a free slot.
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_PLATFORM_IN_FLIGHT",
        default_value_t = 64,
        global = true
    )]
    pub webhook_platform_in_flight: u32,

    /// Webhook subscriptions a platform may have per mode; one more is refused (400).
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_MAX_SUBSCRIPTIONS",
        default_value_t = holdfast_domain::services::DEFAULT_MAX_SUBSCRIPTIONS,
        global = true
    )]
    pub webhook_max_subscriptions: u32,

    /// How long a rotated-out signing secret keeps signing beside the new one, in seconds.
    #[arg(
        long,
        env = "HOLDFAST_WEBHOOK_SECRET_OVERLAP_S",
        default_value_t = 86_400,
        global = true
    )]
    pub webhook_secret_overlap_s: u32,

    /// How often a worker polls for due notifications, in milliseconds.
    #[arg(
        long,
        env = "HOLDFAST_WORKER_POLL_MS",
        default_value_t = 50,
        global = true
    )]
    pub worker_poll_ms: u64,

    /// How often a worker polls, in milliseconds, while it has nothing in flight, no
    /// notification is pending in the database, and it hears of new ones as other processes
    /// write them (PostgreSQL): nothing can then become due but by a write it hears of.
    #[arg(
        long,
        env = "HOLDFAST_WORKER_IDLE_POLL_MS",
        default_value_t = 1000,
        global = true
    )]
    pub worker_idle_poll_ms: u64,

    /// The service's name, as the disable email's subject shows it.
    #[arg(
        long,
        env = "HOLDFAST_SERVICE_NAME",
        default_value = "Holdfast",
        global = true
    )]
    pub service_name: String,

    /// SMTP server for emails (`smtp://host:port`); without it, emails are written to files.
    #[arg(long, env = "HOLDFAST_SMTP_URL", hide_env_values = true, global = true)]
    pub smtp_url: Option<String>,

    /// Where emails are written when no SMTP server is configured.
    #[arg(
        long,
        env = "HOLDFAST_MAIL_DIR",
        default_value = holdfast_email::DEFAULT_MAIL_DIR,
        global = true
    )]
    pub mail_dir: PathBuf,

    /// The sender of Holdfast's emails.
    #[arg(
        long,
        env = "HOLDFAST_EMAIL_FROM",
        default_value = "Holdfast <noreply@holdfast.invalid>",
        global = true
    )]
    pub email_from: String,
}

impl WebhookArgs {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.webhook_timeout_ms.max(1))
    }

    pub fn backoff_base(&self) -> Duration {
        Duration::from_millis(self.webhook_backoff_base_ms)
    }

    pub fn secret_overlap(&self) -> time::Duration {
        time::Duration::seconds(i64::from(self.webhook_secret_overlap_s.max(1)))
    }

    pub fn poll(&self) -> Duration {
        Duration::from_millis(self.worker_poll_ms.max(1))
    }

    /// Never shorter than the poll.
    pub fn idle_poll(&self) -> Duration {
        Duration::from_millis(self.worker_idle_poll_ms).max(self.poll())
    }
}

impl WebhookArgs {
    /// The background workers over `background`'s ports, with a real sender and mailer. Errors
    /// name the variable at fault.
    pub fn workers(
        &self,
        background: crate::state::Background,
        payments: &crate::config::PaymentArgs,
    ) -> anyhow::Result<holdfast_worker::Workers> {
        anyhow::ensure!(
            self.webhook_platform_in_flight.max(1) < self.webhook_concurrency.max(1),
            "HOLDFAST_WEBHOOK_PLATFORM_IN_FLIGHT ({}) must be below HOLDFAST_WEBHOOK_CONCURRENCY \
             ({}): otherwise one platform's slow endpoints can hold every delivery slot",
            self.webhook_platform_in_flight,
            self.webhook_concurrency
        );
        let allow_networks = match &self.webhook_allow_networks {
            Some(raw) => holdfast_outbound_http::parse_networks(raw)
                .map_err(|e| anyhow::anyhow!("HOLDFAST_WEBHOOK_ALLOW_NETWORKS: {e}"))?,
            None => Vec::new(),
        };
        let sender =
            holdfast_outbound_http::HyperSender::new(holdfast_outbound_http::SenderConfig {
                allow_networks,
                ..holdfast_outbound_http::SenderConfig::default()
            })?;
        let mail = match &self.smtp_url {
            Some(url) => holdfast_email::MailerConfig::smtp(url.clone(), self.email_from.clone()),
            None => holdfast_email::MailerConfig::File {
                dir: self.mail_dir.clone(),
                from: self.email_from.clone(),
            },
        };
        let mailer =
            holdfast_email::build(&mail).map_err(|e| anyhow::anyhow!("email settings: {e}"))?;
        Ok(holdfast_worker::Workers {
            wake_ups: background.wake_ups,
            queue: background.notifications,
            idempotency: background.idempotency,
            compliance: background.compliance,
            outbox: background.emails,
            tokens: background.tokens,
            webhooks: background.webhooks,
            sender: std::sync::Arc::new(holdfast_outbound_http::MeteredSender(
                std::sync::Arc::new(sender),
            )),
            mailer,
            clock: background.clock,
            payments: background.payments,
            reconcile_after: payments.reconcile_after()?,
            settlement: background.settlement,
            settle_every: payments.settle_every(),
            payouts: background.payouts,
            loans: background.loans,
            payout_every: payments.payout_every(),
            settings: self.delivery(),
        })
    }

    fn delivery(&self) -> holdfast_worker::DeliverySettings {
        holdfast_worker::DeliverySettings {
            timeout: self.timeout(),
            backoff_base: self.backoff_base(),
            concurrency: self.webhook_concurrency,
            per_subscription: self.webhook_subscription_in_flight,
            per_platform: self.webhook_platform_in_flight,
            poll: self.poll(),
            idle_poll: self.idle_poll(),
            service_name: self.service_name.clone(),
        }
    }

    /// For a `serve` that delivers: the load its loops share, and the hand-offs its database
    /// writes to them (`holdfast_worker::load`). `None` when it runs no loops.
    pub fn hand_off(&self) -> Option<(Arc<DeliveryLoad>, HandOffs)> {
        (self.workers > 0)
            .then(|| DeliveryLoad::handing_off(self.delivery().load_limits(self.workers)))
    }
}
