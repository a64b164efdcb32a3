//! Payments: amounts, card data, brands, fees, and what may follow a transaction.

pub mod adyen;
pub mod amount;
pub mod brand;
pub mod card;
pub mod client_session;
pub mod decline;
pub mod fee;
pub mod follow_up;
pub mod labels;
pub mod lifecycle;
pub mod response_code;
pub mod routing;
pub mod token;
pub mod transaction;
pub mod wallet;
