#![doc = include_str!("../README.md")]
#![expect(
    clippy::unwrap_used,
    reason = "test harness: a panic is the failure report"
)]

pub mod ach;
mod browser;
pub mod dashboard;
mod dump;
pub mod fake_adyen;
mod http;
mod http_server;
pub mod money;
mod process;
pub mod raw;
mod receiver;
pub mod routes;
mod smtp;

pub use browser::browser;
pub use dump::contains;
pub use http::{Api, Reply};
pub use process::{CliOutput, Server, TEST_VAULT_KEY, holdfast_bin};
pub use receiver::{Answer, Received, Receiver, verify_signature};
pub use smtp::{Mail, SmtpServer, free_port};

/// Every answer a US boarding form needs, with a tax id the sandbox approves.
pub const BOARDING_ANSWERS: &[(&str, &str)] = &[
    ("legalName", "Corner Shop LLC"),
    ("businessType", "llc"),
    ("country", "US"),
    ("taxId", "12-3456789"),
    ("addressLine1", "1 Main St"),
    ("city", "Springfield"),
    ("postalCode", "12345"),
    ("website", "https://corner.example.com"),
    ("mcc", "5734"),
    ("monthlyVolume", "25000"),
    ("owner1Name", "Ada Lovelace"),
    ("owner1DateOfBirth", "1980-04-30"),
    ("owner1Ownership", "60"),
    ("accountHolder", "Corner Shop LLC"),
    ("routingNumber", "021000021"),
    ("accountNumber", "000123456789"),
];

use holdfast_persistence::testing::TestDatabase;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// One test's world: a database of its own and the binary to run against it.
#[derive(Debug)]
pub struct Env {
    pub backend: Backend,
    db: TestDatabase,
}

/// A platform made by `holdfast platforms create`, with its default keys' values.
#[derive(Debug, Clone)]
pub struct PlatformFixture {
    pub id: String,
    pub owner_id: String,
    pub private_key: String,
    pub private_key_id: String,
    pub public_key: String,
    pub public_key_id: String,
}

impl Env {
    /// `None` only when PostgreSQL is not configured outside CI (see `TestDatabase::postgres`).
    pub async fn new(backend: Backend) -> Option<Self> {
        let db = match backend {
            Backend::Sqlite => TestDatabase::sqlite().await,
            Backend::Postgres => TestDatabase::postgres().await?,
        };
        Some(Self { backend, db })
    }

    pub fn database_url(&self) -> &str {
        self.db.url()
    }

    /// Makes the database unreachable (PostgreSQL: drops it, closing every connection).
    pub async fn drop_database(&self) {
        self.db.drop_now().await;
    }

    /// Runs `holdfast ARGS…` against this test's database.
    pub fn cli(&self, args: &[&str]) -> CliOutput {
        process::run_cli(self.database_url(), args)
    }

    /// Starts `holdfast ARGS…` against this test's database, without waiting for it.
    pub fn spawn_cli(&self, args: &[&str]) -> std::process::Child {
        process::spawn_cli(self.database_url(), args)
    }

    /// Runs `holdfast ARGS…` with `input` on its standard input (a password, say).
    pub fn cli_with_input(&self, args: &[&str], input: &str) -> CliOutput {
        process::run_cli_with_input(self.database_url(), args, input)
    }

