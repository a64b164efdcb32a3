use std::net::SocketAddr;

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct MetricsArgs {
    /// Where `GET /metrics` (Prometheus's text format) is served, on a listener of its own and
    /// nothing else there: keep it off the public one (say `127.0.0.1:9464`). Off when not set.
    #[arg(long, env = "HOLDFAST_METRICS_BIND")]
    pub metrics_bind: Option<SocketAddr>,
}
