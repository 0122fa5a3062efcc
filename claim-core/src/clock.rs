//! Time: the `Clock` seam stores read, the manual clock tests move, and the wall clock in Unix time, written once.
//!
//! claim-core defines the seam and the one wall-clock reading; [`SystemClock`]
//! is that reading behind the seam, the default of the memory store and the
//! runtime alike (reading a clock is the caller's act, never the model's).

use crate::types::Millis;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch by this host's clock (0 before it).
pub fn unix_now_ms() -> Millis {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    Millis(since.as_millis() as u64)
}

/// Whole seconds since the Unix epoch by this host's clock: what the Go
/// producer writes as a deadline.
pub fn unix_now() -> i64 {
    (unix_now_ms().0 / 1000) as i64
}

/// Where a store's sense of "now" comes from.
///
/// The model never calls it: stores and the runtime read it and pass `now` in.
pub trait Clock: Send + Sync + fmt::Debug {
    fn now(&self) -> Millis;
}

/// Wall-clock time from the operating system ([`unix_now_ms`]): the default
/// clock of the memory store and of the worker runtime.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Millis {
        unix_now_ms()
    }
}

/// A clock that moves only when told to: tests and the conformance suite.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    pub fn new(start: Millis) -> Arc<Self> {
        Arc::new(ManualClock(AtomicU64::new(start.0)))
    }

    pub fn set(&self, now: Millis) {
        self.0.store(now.0, Ordering::SeqCst);
    }

    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Millis {
        Millis(self.0.load(Ordering::SeqCst))
    }
}
