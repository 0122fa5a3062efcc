//! The runtime's clocks: the system's wall clock, and one that follows tokio's time for tests on paused time.

use claim_core::{Clock, Millis};

/// Seconds since the Unix epoch on the system clock: the unit of an
/// envelope's `deadline`, for producers that stamp one (claim-core's one
/// wall-clock reading, re-exported where the runtime's users look).
pub use claim_core::unix_now;

/// The runtime's default clock (claim-core's one system clock, shared with
/// the memory store).
pub use claim_core::SystemClock;

/// Wall-clock milliseconds derived from tokio's [`tokio::time::Instant`]:
/// `start` at creation, advancing exactly as tokio time does (including
/// `tokio::time::pause` and `advance` in tests).
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start: Millis,
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// Must be called inside a tokio runtime.
    pub fn starting_at(start: Millis) -> Self {
        TokioClock {
            start,
            origin: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Millis {
        self.start.plus(self.origin.elapsed().as_millis() as u64)
    }
}
