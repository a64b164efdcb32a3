//! The browser tests under `tests/browser`, run with Node.js against a running server.

use std::path::PathBuf;
use std::process::Command;

use crate::{Env, Server};

fn browser_tests() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../browser")
}

/// Where screenshots are kept: `target/browser-artifacts/<backend>/…`.
fn artifacts(env: &Env) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"),
        PathBuf::from,
    );
    target
        .join("browser-artifacts")
        .join(format!("{:?}", env.backend).to_lowercase())
}

/// Runs `tests/browser/<script>` against `server`; its failures fail the test, with the
/// server's log.
pub fn browser(env: &Env, server: &Server, script: &str, vars: &[(&str, &str)]) {
    let run = Command::new("node")
        .arg(browser_tests().join(script))
        .current_dir(browser_tests())
        .env("HOLDFAST_URL", server.url("").trim_end_matches('/'))
        .env("HOLDFAST_ARTIFACTS", artifacts(env))
        .envs(vars.iter().copied())
        .output()
        .expect("node (the browser tests need Node.js and `npm ci --prefix tests/browser`)");
    let report = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && !report.contains("not ok"),
        "browser tests failed:\n{report}\n{}\nserver log:\n{}",
        String::from_utf8_lossy(&run.stderr),
        server.log()
    );
}
