//! The tests' stand-in Adyen (`holdfast_e2e::fake_adyen`) as a process of its own, for
//! `bench/adyen.sh`: every payment answered after `LATENCY_MS`, as a real processor takes
//! hundreds of milliseconds. Prints its Checkout URL, then serves until killed, printing the
//! payments answered when it gets a line on standard input.
//!
//! Usage: `fake_adyen [LATENCY_MS]`.
#![expect(clippy::unwrap_used, reason = "a bench tool: a panic is the report")]
#![expect(clippy::print_stdout, reason = "the URL and the count are the output")]

use std::time::Duration;

use holdfast_e2e::fake_adyen::FakeAdyen;
use tokio::io::AsyncBufReadExt;

#[tokio::main]
async fn main() {
    let latency: u64 = std::env::args().nth(1).map_or(0, |ms| ms.parse().unwrap());
    let fake = FakeAdyen::start().await;
    fake.forget();
    fake.set_latency(Duration::from_millis(latency));
    println!("{}", fake.url);
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    while let Ok(Some(_)) = lines.next_line().await {
        println!("{}", fake.payments());
    }
    // Standard input closed: serve until killed.
    std::future::pending::<()>().await;
}
