//! Structured logs. Nothing secret is ever a field: no key values, no card data, no database
//! passwords, no query strings (hosted scripts carry a key there).

use tracing_subscriber::EnvFilter;

use crate::config::{LogArgs, LogFormat};

pub fn init(args: &LogArgs) {
    let filter = EnvFilter::try_new(&args.filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match args.format {
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
        LogFormat::Pretty => builder.try_init(),
    };
}
