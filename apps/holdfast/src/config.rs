//! Typed configuration, read once from `HOLDFAST_*` environment variables (or the same-named
//! flags) by clap, and passed down explicitly.
//!
//! | Variable | Default | Meaning |
//! |---|---|---|
//! | `HOLDFAST_DATABASE_URL` | `sqlite://./data/holdfast.db` | `postgres://…` or `sqlite://PATH` |
//! | `HOLDFAST_DB_POOL_SIZE` | `8` | PostgreSQL connections of the shared pool, and as many again shared out among the HTTP workers and delivery loops |
//! | `HOLDFAST_DB_COMPLETION_WAIT_MS` | `20000` | how long a payment's completion waits for the database |
//! | `HOLDFAST_BIND` | `127.0.0.1:8080` | address `serve` listens on (port 0 picks one) |
//! | `HOLDFAST_HTTP_WORKERS` | one per core | HTTP worker threads |
//! | `HOLDFAST_BOOTSTRAP_DEMO` | `true` | on an empty database, `serve` creates a demo platform |
//! | `HOLDFAST_PROCESSOR_TIMEOUT_MS` | `10000` | longest wait for a processor's answer |
//! | `HOLDFAST_RECONCILE_AFTER_MS` | `60000` | age at which workers reverse a transaction left `pending` |
//! | `HOLDFAST_BIN_TABLE` | shipped table | CSV `bin,brand,funding,issuer,country` replacing it |
//! | `HOLDFAST_VAULT_KEY` | key file | base64 of 32 bytes: the AES-256-GCM key sealing card data |
//! | `HOLDFAST_VAULT_KEY_ID` | `k1` | the id stored with what that key seals |
//! | `HOLDFAST_VAULT_PREVIOUS_KEYS` | none | `id:base64,…`: retired keys that still open old data |
//! | `HOLDFAST_VAULT_KEY_FILE` | `./data/vault.key` | used (and created once) when no key is given |
//! | `HOLDFAST_RATE_LIMIT_PRIVATE_PER_S` | `100` | requests per second per private key; `0` is off |
//! | `HOLDFAST_RATE_LIMIT_PUBLIC_PER_S` | `20` | requests per second per public key and client address (its page loads: ten times that, apart); `0` is off |
//! | `HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN` | `60` | failed authentications per minute per address |
//! | `HOLDFAST_TRUSTED_PROXIES` | none | reverse proxies (`127.0.0.1, 10.0.0.0/8`) whose `X-Forwarded-For` names the client |
//! | `HOLDFAST_PUBLIC_URL` | `serve`: the address it listens on; other commands: `HOLDFAST_BIND`'s, else `http://127.0.0.1:8080` | the start of every link Holdfast gives (dashboard, invitations, resets, boarding forms; in `cli.rs`); `https://…` makes the dashboard's cookie always `Secure` |
//! | `HOLDFAST_LOG` | `info` | log filter (`tracing` `EnvFilter` syntax) |
//! | `HOLDFAST_LOG_FORMAT` | `json` | `json` or `pretty` |

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, ValueEnum};
use holdfast_domain::payment::token::SESSION_HOLD;
use holdfast_persistence::{DatabaseUrl, PoolOptions};

use crate::http::client_address::TrustedProxies;

#[derive(Debug, Clone, Args)]
pub struct DatabaseArgs {
    /// Where the data lives: `postgres://…` or `sqlite://PATH`.
    #[arg(
        long = "database-url",
        env = "HOLDFAST_DATABASE_URL",
        default_value = "sqlite://./data/holdfast.db",
        hide_env_values = true,
        global = true,
        value_parser = parse_database_url
    )]
    pub url: DatabaseUrl,

    /// PostgreSQL connections of the shared pool, and as many again shared out among the HTTP
    /// workers and delivery loops, each in a pool of its own of at least two (SQLite always
    /// uses one).
    #[arg(
        long = "db-pool-size",
        env = "HOLDFAST_DB_POOL_SIZE",
        default_value_t = 8,
        global = true
    )]
    pub pool_size: usize,

    /// How long, in ms, the completion of a payment the processor has answered waits for a
    /// database connection (and, on SQLite, another process's write lock) before giving up;
    /// other work waits 5 s. Keep it below the reconcile age minus the processor timeout.
    #[arg(
        long = "db-completion-wait-ms",
        env = "HOLDFAST_DB_COMPLETION_WAIT_MS",
        default_value_t = 20_000,
        global = true
    )]
    pub completion_wait_ms: u64,
}

