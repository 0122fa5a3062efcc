//! A clock that follows tokio's time, so tests on paused time move store leases too.

use claim_core::{Clock, Millis};

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
