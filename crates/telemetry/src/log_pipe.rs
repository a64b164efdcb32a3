//! Log lines handed to a thread of their own that writes them out, so that no request, loop or
//! signal handler ever waits on the log, or fails with it.
//!
//! A log shipper that stops reading leaves standard error full: a plain write would block
//! whichever thread logged next (an HTTP worker, the SIGTERM handler). One that exits leaves it
//! closed: every write fails (and tracing-subscriber's own report of that failure, an
//! `eprintln!`, panics). Here a line is queued without waiting; when the queue is full the line
//! is dropped, and when its write fails it is lost: both are counted ([`dropped_lines`], shown
//! by `/healthz`), never reported by writing more.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;

/// Lines waiting to be written before new ones are dropped.
const QUEUED_LINES: usize = 16_384;
/// How long the last lines may take to go out when the process ends.
const FLUSH_AT_EXIT: Duration = Duration::from_secs(2);

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Log lines dropped or lost since the process started.
pub fn dropped_lines() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// The queue to the writing thread. Dropping the last handle waits, two seconds at most, for
/// what is queued to be written, so a clean exit keeps its last lines and a wedged standard
/// error cannot hold the exit.
#[derive(Debug, Clone)]
pub struct LogPipe {
    sender: SyncSender<Vec<u8>>,
    /// Lines queued and not yet written (or lost).
    waiting: Arc<AtomicU64>,
}

impl LogPipe {
    /// A pipe to standard error.
    pub fn to_stderr() -> Self {
        Self::to(io::stderr())
    }

    /// A pipe to `out`, written by a thread of its own. Should that thread not start, every
    /// line is dropped and counted.
    pub fn to(out: impl Write + Send + 'static) -> Self {
        let (sender, lines) = mpsc::sync_channel(QUEUED_LINES);
        let waiting = Arc::new(AtomicU64::new(0));
        let written = waiting.clone();
        let _ = std::thread::Builder::new()
            .name("holdfast-log".into())
            .spawn(move || write_out(&lines, out, &written));
        Self { sender, waiting }
    }

    /// Waits until every queued line is written, or `limit` has passed.
    pub fn flush(&self, limit: Duration) {
        let now = Instant::now();
        let deadline = now.checked_add(limit).unwrap_or(now);
        while self.waiting.load(Ordering::Acquire) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn queue(&self, line: Vec<u8>) {
        self.waiting.fetch_add(1, Ordering::AcqRel);
        if self.sender.try_send(line).is_err() {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn write_out(lines: &Receiver<Vec<u8>>, mut out: impl Write, waiting: &AtomicU64) {
    while let Ok(line) = lines.recv() {
        if out.write_all(&line).and_then(|()| out.flush()).is_err() {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Flushes the process's log at exit: held by `main` for as long as it runs.
#[derive(Debug)]
pub struct FlushAtExit(pub LogPipe);

impl Drop for FlushAtExit {
    fn drop(&mut self) {
        self.0.flush(FLUSH_AT_EXIT);
    }
}

/// One event's bytes, gathered, then queued whole when the subscriber is done with it.
#[derive(Debug)]
pub struct LineWriter {
    pipe: LogPipe,
    line: Vec<u8>,
}

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for LineWriter {
    fn drop(&mut self) {
        if !self.line.is_empty() {
            self.pipe.queue(std::mem::take(&mut self.line));
        }
    }
}

impl<'a> MakeWriter<'a> for LogPipe {
    type Writer = LineWriter;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter {
            pipe: self.clone(),
            line: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
