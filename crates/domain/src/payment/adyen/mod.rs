//! Adyen, the first real processor: the account a connection holds (`account`) and how
//! Adyen's answers read in Holdfast's terms (`answers`, the mapping table of
//! docs/processors/adyen.md). The HTTP calls themselves are the `holdfast-adyen` adapter's.

pub mod account;
pub mod answers;
pub mod notifications;

pub use account::{
    AdyenAccount, NewAdyenAccount, NotificationSecrets, SealedSecret, Secret, UrlPolicy,
};
