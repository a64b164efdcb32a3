#![doc = include_str!("../README.md")]

mod address;
mod apple_pay;
mod body;
mod connector;
mod guard;
mod networks;
mod sender;
mod signing;

pub use apple_pay::{AppleGateway, AppleGatewayConfig, IdentityError, MerchantIdentity};
pub use ipnet::IpNet;
pub use networks::parse_networks;
pub use sender::{BuildError, DEFAULT_MAX_RESPONSE_BYTES, HyperSender, SenderConfig};
pub use signing::{SignError, sign};
