//! A background loop that panics or ends before it is asked to stop is logged and started again,
//! with a backoff, rather than taking its process down: one bad row or one bug in the mail loop
//! must not stop the API or the webhook deliveries beside it.
//!
//! The delivery loops run on threads of their own and are started again there, on their own
//! runtime, with the same backoff (`on_own_thread`).

use std::time::{Duration, Instant};

use crate::{Ended, Stop, pause};

/// The first wait before a restart; it doubles with each failure that follows quickly.
const FIRST_WAIT: Duration = Duration::from_millis(100);
/// The longest wait between restarts.
const LONGEST_WAIT: Duration = Duration::from_secs(30);
/// A run at least this long was healthy: the next failure waits from the start again.
const HEALTHY_RUN: Duration = Duration::from_mins(1);

/// The wait before a restart: doubling from `FIRST_WAIT` to `LONGEST_WAIT` while runs fail
/// quickly, back to the first after a healthy run.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self { next: FIRST_WAIT }
    }
}

impl Backoff {
    /// How long to wait before starting again a run that lasted `ran`.
    pub fn after_run_of(&mut self, ran: Duration) -> Duration {
        if ran >= HEALTHY_RUN {
            self.next = FIRST_WAIT;
        }
        let wait = self.next;
        self.next = self.next.saturating_mul(2).min(LONGEST_WAIT);
        wait
    }
}

/// Runs `start(stop)` on a task of its own until `stop` turns true, starting it again after
/// each panic or early end.
pub async fn supervised<F, Fut>(name: &'static str, mut stop: Stop, start: F) -> Ended
where
    F: Fn(Stop) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let mut backoff = Backoff::default();
    loop {
        let began = Instant::now();
        let outcome = tokio::spawn(start(stop.clone())).await;
        if *stop.borrow() {
            return Ok(name);
        }
        let wait = backoff.after_run_of(began.elapsed());
        match outcome {
            Ok(()) => tracing::error!(
                task = name,
                restart_in_ms = wait.as_millis(),
                "a background loop ended before it was asked to stop; starting it again"
            ),
            Err(failed) => tracing::error!(
                task = name,
                error = %failed,
                restart_in_ms = wait.as_millis(),
                "a background loop failed; starting it again"
            ),
        }
        pause(&mut stop, wait).await;
        if *stop.borrow() {
            return Ok(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};

    use tokio::sync::watch;

    use super::*;

    /// The test-only hook: a loop that panics on its first two runs, then runs until stopped.
    #[tokio::test]
    async fn a_loop_that_panics_is_started_again_until_it_runs() {
        let (stop_tx, stop) = watch::channel(false);
        let runs = Arc::new(AtomicU32::new(0));
        let counted = runs.clone();
        let supervisor = tokio::spawn(supervised("a flaky loop", stop, move |mut stop| {
            let run = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                assert!(run >= 2, "a loop's bug, run {run}");
                let _ = stop.changed().await;
            }
        }));
        // Two restarts: after 100 ms, then 200 ms.
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert_eq!(runs.load(Ordering::SeqCst), 3);
        assert!(!supervisor.is_finished(), "the supervisor gave up");
        stop_tx.send(true).unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(5), supervisor)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ended, Ok("a flaky loop"));
    }

    #[tokio::test]
    async fn a_loop_that_ends_early_is_started_again_and_stop_ends_the_waiting() {
        let (stop_tx, stop) = watch::channel(false);
        let runs = Arc::new(AtomicU32::new(0));
        let counted = runs.clone();
        let supervisor = tokio::spawn(supervised("an early loop", stop, move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            std::future::ready(())
        }));
        tokio::time::sleep(Duration::from_millis(250)).await;
        assert!(runs.load(Ordering::SeqCst) >= 2);
        // Asked to stop while waiting to restart: it stops without a run more.
        stop_tx.send(true).unwrap();
        let ended = tokio::time::timeout(Duration::from_secs(5), supervisor)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ended, Ok("an early loop"));
    }
}