impl DatabaseArgs {
    pub fn completion_wait(&self) -> Duration {
        Duration::from_millis(self.completion_wait_ms.max(1))
    }

    pub fn pool(&self) -> PoolOptions {
        PoolOptions {
            completion_wait: self.completion_wait(),
            max_size: self.pool_size.max(1),
            pinned_threads: 1,
            wait_timeout: Duration::from_secs(5),
        }
    }

    /// Refuses settings under which the workers could reverse a payment whose completion is
    /// still waiting for the database (the reconcile age must exceed the processor timeout
    /// plus the completion wait), or under which a payment could still complete after its hold
    /// of its client session lapsed, when the checkout may already be paying again: the hold
    /// must outlast the latest moment reconciliation finishes a payment left pending.
    pub fn check_against(&self, payments: &PaymentArgs) -> anyhow::Result<()> {
        let after = payments.reconcile_after_beyond(self.completion_wait())?;
        let reached = after
            .saturating_add(reconcile_every(after))
            .saturating_add(payments.processor_timeout())
            .saturating_add(self.completion_wait());
        let hold = Duration::try_from(SESSION_HOLD)?;
        anyhow::ensure!(
            reached < hold,
            "HOLDFAST_RECONCILE_AFTER_MS ({} ms) with its pass interval, plus \
             HOLDFAST_PROCESSOR_TIMEOUT_MS and HOLDFAST_DB_COMPLETION_WAIT_MS ({} ms in all), must \
             stay below the {} s a payment holds its client session",
            after.as_millis(),
            reached.as_millis(),
            hold.as_secs()
        );
        Ok(())
    }
}

/// How often the reconciler looks for rows older than `after`: often enough that a stale row
/// waits at most half its age again.
pub fn reconcile_every(after: Duration) -> Duration {
    after
        .checked_div(2)
        .unwrap_or(after)
        .clamp(Duration::from_millis(100), Duration::from_secs(30))
}

fn parse_database_url(raw: &str) -> Result<DatabaseUrl, String> {
    DatabaseUrl::parse(raw).map_err(|e| e.to_string())
}

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

    pub fn rate_limits(&self) -> crate::http::rate_limit::RateSettings {
        crate::http::rate_limit::RateSettings {
            private_per_s: std::num::NonZeroU32::new(self.rate_limit_private_per_s),
            public_per_s: std::num::NonZeroU32::new(self.rate_limit_public_per_s),
            failed_auth_per_min: std::num::NonZeroU32::new(self.rate_limit_failed_auth_per_min),
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LogFormat {
    Json,
    Pretty,
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Log filter, for example `info` or `holdfast=debug,info`.
    #[arg(
        long = "log",
        env = "HOLDFAST_LOG",
        default_value = "info",
        global = true
    )]
    pub filter: String,

    #[arg(
        long = "log-format",
        env = "HOLDFAST_LOG_FORMAT",
        value_enum,
        default_value = "json",
        global = true
    )]
    pub format: LogFormat,
}

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
}

