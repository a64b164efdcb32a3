use std::sync::Mutex;

use super::*;

/// Standard error as a log shipper leaves it: closed, or taking nothing for a while.
#[derive(Clone)]
enum Out {
    Closed,
    Stuck(Arc<Mutex<()>>),
    Kept(Arc<Mutex<Vec<u8>>>),
}

impl Write for Out {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Closed => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
            Self::Stuck(gate) => {
                drop(
                    gate.lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner),
                );
                Ok(buf.len())
            }
            Self::Kept(kept) => {
                kept.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn log(pipe: &LogPipe, line: &str) {
    let mut writer = pipe.make_writer();
    writer.write_all(line.as_bytes()).unwrap();
}

#[test]
fn lines_are_written_whole_and_in_order() {
    let kept = Arc::new(Mutex::new(Vec::new()));
    let pipe = LogPipe::to(Out::Kept(kept.clone()));
    for n in 0..100 {
        log(&pipe, &format!("line {n}\n"));
    }
    pipe.flush(Duration::from_secs(5));
    let text = String::from_utf8(kept.lock().unwrap().clone()).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let expected: Vec<String> = (0..100).map(|n| format!("line {n}")).collect();
    assert_eq!(lines, expected);
}

#[test]
fn a_closed_output_loses_lines_without_a_panic() {
    let before = dropped_lines();
    let pipe = LogPipe::to(Out::Closed);
    for _ in 0..10 {
        log(&pipe, "lost\n");
    }
    pipe.flush(Duration::from_secs(5));
    assert!(dropped_lines() >= before + 10);
}

#[test]
fn an_output_that_takes_nothing_never_blocks_a_logger() {
    let gate = Arc::new(Mutex::new(()));
    let held = gate.lock().unwrap();
    let pipe = LogPipe::to(Out::Stuck(gate.clone()));
    let before = dropped_lines();
    let started = Instant::now();
    // Far more than the queue holds: the extra lines are dropped, none waits.
    for _ in 0..(QUEUED_LINES * 2) {
        log(&pipe, "waiting\n");
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(dropped_lines() >= before + u64::try_from(QUEUED_LINES).unwrap() - 1);
    // Ending the process does not wait on it either, beyond its bound.
    let flushing = Instant::now();
    pipe.flush(Duration::from_millis(100));
    assert!(flushing.elapsed() < Duration::from_secs(2));
    drop(held);
}
