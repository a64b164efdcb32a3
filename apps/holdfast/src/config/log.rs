//! What is logged, and how.

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use holdfast_telemetry::LogFormat;

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

    /// `json` (one object per line) or `pretty` (for people at a terminal).
    #[arg(
        long = "log-format",
        env = "HOLDFAST_LOG_FORMAT",
        default_value = "json",
        value_parser = PossibleValuesParser::new(["json", "pretty"]).map(|word| match word.as_str() {
            "pretty" => LogFormat::Pretty,
            _ => LogFormat::Json,
        }),
        global = true
    )]
    pub format: LogFormat,
}

impl LogArgs {
    /// Installs the process's logs as these settings say (`holdfast_telemetry`).
    pub fn init(&self) -> holdfast_telemetry::log_pipe::FlushAtExit {
        holdfast_telemetry::init(&self.filter, self.format)
    }
}