    /// Runs `holdfast --json ARGS…`, asserts success and parses the output.
    pub fn cli_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json"];
        all.extend_from_slice(args);
        let out = self.cli(&all);
        assert!(out.success, "holdfast {args:?} failed:\n{}", out.stderr);
        serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("holdfast {args:?} printed no JSON ({e}):\n{}", out.stdout))
    }

    pub fn create_platform(&self, name: &str) -> PlatformFixture {
        let out = self.cli_json(&[
            "platforms",
            "create",
            "--name",
            name,
            "--owner-email",
            "owner@example.com",
        ]);
        let key = |i: usize, field: &str| out["keys"][i][field].as_str().unwrap().to_owned();
        PlatformFixture {
            id: out["platform"]["id"].as_str().unwrap().to_owned(),
            owner_id: out["user"]["id"].as_str().unwrap().to_owned(),
            private_key: key(0, "value"),
            private_key_id: key(0, "id"),
            public_key: key(1, "value"),
            public_key_id: key(1, "id"),
        }
    }

    /// `holdfast keys create …`: returns (id, value).
    pub fn create_key(&self, platform: &str, key_type: &str, mode: &str) -> (String, String) {
        let out = self.cli_json(&[
            "keys",
            "create",
            "--platform",
            platform,
            "--name",
            "Test key",
            "--type",
            key_type,
            "--mode",
            mode,
        ]);
        (
            out["id"].as_str().unwrap().to_owned(),
            out["value"].as_str().unwrap().to_owned(),
        )
    }

    /// Starts `holdfast serve` on a free port, demo bootstrap off.
    pub fn serve(&self) -> Server {
        Server::start(self.database_url(), &[("HOLDFAST_BOOTSTRAP_DEMO", "false")])
    }

    pub fn serve_with(&self, env: &[(&str, &str)]) -> Server {
        Server::start(self.database_url(), env)
    }

    /// `serve`, taking test-mode Google Pay tokens made by `google` as Google's, and Apple Pay
    /// tokens made by `apple`, if given, as Apple's.
    pub fn serve_trusting_wallets(
        &self,
        google: &holdfast_wallets::google_pay::testing::Issuer,
        apple: Option<&holdfast_wallets::apple_pay::testing::Issuer>,
    ) -> Server {
        let (google_key, google_root) = (google.private_key_base64(), google.root_key_base64());
        let mut env = vec![
            ("HOLDFAST_BOOTSTRAP_DEMO", "false".to_owned()),
            ("HOLDFAST_GOOGLE_PAY_PRIVATE_KEY", google_key),
            ("HOLDFAST_GOOGLE_PAY_TEST_ROOT_KEYS", google_root),
        ];
        if let Some(apple) = apple {
            env.push((
                "HOLDFAST_APPLE_PAY_PROCESSING_KEY",
                apple.processing_key_base64(),
            ));
            env.push((
                "HOLDFAST_APPLE_PAY_MERCHANT_ID",
                holdfast_wallets::apple_pay::testing::MERCHANT_ID.to_owned(),
            ));
            env.push(("HOLDFAST_APPLE_PAY_ROOT_CERT", apple.root_base64()));
        }
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.serve_with(&env)
    }
}

/// Declares each listed scenario `async fn NAME(env: Env)` as a test on SQLite and on
/// PostgreSQL.
#[macro_export]
macro_rules! on_both_backends {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = $crate::Env::new($crate::Backend::Sqlite).await.expect("sqlite");
                    super::$case(env).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let Some(env) = $crate::Env::new($crate::Backend::Postgres).await else {
                        return;
                    };
                    super::$case(env).await;
                }
            )*
        }
    };
}

/// A merchant of `key`'s mode boarded through its hosted form; a live one is approved by the
/// operator, as live forms wait for one.
pub async fn boarded_merchant(env: &Env, api: &Api, key: &str, platform: &str) -> String {
    let made = api
        .post(
            "/v1/boarding-forms",
            key,
            r#"{"merchant": {"name": "Shop"}}"#,
        )
        .await;
    assert_eq!(made.status, reqwest::StatusCode::CREATED, "{}", made.text);
    let url = made.body["url"].as_str().unwrap();
    let path = &url[url.find("/onboarding/").unwrap()..];
    let mut answers = BOARDING_ANSWERS.to_vec();
    answers.push(("action", "save"));
    assert_eq!(api.post_form(path, &answers).await, reqwest::StatusCode::OK);
    let submit = [
        ("action", "submit"),
        ("signerName", "Ada Lovelace"),
        ("confirm", "yes"),
    ];
    assert_eq!(api.post_form(path, &submit).await, reqwest::StatusCode::OK);
    let form = made.body["id"].as_str().unwrap();
    if !key.contains("_test_") {
        let decided = env.cli_json(&["boarding", "approve", "--platform", platform, form]);
        assert_eq!(decided["status"], "approved");
    }
    made.body["merchantId"].as_str().unwrap().to_owned()
}
