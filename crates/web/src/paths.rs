//! Paths one door names and another serves: the API serves a connection's notification
//! endpoint, the dashboard shows it for the operator to set at the processor.

/// Where a connection's Adyen notifications are sent, below Holdfast's public URL.
pub const ADYEN_NOTIFICATIONS: &str = "/notifications/adyen/{connectionId}";

/// The path of connection `id`'s Adyen notification endpoint.
pub fn adyen_notifications(id: &str) -> String {
    ADYEN_NOTIFICATIONS.replace("{connectionId}", id)
}
