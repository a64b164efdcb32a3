use std::io::Write as _;

use clap::Parser;
use holdfast::cli::Cli;

/// glibc's malloc and free were a fifth of the HTTP workers' CPU per auth under load
/// (docs/performance.md, eleventh session).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let _log = holdfast::telemetry::init(&cli.log);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
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
