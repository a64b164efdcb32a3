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

use std::io::Write as _;

use clap::Parser;
use holdfast::cli::Cli;

/// glibc's malloc and free were a fifth of the HTTP workers' CPU per auth under load
/// (docs/performance.md, "Design choices that earned them").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let _log = cli.log.init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "error: cannot start the runtime: {err}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(holdfast::commands::run(cli)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!(error = format!("{err:#}"), "holdfast failed");
            // Straight to standard error, whatever the log filter; a closed one is no panic.
            let _ = writeln!(std::io::stderr(), "error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
