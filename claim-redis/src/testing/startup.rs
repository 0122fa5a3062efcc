//! Waiting for a spawned redis-server to be ready: the child exiting at start ends the wait with an error quoting its log's tail; the caller says what passing the bound means.

use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// The last five lines of the log at `log`, joined with ` | ` (empty when
/// it cannot be read).
pub(crate) fn log_tail(log: &Path) -> String {
    let log = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = log.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// Polls `ready` every 20 ms until it answers true (`Ok(true)`), at most
/// `bound` (`Ok(false)`: the caller kills the child and says what it
/// waited for). `child` exiting first is an error naming `what`, its exit
/// status and the tail of `log`, and `child` is taken.
pub(crate) fn wait_ready(
    child: &mut Option<Child>,
    (what, log): (&str, &Path),
    bound: Duration,
    mut ready: impl FnMut() -> bool,
) -> std::io::Result<bool> {
    let started = Instant::now();
    while started.elapsed() < bound {
        if let Some(running) = child.as_mut()
            && let Some(status) = running.try_wait()?
        {
            *child = None;
            return Err(std::io::Error::other(format!(
                "{what} exited at start ({status}); log: {}",
                log_tail(log)
            )));
        }
        if ready() {
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(false)
}
