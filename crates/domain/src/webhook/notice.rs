//! What the creator of a subscription is told when it is disabled (spec 6.3).

use super::{FAILURE_LIMIT, Subscription};
use crate::ports::OutgoingEmail;

/// The disable email of spec 6.3.
pub fn disable_email(service_name: &str, to: &str, subscription: &Subscription) -> OutgoingEmail {
    let mut body = format!(
        "Your webhook subscription was disabled automatically after {} consecutive failed notifications.\n\n\
         Subscription id: {}\nEndpoint URL: {}\n",
        FAILURE_LIMIT,
        subscription.id,
        subscription.endpoint_url.as_str(),
    );
    if let Some(description) = &subscription.description {
        body.push_str("Description: ");
        body.push_str(description.as_str());
        body.push('\n');
    }
    body.push_str(
        "\nFix the endpoint, then re-enable the subscription. Events that happened while it was \
         inactive are not delivered.\n",
    );
    OutgoingEmail {
        to: to.to_owned(),
        subject: format!("{service_name} - Webhook Subscription Automatically Disabled"),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{PlatformId, UserId, WebhookId};
    use crate::mode::Mode;
    use crate::webhook::{Description, EndpointUrl, EventList};
    use time::macros::datetime;

    fn subscription(description: Option<&str>) -> Subscription {
        Subscription {
            id: WebhookId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            endpoint_url: EndpointUrl::from_trusted("https://example.com/hooks".into()),
            events: EventList::from_trusted(Vec::new()),
            description: description.map(|d| Description::from_trusted(d.into())),
            custom_header: None,
            active: false,
            secret: "whsec".into(),
            previous_secret: None,
            creator: UserId::from_suffix("1"),
            consecutive_failures: FAILURE_LIMIT,
            created_on: datetime!(2026-11-25 10:00 UTC),
            updated_on: datetime!(2026-11-25 10:00 UTC),
            metadata: crate::metadata::Metadata::default(),
        }
    }

    #[test]
    fn names_the_subscription_and_what_to_do() {
        let email = disable_email(
            "Acme Pay",
            "owner@example.com",
            &subscription(Some("Orders")),
        );
        assert_eq!(email.to, "owner@example.com");
        assert_eq!(
            email.subject,
            "Acme Pay - Webhook Subscription Automatically Disabled"
        );
        for part in [
            "after 25 consecutive failed notifications",
            "Subscription id: wh_1",
            "Endpoint URL: https://example.com/hooks",
            "Description: Orders",
        ] {
            assert!(email.body.contains(part), "{part}: {}", email.body);
        }
        assert!(!email.body.contains("whsec"), "never the secret");
    }

    /// Spec 6.3: the description is in the email only if the subscription has one.
    #[test]
    fn no_description_line_without_a_description() {
        let email = disable_email("Acme Pay", "owner@example.com", &subscription(None));
        assert!(
            email.body.contains("Subscription id: wh_1"),
            "{}",
            email.body
        );
        assert!(!email.body.contains("Description"), "{}", email.body);
    }
}
