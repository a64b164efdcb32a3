//! The mail loop: sends what the email outbox holds. A down SMTP server delays an email (retried
//! with a growing pause, up to five minutes) and never loses it; a permanent refusal is kept
//! with its error and not retried.

use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ports::{Clock, EmailOutbox, MailError, Mailer};

use crate::{Stop, pause};

/// One email is claimed at a time, so its lease only has to outlast one SMTP exchange (the
/// mailer's timeout is 10 s): another process never takes over an email still being sent.
const LEASE: Duration = Duration::from_mins(2);

pub async fn run(
    outbox: Arc<dyn EmailOutbox>,
    mailer: Arc<dyn Mailer>,
    clock: Arc<dyn Clock>,
    poll: Duration,
    mut stop: Stop,
) {
    while !*stop.borrow() {
        let now = clock.now();
        let lease_until = crate::instants::later(now, LEASE);
        let batch = match outbox.claim_emails(now, lease_until, 1).await {
            Ok(batch) => batch,
            Err(err) => {
                tracing::error!(error = %err, "claiming emails failed");
                Vec::new()
            }
        };
        if batch.is_empty() {
            pause(&mut stop, poll).await;
            continue;
        }
        for queued in batch {
            let result = mailer.send(&queued.id, &queued.email).await;
            let now = clock.now();
            let recorded = match &result {
                Ok(()) => outbox.email_sent(&queued.id, now).await,
                Err(MailError::Temporary(why)) => {
                    let pause = Duration::from_secs(1u64 << queued.attempts.min(8))
                        .min(Duration::from_mins(5));
                    tracing::warn!(email = %queued.id, error = %why, retry_in = ?pause, "email not sent yet");
                    let next_try = crate::instants::later(now, pause);
                    outbox.email_retry(&queued.id, why, next_try).await
                }
                Err(MailError::Permanent(why)) => {
                    tracing::error!(email = %queued.id, error = %why, "email refused for good");
                    outbox.email_failed(&queued.id, why, now).await
                }
            };
            if result.is_ok() {
                tracing::info!(email = %queued.id, "email sent");
            }
            if let Err(err) = recorded {
                tracing::error!(email = %queued.id, error = %err, "recording an email's fate failed");
            }
        }
    }
}
