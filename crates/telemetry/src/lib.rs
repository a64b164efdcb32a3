#![doc = include_str!("../README.md")]
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

pub mod log_pipe;
pub mod metrics;
pub mod trace_context;

use tracing_subscriber::EnvFilter;

/// How lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One JSON object per line, the event's fields flattened.
    Json,
    /// For people at a terminal.
    Pretty,
}

/// Installs the subscriber, keeping what `filter` allows (`info` when it does not parse);
/// hold what it returns until the process ends, which flushes the last lines (for a bounded
/// time) when dropped.
pub fn init(filter: &str, format: LogFormat) -> log_pipe::FlushAtExit {
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let pipe = log_pipe::LogPipe::to_stderr();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Its own report of a failed write is an `eprintln!`, which panics on a closed pipe.
        .log_internal_errors(false)
        .with_writer(pipe.clone());
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
    // A panic is reported through the log like any line, so it never blocks on a stuck standard
    // error (the default hook writes there directly) and carries the request's span. A panic
    // is recovered (`holdfast_web`'s `run_to_end`, `holdfast_worker`'s `supervise`), so this is its only trace.
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
