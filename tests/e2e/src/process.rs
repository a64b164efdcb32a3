//! Running the real binary: one-shot commands and a server with captured output.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The vault key every test process shares (32 bytes of 0x2a), so no key file is written
/// beside the tests and what one process seals another opens.
pub const TEST_VAULT_KEY: &str = "KioqKioqKioqKioqKioqKioqKioqKioqKioqKioqKio=";

/// The `holdfast` binary: `HOLDFAST_BIN`, or built once per test process.
pub fn holdfast_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("HOLDFAST_BIN") {
            return PathBuf::from(bin);
        }
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--quiet", "-p", "holdfast", "--bin", "holdfast"])
            .current_dir(&root)
            .status()
            .expect("run cargo build");
        assert!(status.success(), "cargo build -p holdfast failed");
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
        target.join("debug").join("holdfast")
    })
    .clone()
}

#[derive(Debug)]
pub struct CliOutput {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
}

pub fn run_cli(database_url: &str, args: &[&str]) -> CliOutput {
    let out = cli_command(database_url, args)
        .output()
        .expect("run holdfast");
    CliOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `holdfast ARGS…` against `database_url`, as every command of a test runs.
fn cli_command(database_url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(holdfast_bin());
    command
        .args(args)
        .env("HOLDFAST_DATABASE_URL", database_url)
        .env("HOLDFAST_LOG", "warn")
        // The servers' key: what a command seals (an invitation's email), they open.
        .env("HOLDFAST_VAULT_KEY", TEST_VAULT_KEY);
    command
}

/// `holdfast ARGS…` started and left running: the caller waits for it, or kills it.
pub fn spawn_cli(database_url: &str, args: &[&str]) -> Child {
    cli_command(database_url, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run holdfast")
}

pub fn run_cli_with_input(database_url: &str, args: &[&str], input: &str) -> CliOutput {
    let mut child = cli_command(database_url, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run holdfast");
    std::io::Write::write_all(&mut child.stdin.take().expect("piped"), input.as_bytes())
        .expect("write to holdfast's standard input");
    let out = child.wait_with_output().expect("holdfast ends");
    CliOutput {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A running `holdfast serve`; killed when dropped.
#[derive(Debug)]
pub struct Server {
    child: Option<Child>,
    readers: Vec<std::thread::JoinHandle<()>>,
    pub base_url: String,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    pub fn start(database_url: &str, env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(holdfast_bin());
        command
            .arg("serve")
            .env("HOLDFAST_DATABASE_URL", database_url)
            .env("HOLDFAST_BIND", "127.0.0.1:0")
            .env("HOLDFAST_LOG_FORMAT", "json")
            // The start-up line the harness waits for is logged at info.
            .env("HOLDFAST_LOG", "info")
            // A fixed test key (32 bytes of 0x2a), so no key file is written beside the tests.
            .env("HOLDFAST_VAULT_KEY", TEST_VAULT_KEY)
            .env("HOLDFAST_HTTP_WORKERS", "2")
            // Tests send bursts a client would not; the rate-limit tests turn limits back on.
            .env("HOLDFAST_RATE_LIMIT_PRIVATE_PER_S", "0")
            .env("HOLDFAST_RATE_LIMIT_PUBLIC_PER_S", "0")
            .env("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "0")
            // Emails go to a scratch folder unless a test names an SMTP server.
            .env(
                "HOLDFAST_MAIL_DIR",
                std::env::temp_dir().join("holdfast-e2e-mail"),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("spawn holdfast serve");
        let stdout = Arc::new(Mutex::new(String::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let (address_tx, address_rx) = mpsc::channel();
        let readers = vec![
            capture(child.stdout.take().expect("stdout"), stdout.clone(), None),
            capture(
                child.stderr.take().expect("stderr"),
                stderr.clone(),
                Some(address_tx),
            ),
        ];
        let Ok(address) = address_rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            panic!(
                "holdfast serve did not start:\n{}",
                stderr.lock().expect("log").as_str()
            );
        };
        Self {
            child: Some(child),
            readers,
            base_url: format!("http://{address}"),
            stdout,
            stderr,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Everything the server wrote so far: standard output, then its log (standard error).
    pub fn output(&self) -> String {
        format!(
            "{}{}",
            self.stdout.lock().expect("out"),
            self.stderr.lock().expect("log")
        )
    }

    pub fn stdout(&self) -> String {
        self.stdout.lock().expect("out").clone()
    }

    pub fn log(&self) -> String {
        self.stderr.lock().expect("log").clone()
    }

    /// Sends SIGTERM, waits for the process to exit and for its output to be read in full.
    pub fn terminate(&mut self) -> ExitStatus {
        self.stop_with("TERM")
    }

    /// Sends a signal and returns at once; `wait` for the process to stop.
    pub fn signal(&self, signal: &str) {
        let child = self.child.as_ref().expect("running");
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }

    /// Waits for the process to exit and for its output to be read in full.
    pub fn wait(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let exit = child.wait().expect("wait");
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
        exit
    }

    /// Sends a signal (`TERM`, `INT`, …), waits for the process to exit and for its output.
    pub fn stop_with(&mut self, signal: &str) -> ExitStatus {
        self.signal(signal);
        self.wait()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Copies a stream into `sink`; when `listening` is given, sends the address from the
/// server's `listening` log line.
fn capture(
    stream: impl Read + Send + 'static,
    sink: Arc<Mutex<String>>,
    listening: Option<mpsc::Sender<String>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if let Some(tx) = &listening
                && let Ok(entry) = serde_json::from_str::<serde_json::Value>(&line)
                && entry["message"] == "listening"
                && let Some(address) = entry["address"].as_str()
            {
                let _ = tx.send(address.to_owned());
            }
            let mut text = sink.lock().expect("sink");
            text.push_str(&line);
            text.push('\n');
        }
    })
}
