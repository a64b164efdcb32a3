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

mod address;
mod api_client;
mod apple_pay;
mod body;
mod connector;
mod guard;
mod metered;
mod networks;
mod sender;
mod signing;

pub use api_client::{ApiAnswer, ApiClient, ApiClientConfig, ApiFailure};
pub use apple_pay::{AppleGateway, AppleGatewayConfig, IdentityError, MerchantIdentity};
pub use ipnet::IpNet;
pub use metered::MeteredSender;
pub use networks::parse_networks;
pub use sender::{BuildError, DEFAULT_MAX_RESPONSE_BYTES, HyperSender, SenderConfig};
pub use signing::{SignError, sign};
