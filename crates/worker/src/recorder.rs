//! Recording delivery outcomes: attempts hand their outcome to one task that records all that
//! have come in since its last write in one transaction (`complete_notifications`), so a busy
//! worker commits once per batch rather than once per notification. Outcomes gather for a
//! moment before each batch, so that batches are not of one or two under a steady load.

use std::sync::Arc;
use std::time::Duration;

use holdfast_domain::ids::{NotificationId, WebhookId};
use holdfast_domain::ports::SubscriptionChange;
use holdfast_domain::ports::{Finished, NotificationQueue, Recorded, StoreError};

use crate::load::DeliveryLoad;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Outcomes recorded in one transaction, at most.
const BATCH: usize = 256;

/// How long the recorder lets outcomes gather once one has arrived. Recording is no part of a
/// delivery's latency (the receiver has its message; the caps count attempts, not records), and
/// each statement costs about as much as the rows it writes: outcomes written one or two at a
/// time cost twice what they cost in fives.
const GATHER: Duration = Duration::from_millis(2);

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
pub struct OutcomeRecorder(JoinHandle<()>);

impl OutcomeRecorder {
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
        if batch.len() < BATCH {
            tokio::time::sleep(GATHER).await;
            while batch.len() < BATCH {
                let Ok(more) = incoming.try_recv() else { break };
                batch.push(more);
            }
        }
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use crate::load::LoadLimits;
    use holdfast_domain::ports::MockNotificationQueue;
    use holdfast_domain::webhook::Outcome;
    use time::OffsetDateTime;

    use super::*;

    /// The batches a recorder wrote: how many outcomes each, and when (from the test's start).
    type Writes = Arc<Mutex<Vec<(usize, Duration)>>>;

    /// A recorder over a queue that notes each batch it is asked to write.
    fn recorder() -> (Outcomes, OutcomeRecorder, Writes) {
        let start = tokio::time::Instant::now();
        let writes = Writes::default();
        let mut queue = MockNotificationQueue::new();
        let seen = writes.clone();
        queue
            .expect_complete_notifications()
            .returning(move |outcomes, _| {
                seen.lock().unwrap().push((outcomes.len(), start.elapsed()));
                Ok(vec![Recorded::NOT; outcomes.len()])
            });
        let load = DeliveryLoad::claiming(LoadLimits {
            concurrency: 8,
            per_platform: 8,
            per_subscription: 8,
            lease: Duration::from_mins(1),
        });
        let (outcomes, recorder) = OutcomeRecorder::start(Arc::new(queue), "Holdfast".into(), load);
        (outcomes, recorder, writes)
    }

    /// A success of notification `n`.
    fn succeed(outcomes: &Outcomes, n: usize) {
        outcomes.record(
            NotificationId::from_trusted(format!("ntf_{n}")),
            WebhookId::from_trusted("wh_a".to_owned()),
            Finished {
                outcome: Outcome::Succeeded,
                endpoint_url: None,
                request_body: None,
                response: None,
                requests: 1,
                attempted_on: OffsetDateTime::UNIX_EPOCH,
            },
        );
    }

    /// Under a steady load outcomes arrive a moment apart: those that arrive while the first
    /// of a batch gathers are written with it, one statement for several.
    #[tokio::test(start_paused = true)]
    async fn outcomes_arriving_while_a_batch_gathers_are_written_with_it() {
        let (outcomes, recorder, writes) = recorder();
        succeed(&outcomes, 1);
        tokio::time::sleep(GATHER / 2).await;
        succeed(&outcomes, 2);
        tokio::time::sleep(GATHER * 2).await;
        succeed(&outcomes, 3);
        drop(outcomes);
        recorder.finish().await;
        let sizes: Vec<usize> = writes.lock().unwrap().iter().map(|w| w.0).collect();
        assert_eq!(sizes, [2, 1]);
    }

    /// A full batch is written at once: the wait is for outcomes that might join a small one,
    /// and a backlog never waits behind it.
    #[tokio::test(start_paused = true)]
    async fn a_full_batch_is_written_without_waiting() {
        let (outcomes, recorder, writes) = recorder();
        for n in 0..BATCH + 3 {
            succeed(&outcomes, n);
        }
        drop(outcomes);
        recorder.finish().await;
        assert_eq!(
            *writes.lock().unwrap(),
            [(BATCH, Duration::ZERO), (3, GATHER)],
            "the full batch at once, the rest after gathering"
        );
    }
}
