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
//! | `HOLDFAST_METRICS_BIND` | off | address of the `GET /metrics` listener (`serve` and `worker`; docs/operations.md) |
//! | `HOLDFAST_ACH_OUTBOX`, `HOLDFAST_ACH_INBOX` | off | the live rail's directories: NACHA files put in one, return files read from the other (docs/money.md, "The live rail") |
//! | `HOLDFAST_ACH_ODFI`, `HOLDFAST_ACH_ODFI_NAME`, `HOLDFAST_ACH_DESTINATION`, `HOLDFAST_ACH_COMPANY_NAME`, `HOLDFAST_ACH_COMPANY_ID`, `HOLDFAST_ACH_ORIGIN` | none | who the NACHA files are from: needed with the outbox |
//! | `HOLDFAST_LOG` | `info` | log filter (`tracing` `EnvFilter` syntax) |
//! | `HOLDFAST_LOG_FORMAT` | `json` | `json` or `pretty` |
//!
//! Webhook delivery and email settings: `webhooks.rs`.

mod ach;
mod database;
mod log;
mod metrics;
mod payments;
mod serve;
mod vault;
mod wallets;
mod webhooks;

pub use ach::AchArgs;
pub use database::DatabaseArgs;
pub use log::LogArgs;
pub use metrics::MetricsArgs;
pub use payments::PaymentArgs;
pub use serve::ServeArgs;
pub use vault::VaultArgs;
pub use wallets::WalletArgs;
pub use webhooks::WebhookArgs;
