//! Webhook subscriptions and their delivery rules (spec 2.3, 2.4, 3.2, 6 and 8).

pub mod catalogue;
pub mod delivery;
pub mod notice;
pub mod subscription;

pub use catalogue::EventType;
pub use delivery::{
    HISTORY, MAX_REQUESTS, Outcome, RetryDecision, backoff, decide, notification_body,
};
pub use notice::disable_email;
pub use subscription::{
    CustomHeader, Description, EndpointUrl, EventList, FAILURE_LIMIT, PreviousSecret,
    SECRET_OVERLAP, Subscription, failure_disables,
};
