//! What is logged, and how.

use clap::{Args, ValueEnum};

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

impl LogArgs {
    /// Installs the process's logs as these settings say (`holdfast_telemetry`).
    pub fn init(&self) -> holdfast_telemetry::log_pipe::FlushAtExit {
        let format = match self.format {
            LogFormat::Json => holdfast_telemetry::LogFormat::Json,
            LogFormat::Pretty => holdfast_telemetry::LogFormat::Pretty,
        };
        holdfast_telemetry::init(&self.filter, format)
    }
}
