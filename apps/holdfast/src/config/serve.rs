//! `serve`'s own settings: the address, the HTTP workers, the rate limits and proxies.

use std::net::SocketAddr;

use clap::Args;

use holdfast_web::client_address::TrustedProxies;

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on; port 0 lets the system pick (the chosen address is logged).
    #[arg(long, env = "HOLDFAST_BIND", default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,

    /// On an empty database, create a demo platform and print its two default keys once.
    #[arg(long, env = "HOLDFAST_BOOTSTRAP_DEMO", default_value_t = true, action = clap::ArgAction::Set)]
    pub bootstrap_demo: bool,

    /// HTTP worker threads (default: one per core).
    #[arg(long, env = "HOLDFAST_HTTP_WORKERS")]
    pub http_workers: Option<usize>,

    /// Requests per second per private key (token bucket, per replica); 0 turns it off.
    #[arg(long, env = "HOLDFAST_RATE_LIMIT_PRIVATE_PER_S", default_value_t = 100)]
    pub rate_limit_private_per_s: u32,

    /// Requests per second per public key and client address (token bucket, per replica); 0
    /// turns it off.
    #[arg(long, env = "HOLDFAST_RATE_LIMIT_PUBLIC_PER_S", default_value_t = 20)]
    pub rate_limit_public_per_s: u32,

    /// Failed authentications per minute per client address before it is refused with 429
    /// (key guessing); 0 turns it off.
    #[arg(
        long,
        env = "HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN",
        default_value_t = 60
    )]
    pub rate_limit_failed_auth_per_min: u32,

    /// Reverse proxies in front of `serve` (addresses and networks, comma-separated): from
    /// them, the client's address is read from `X-Forwarded-For`. Empty: the TCP peer's.
    #[arg(long, env = "HOLDFAST_TRUSTED_PROXIES", default_value = "")]
    pub trusted_proxies: TrustedProxies,

    /// On SIGTERM or SIGINT, how long `/readyz` answers 503 while requests are still served,
    /// before the server stops accepting and drains: long enough for a load balancer's
    /// readiness checks to take this replica out (say two of its intervals). 0: stop at once.
    #[arg(long, env = "HOLDFAST_SHUTDOWN_GRACE_MS", default_value_t = 0)]
    pub shutdown_grace_ms: u64,
}

impl ServeArgs {
    /// The HTTP worker threads `serve` runs: as set, or one per core.
    pub fn http_workers(&self) -> usize {
        self.http_workers
            .unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(2, std::num::NonZero::get)
            })
            .max(1)
    }

    /// How long a stopping server stays up, not ready, before it drains.
    pub fn shutdown_grace(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.shutdown_grace_ms)
    }

    pub fn rate_limits(&self) -> holdfast_web::rate_limit::RateSettings {
        holdfast_web::rate_limit::RateSettings {
            private_per_s: std::num::NonZeroU32::new(self.rate_limit_private_per_s),
            public_per_s: std::num::NonZeroU32::new(self.rate_limit_public_per_s),
            failed_auth_per_min: std::num::NonZeroU32::new(self.rate_limit_failed_auth_per_min),
        }
    }
}