/// The wallets' keys (docs/hosted-fields.md, "Wallets"). A wallet with no keys for a mode is
/// refused there as not set up.
#[derive(Clone, Default, Args)]
pub struct WalletArgs {
    /// Google Pay: our gateway private key (P-256), base64 of its PKCS#8 DER. Google encrypts
    /// every token for gateway `holdfast` to its public half.
    #[arg(
        long,
        env = "HOLDFAST_GOOGLE_PAY_PRIVATE_KEY",
        global = true,
        hide_env_values = true
    )]
    pub google_pay_private_key: Option<String>,

    /// Google's `ECv2` root signing keys for test-mode tokens (Google's `TEST` environment),
    /// base64 of each key's DER, comma-separated.
    #[arg(
        long,
        env = "HOLDFAST_GOOGLE_PAY_TEST_ROOT_KEYS",
        global = true,
        value_delimiter = ','
    )]
    pub google_pay_test_root_keys: Vec<String>,

    /// Google's `ECv2` root signing keys for live-mode tokens (`PRODUCTION`), as above.
    #[arg(
        long,
        env = "HOLDFAST_GOOGLE_PAY_LIVE_ROOT_KEYS",
        global = true,
        value_delimiter = ','
    )]
    pub google_pay_live_root_keys: Vec<String>,

    /// Apple Pay: the payment processing certificate's private key (P-256), base64 of its
    /// PKCS#8 DER. Used for both modes.
    #[arg(
        long,
        env = "HOLDFAST_APPLE_PAY_PROCESSING_KEY",
        global = true,
        hide_env_values = true
    )]
    pub apple_pay_processing_key: Option<String>,

    /// Apple Pay: the merchant identifier (`merchant.com.example`) the tokens are for.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_MERCHANT_ID", global = true)]
    pub apple_pay_merchant_id: Option<String>,

    /// Apple Pay: Apple Root CA - G3, base64 of its DER, the root every token's signature
    /// must chain to.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_ROOT_CERT", global = true)]
    pub apple_pay_root_cert: Option<String>,

    /// Apple Pay: the domain association file Apple gave for the domain Holdfast serves pages
    /// on, served at `/.well-known/apple-developer-merchantid-domain-association`.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_DOMAIN_ASSOCIATION", global = true)]
    pub apple_pay_domain_association: Option<std::path::PathBuf>,

    /// Apple Pay: the merchant identity certificate (PEM file, optionally followed by its
    /// chain) presented to Apple's gateway for merchant validation. With its key, merchant
    /// validation asks Apple in both modes; without, test mode gets sandbox sessions.
    #[arg(long, env = "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT", global = true)]
    pub apple_pay_merchant_identity_cert: Option<std::path::PathBuf>,

    /// Apple Pay: the merchant identity certificate's private key (PEM file).
    #[arg(long, env = "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY", global = true)]
    pub apple_pay_merchant_identity_key: Option<std::path::PathBuf>,
}

/// The private key never reaches a log line.
impl std::fmt::Debug for WalletArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WalletArgs")
            .field(
                "google_pay_private_key",
                &self.google_pay_private_key.as_ref().map(|_| "…"),
            )
            .field(
                "google_pay_test_root_keys",
                &self.google_pay_test_root_keys.len(),
            )
            .field(
                "google_pay_live_root_keys",
                &self.google_pay_live_root_keys.len(),
            )
            .field(
                "apple_pay_processing_key",
                &self.apple_pay_processing_key.as_ref().map(|_| "…"),
            )
            .field("apple_pay_merchant_id", &self.apple_pay_merchant_id)
            .field("apple_pay_root_cert", &self.apple_pay_root_cert.is_some())
            .field(
                "apple_pay_domain_association",
                &self.apple_pay_domain_association,
            )
            .field(
                "apple_pay_merchant_identity_cert",
                &self.apple_pay_merchant_identity_cert,
            )
            .field(
                "apple_pay_merchant_identity_key",
                &self.apple_pay_merchant_identity_key,
            )
            .finish()
    }
}

