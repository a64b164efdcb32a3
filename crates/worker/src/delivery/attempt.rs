//! One attempt: up to four requests to the subscription's endpoint (spec 6.2), with backoff
//! between them, and what the history keeps of it.

use std::hash::BuildHasher;

use holdfast_domain::ports::{Claimed, Finished, PostResult, WebhookPost};
use holdfast_domain::webhook::{Outcome, RetryDecision, backoff, decide, notification_body};

use super::Deliverer;

impl Deliverer {
    #[tracing::instrument(skip_all, fields(notification = %claimed.id))]
    pub(super) async fn deliver(&self, claimed: &Claimed) -> Finished {
        match claimed.subscription.as_ref().filter(|s| s.active) {
            None => Finished {
                outcome: Outcome::Skipped,
                endpoint_url: claimed
                    .subscription
                    .as_ref()
                    .map(|s| s.endpoint_url.as_str().to_owned()),
                request_body: None,
                response: Some("not sent: the subscription was inactive when its turn came".into()),
                requests: 0,
                attempted_on: self.clock.now(),
            },
            Some(subscription) => {
                let body = notification_body(
                    claimed.id.as_str(),
                    claimed.event_id.as_str(),
                    &claimed.event_type,
                    claimed.created_on,
                    &claimed.event_data,
                );
                let mut post = WebhookPost {
                    url: subscription.endpoint_url.as_str().to_owned(),
                    message_id: claimed.id.to_string(),
                    timestamp: 0,
                    body,
                    secrets: subscription.signing_secrets(self.clock.now()),
                    custom_header: subscription
                        .custom_header
                        .as_ref()
                        .map(|h| (h.name().to_owned(), h.value().to_owned())),
                    timeout: self.settings.timeout,
                };
                let attempted_on = self.clock.now();
                let (outcome, requests, last) = self.attempt(&mut post).await;
                Finished {
                    outcome,
                    endpoint_url: Some(post.url),
                    request_body: Some(post.body),
                    response: Some(describe(&last)),
                    requests,
                    attempted_on,
                }
            }
        }
    }

    /// Up to four requests; returns the outcome, how many were made, and the last result.
    async fn attempt(&self, post: &mut WebhookPost) -> (Outcome, u32, PostResult) {
        let mut requests = 0_u32;
        loop {
            requests = requests.saturating_add(1);
            post.timestamp = self.clock.now().unix_timestamp();
            let result = self.sender.post(post).await;
            match decide(&result, requests) {
                RetryDecision::Succeeded => return (Outcome::Succeeded, requests, result),
                RetryDecision::GiveUp => return (Outcome::Failed, requests, result),
                RetryDecision::Retry => {
                    let pause = backoff(
                        self.settings.backoff_base,
                        requests,
                        self.jitter(&post.message_id, requests),
                    );
                    tokio::time::sleep(pause).await;
                }
            }
        }
    }

    /// A fraction in [0, 1) that differs per notification and retry (no need for a CSPRNG).
    fn jitter(&self, id: &str, retry: u32) -> f64 {
        let hash = self.jitter.hash_one((id, retry));
        #[expect(
            clippy::cast_precision_loss,
            reason = "a jitter fraction needs no precision"
        )]
        let fraction = (hash >> 11) as f64 / (1u64 << 53) as f64;
        fraction
    }
}

/// The history's "response": the body on success, or the error on failure.
fn describe(result: &PostResult) -> String {
    match result {
        PostResult::Answered { status, body } if (200..300).contains(status) => body.clone(),
        PostResult::Answered { status, body } => format!("HTTP {status}: {body}"),
        PostResult::Failed(failure) => failure.to_string(),
    }
}
