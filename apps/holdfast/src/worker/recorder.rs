//! Recording delivery outcomes: attempts hand their outcome to one task that records all that
//! have come in since its last write in one transaction (`complete_notifications`), so a busy
//! worker commits once per batch rather than once per notification.

use std::sync::Arc;

use holdfast_domain::ids::{NotificationId, WebhookId};
use holdfast_domain::ports::{Finished, NotificationQueue, Recorded, StoreError};
use holdfast_persistence::hand_off::{DeliveryLoad, SubscriptionChange};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Outcomes recorded in one transaction, at most.
const BATCH: usize = 256;

/// An attempt's outcome on its way to the recorder.
#[derive(Debug)]
struct Outcome {
    id: NotificationId,
    webhook: WebhookId,
    finished: Finished,
}

/// Where attempts send their outcomes.
#[derive(Debug, Clone)]
pub struct Outcomes(mpsc::UnboundedSender<Outcome>);

impl Outcomes {
    /// Queues the outcome of `id`, a notification to `webhook`.
    pub fn record(&self, id: NotificationId, webhook: WebhookId, finished: Finished) {
        // The recorder outlives every sender: it stops when the last one is dropped.
        let _ = self.0.send(Outcome {
            id,
            webhook,
            finished,
        });
    }
}

/// The recording task.
#[derive(Debug)]
pub struct Recorder(JoinHandle<()>);

impl Recorder {
    /// Records the outcomes sent to it, telling `load` which ones are written.
    pub fn start(
        queue: Arc<dyn NotificationQueue>,
        service_name: String,
        load: Arc<DeliveryLoad>,
    ) -> (Outcomes, Self) {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(record(queue, service_name, load, rx));
        (Outcomes(tx), Self(task))
    }

    /// Waits until every outcome sent has been recorded (all senders must be dropped first).
    pub async fn finish(self) {
        if let Err(err) = self.0.await {
            tracing::error!(error = %err, "the outcome recorder stopped abnormally");
        }
    }
}

async fn record(
    queue: Arc<dyn NotificationQueue>,
    service_name: String,
    load: Arc<DeliveryLoad>,
    mut incoming: mpsc::UnboundedReceiver<Outcome>,
) {
    let mut batch = Vec::with_capacity(BATCH);
    while incoming.recv_many(&mut batch, BATCH).await > 0 {
        let webhooks: Vec<WebhookId> = batch.iter().map(|o| o.webhook.clone()).collect();
        let outcomes: Vec<_> = batch.drain(..).map(|o| (o.id, o.finished)).collect();
        let recorded = match complete(queue.as_ref(), &outcomes, &service_name).await {
            Ok(recorded) => recorded,
            Err(err) => {
                // A batch fails whole: a deadlock with another process's recorder, say. One by
                // one, in order, the rest still land; a row recorded already is left alone
                // (only pending rows are recorded), so nothing is counted twice.
                tracing::warn!(error = %err, notifications = outcomes.len(), "recording a batch of delivery outcomes failed; recording them one by one");
                let mut recorded = Vec::with_capacity(outcomes.len());
                for outcome in &outcomes {
                    match complete(queue.as_ref(), std::slice::from_ref(outcome), &service_name)
                        .await
                    {
                        Ok(one) => recorded.extend(one),
                        // Its lease runs out and another attempt is made: nothing is lost.
                        Err(err) => {
                            tracing::error!(error = %err, notification = %outcome.0, "recording a delivery outcome failed");
                            recorded.push(Recorded::NOT);
                        }
                    }
                }
                recorded
            }
        };
        // A subscription this batch disabled: its rows waiting in the lines are skipped.
        for (webhook, recorded) in webhooks.into_iter().zip(recorded) {
            if recorded.disabled {
                load.changed(SubscriptionChange::Disabled(webhook));
            }
        }
        load.recorded(outcomes.iter().map(|(id, _)| id));
    }
}

/// Records `outcomes` in one transaction and logs each; what was recorded of each.
async fn complete(
    queue: &dyn NotificationQueue,
    outcomes: &[(NotificationId, Finished)],
    service_name: &str,
) -> Result<Vec<Recorded>, StoreError> {
    let recorded = queue.complete_notifications(outcomes, service_name).await?;
    for ((id, finished), recorded) in outcomes.iter().zip(&recorded) {
        log(id, finished, *recorded);
    }
    Ok(recorded)
}

fn log(id: &NotificationId, finished: &Finished, recorded: Recorded) {
    tracing::info!(
        notification = %id,
        outcome = finished.outcome.as_str(),
        requests = finished.requests,
        recorded = recorded.recorded,
        disabled = recorded.disabled,
        "notification finished"
    );
}
