//! Liveness and readiness: what the runtime's parts report, and the rule `/readyz` applies to it.
//!
//! Ready means: claiming (not draining), the store answers its ping, the
//! store has not answered out of memory lately, and the writer has no
//! settlement it has been failing to land for longer than one lease (past
//! that, the claim may already be redelivered elsewhere: the replica is
//! doing harm, not work). Alive is only "the runtime runs": a store outage
//! must not get a replica restarted, since restarting does not fix it.

use crate::metrics;
use claim_core::StoreError;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::time::Instant;

/// How long one out-of-memory answer keeps the replica not ready.
pub const OOM_HOLD: Duration = Duration::from_secs(10);

/// The raw signals, shared by the runtime's parts.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    alive: AtomicBool,
    consuming: AtomicBool,
    store_reachable: AtomicBool,
    times: Mutex<Times>,
}

#[derive(Debug, Default)]
struct Times {
    writer_failing_since: Option<Instant>,
    oom_until: Option<Instant>,
}

impl Signals {
    fn times(&self) -> std::sync::MutexGuard<'_, Times> {
        self.times.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_alive(&self, on: bool) {
        self.alive.store(on, Ordering::Relaxed);
    }

    pub fn set_consuming(&self, on: bool) {
        self.consuming.store(on, Ordering::Relaxed);
    }

    /// Whether the store answered the last ping; exported as `store_up`.
    pub fn set_store_reachable(&self, on: bool) {
        self.store_reachable.store(on, Ordering::Relaxed);
        metrics::store_up(on);
    }

    pub fn set_writer_failing_since(&self, since: Option<Instant>) {
        self.times().writer_failing_since = since;
    }

    /// How long the writer's oldest unlanded settlement has been failing
    /// (zero when none), exported as `writer_failing_seconds`.
    pub fn publish_writer_failing(&self) {
        let since = self.times().writer_failing_since;
        metrics::writer_failing(since.map_or(Duration::ZERO, |s| s.elapsed()));
    }

    /// Counts a store error by operation and kind; an out-of-memory answer
    /// also holds readiness down for [`OOM_HOLD`] and raises the OOM gauge.
    pub fn note_store_error(&self, error: &StoreError) {
        metrics::store_error(error);
        if error.is_out_of_memory() {
            self.times().oom_until = Some(Instant::now() + OOM_HOLD);
            metrics::store_out_of_memory(true);
        }
    }

    /// Whether an out-of-memory answer is recent; lowers the gauge once not.
    pub fn out_of_memory(&self) -> bool {
        let mut times = self.times();
        match times.oom_until {
            Some(until) if until > Instant::now() => true,
            Some(_) => {
                times.oom_until = None;
                metrics::store_out_of_memory(false);
                false
            }
            None => false,
        }
    }

    /// Why the runtime should not get traffic now, if it should not.
    pub fn not_ready_because(&self, lease: Duration) -> Option<String> {
        if !self.consuming.load(Ordering::Relaxed) {
            return Some("not claiming (starting or draining)".into());
        }
        if !self.store_reachable.load(Ordering::Relaxed) {
            return Some("the store does not answer".into());
        }
        if self.out_of_memory() {
            return Some("the store is out of memory".into());
        }
        let failing = self.times().writer_failing_since;
        match failing {
            Some(since) if since.elapsed() > lease => Some(format!(
                "results have failed to land for {:?}, longer than the lease",
                since.elapsed()
            )),
            _ => None,
        }
    }
}

/// Liveness and readiness, for the health endpoints.
#[derive(Debug, Clone)]
pub struct Health {
    pub(crate) signals: Arc<Signals>,
    pub(crate) lease: Duration,
}

impl Health {
    /// True while the runtime runs (until shutdown completes).
    pub fn is_alive(&self) -> bool {
        self.signals.alive.load(Ordering::Relaxed)
    }

    /// True while the runtime claims work, its store answers and is not out
    /// of memory, and its results land (none failing for over a lease).
    pub fn is_ready(&self) -> bool {
        self.not_ready_because().is_none()
    }

    /// Why it is not ready, when it is not.
    pub fn not_ready_because(&self) -> Option<String> {
        self.signals.not_ready_because(self.lease)
    }
}