impl WalletArgs {
    /// Each wallet's keys per mode; a key that does not parse stops start-up with its variable.
    pub fn wallets(&self) -> anyhow::Result<holdfast_wallets::Wallets> {
        let google_pay = |roots: &[String], variable: &str| -> anyhow::Result<_> {
            if roots.is_empty() {
                return Ok(None);
            }
            let private = self.google_pay_private_key.as_deref().ok_or_else(|| {
                anyhow::anyhow!("{variable} is set but HOLDFAST_GOOGLE_PAY_PRIVATE_KEY is not")
            })?;
            let roots: Vec<&str> = roots.iter().map(String::as_str).collect();
            holdfast_wallets::google_pay::GooglePayKeys::from_base64(private, &roots)
                .map(Some)
                .map_err(|e| anyhow::anyhow!("HOLDFAST_GOOGLE_PAY_PRIVATE_KEY or {variable}: {e}"))
        };
        Ok(holdfast_wallets::Wallets {
            google_pay_test: google_pay(
                &self.google_pay_test_root_keys,
                "HOLDFAST_GOOGLE_PAY_TEST_ROOT_KEYS",
            )?,
            google_pay_live: google_pay(
                &self.google_pay_live_root_keys,
                "HOLDFAST_GOOGLE_PAY_LIVE_ROOT_KEYS",
            )?,
            apple_pay: self.apple_pay()?,
        })
    }

    /// The domain association file's bytes, read once at start-up.
    pub fn apple_pay_domain_association(&self) -> anyhow::Result<Option<Vec<u8>>> {
        self.apple_pay_domain_association
            .as_ref()
            .map(|path| {
                std::fs::read(path).map_err(|e| {
                    anyhow::anyhow!(
                        "HOLDFAST_APPLE_PAY_DOMAIN_ASSOCIATION {}: {e}",
                        path.display()
                    )
                })
            })
            .transpose()
    }

    /// Apple's gateway for merchant validation: the identity certificate and key together, with
    /// the merchant identifier; none of them for sandbox sessions in test mode only.
    pub fn apple_pay_gateway(
        &self,
    ) -> anyhow::Result<Option<holdfast_outbound_http::AppleGateway>> {
        let (cert, key) = match (
            &self.apple_pay_merchant_identity_cert,
            &self.apple_pay_merchant_identity_key,
        ) {
            (None, None) => return Ok(None),
            (Some(cert), Some(key)) => (cert, key),
            _ => anyhow::bail!(
                "Apple Pay merchant validation needs HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT and \
                 HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY together"
            ),
        };
        let merchant = self.apple_pay_merchant_id.as_deref().ok_or_else(|| {
            anyhow::anyhow!(
                "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT is set but HOLDFAST_APPLE_PAY_MERCHANT_ID is not"
            )
        })?;
        let read = |path: &std::path::Path, variable: &str| {
            std::fs::read(path).map_err(|e| anyhow::anyhow!("{variable} {}: {e}", path.display()))
        };
        let identity = holdfast_outbound_http::MerchantIdentity::from_pem(
            &read(cert, "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_CERT")?,
            &read(key, "HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_KEY")?,
            merchant,
        )
        .map_err(|e| anyhow::anyhow!("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_*: {e}"))?;
        holdfast_outbound_http::AppleGateway::new(
            identity,
            holdfast_outbound_http::AppleGatewayConfig::default(),
        )
        .map(Some)
        .map_err(|e| anyhow::anyhow!("HOLDFAST_APPLE_PAY_MERCHANT_IDENTITY_*: {e}"))
    }

    /// Apple Pay's keys: all three settings, or none.
    fn apple_pay(&self) -> anyhow::Result<Option<holdfast_wallets::apple_pay::ApplePayKeys>> {
        match (
            &self.apple_pay_processing_key,
            &self.apple_pay_merchant_id,
            &self.apple_pay_root_cert,
        ) {
            (None, None, None) => Ok(None),
            (Some(key), Some(merchant), Some(root)) => {
                holdfast_wallets::apple_pay::ApplePayKeys::from_base64(key, merchant, root)
                    .map(Some)
                    .map_err(|e| anyhow::anyhow!("HOLDFAST_APPLE_PAY_*: {e}"))
            }
            _ => anyhow::bail!(
                "Apple Pay needs HOLDFAST_APPLE_PAY_PROCESSING_KEY, HOLDFAST_APPLE_PAY_MERCHANT_ID \
                 and HOLDFAST_APPLE_PAY_ROOT_CERT together"
            ),
        }
    }
}

