//! Structured logs. Nothing secret is ever a field: no key values, no card data, no database
//! passwords, no query strings (hosted scripts carry a key there).
//!
//! Logging never blocks or stops serving: lines go through [`log_pipe`], which drops (and
//! counts) what standard error cannot take, whether its reader is gone or only slow.

pub mod log_pipe;

use tracing_subscriber::EnvFilter;

use crate::config::{LogArgs, LogFormat};

/// Installs the subscriber; hold what it returns until the process ends, which flushes the last
/// lines (for a bounded time) when dropped.
pub fn init(args: &LogArgs) -> log_pipe::FlushAtExit {
    let filter = EnvFilter::try_new(&args.filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let pipe = log_pipe::LogPipe::to_stderr();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Its own report of a failed write is an `eprintln!`, which panics on a closed pipe.
        .log_internal_errors(false)
        .with_writer(pipe.clone());
    let _ = match args.format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
    // A panic is reported through the log like any line, so it never blocks on a stuck standard
    // error (the default hook writes there directly) and carries the request's span. A panic
    // is recovered (`http::run_to_end`, `holdfast_worker`'s `supervise`), so this is its only trace.
    std::panic::set_hook(Box::new(|panic| {
        let thread = std::thread::current();
        tracing::error!(
            thread = thread.name().unwrap_or("unnamed"),
            panic = %panic,
            "panicked"
        );
    }));
    log_pipe::FlushAtExit(pipe)
}