impl PaymentArgs {
    pub fn processor_timeout(&self) -> Duration {
        Duration::from_millis(self.processor_timeout_ms.max(1))
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
            bin_table: None,
            adyen_allow_loopback: false,
            wallets: WalletArgs::default(),
        }
    }
}

/// The card vault's keys.
#[derive(Clone, Args)]
pub struct VaultArgs {
    /// Base64 of 32 bytes: the key that seals card data (AES-256-GCM).
    #[arg(
        long = "vault-key",
        env = "HOLDFAST_VAULT_KEY",
        hide_env_values = true,
        global = true
    )]
    pub key: Option<String>,

    /// The id stored beside what the key seals, so it can be rotated.
    #[arg(
        long = "vault-key-id",
        env = "HOLDFAST_VAULT_KEY_ID",
        default_value = "k1",
        global = true
    )]
    pub key_id: String,

    /// Retired keys that still open what they sealed: `id:base64,id:base64`.
    #[arg(
        long = "vault-previous-keys",
        env = "HOLDFAST_VAULT_PREVIOUS_KEYS",
        hide_env_values = true,
        global = true
    )]
    pub previous: Option<String>,

    /// Where the key is kept when none is given: created with a random key on first use.
    #[arg(
        long = "vault-key-file",
        env = "HOLDFAST_VAULT_KEY_FILE",
        default_value = "./data/vault.key",
        global = true
    )]
    pub key_file: std::path::PathBuf,
}

impl std::fmt::Debug for VaultArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultArgs")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl VaultArgs {
    /// Builds the vault. Errors name the variable at fault; keys never appear in them.
    /// The vault as the port that seals email bodies at rest.
    pub fn sealer(&self) -> anyhow::Result<std::sync::Arc<dyn holdfast_domain::ports::CardVault>> {
        Ok(std::sync::Arc::new(self.vault()?))
    }

    pub fn vault(&self) -> anyhow::Result<holdfast_vault::AesGcmVault> {
        use holdfast_vault::{AesGcmVault, VaultKey};
        let key = match &self.key {
            Some(key) => key.clone(),
            None => self.key_from_file()?,
        };
        let current = VaultKey::from_base64(&self.key_id, &key)
            .map_err(|e| anyhow::anyhow!("HOLDFAST_VAULT_KEY: {e}"))?;
        let mut previous = Vec::new();
        for pair in self
            .previous
            .iter()
            .flat_map(|p| p.split(','))
            .filter(|p| !p.trim().is_empty())
        {
            let (id, key) = pair.split_once(':').ok_or_else(|| {
                anyhow::anyhow!("HOLDFAST_VAULT_PREVIOUS_KEYS: expected id:base64 pairs")
            })?;
            previous.push(
                VaultKey::from_base64(id.trim(), key)
                    .map_err(|e| anyhow::anyhow!("HOLDFAST_VAULT_PREVIOUS_KEYS: {e}"))?,
            );
        }
        Ok(AesGcmVault::new(current, previous))
    }

    fn key_from_file(&self) -> anyhow::Result<String> {
        let path = &self.key_file;
        if let Ok(key) = std::fs::read_to_string(path) {
            return Ok(key.trim().to_owned());
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let key = holdfast_vault::VaultKey::generate_base64();
        // create_new: two processes starting together cannot both write a key.
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut file| {
                use std::io::Write;
                file.write_all(key.as_bytes())
            });
        match written {
            Ok(()) => {
                restrict_permissions(path);
                tracing::warn!(file = %path.display(), "created a new vault key file; back it up, or set HOLDFAST_VAULT_KEY");
                Ok(key)
            }
            Err(_) => Ok(std::fs::read_to_string(path)?.trim().to_owned()),
        }
    }
}

#[cfg(unix)]
fn restrict_permissions(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict_permissions(_: &std::path::Path) {}
