//! The pool-gate tests' one request: submitted, its runtime started with its pool behind the test's gate, and its record read back.

use super::{SwitchGate, Tracking, in_pool, pools_builder};
use crate::rig::{A, RESULTS, Setup, records_on, records_within, setup, start, submit_due, within};
use async_worker::{RunReport, Verdict};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The pool every queue runs in when none is listed.
pub const DEFAULT: &str = "default";

/// Where the one request of a pool-gate test runs, and how long it may wait.
pub struct Gating {
    pub queue: &'static str,
    /// A pool of eight workers.
    pub pool: &'static str,
    pub wait_bound: Duration,
    /// The request's deadline, after the rig's `START`.
    pub deadline_in_secs: i64,
}

impl Default for Gating {
    /// Queue [`A`] in the default pool, Go's 5 m wait bound, an hour to go.
    fn default() -> Self {
        Gating {
            queue: A,
            pool: DEFAULT,
            wait_bound: Duration::from_secs(300),
            deadline_in_secs: 3600,
        }
    }
}

/// A running pool-gate test: its store, handler, and runtime's stop and run.
pub type Gated = (
    Setup,
    Arc<Tracking>,
    CancellationToken,
    JoinHandle<RunReport>,
);

/// Submits request `ok-1` and starts a runtime whose pool is behind `gate`,
/// as `gating` says; the handler answers at once.
pub async fn one_gated(gate: &Arc<SwitchGate>, gating: Gating) -> Gated {
    let s = setup();
    let (queue, pool) = (gating.queue, gating.pool);
    submit_due(&s, queue, "ok-1", RESULTS, gating.deadline_in_secs).await;
    let handler = Tracking::holding(Duration::ZERO);
    let rt = pools_builder(&s, &handler, vec![in_pool(queue, pool)], &[(pool, 8)])
        .pool_gate(pool, gate.shared())
        .gate_wait_timeout(gating.wait_bound);
    let (token, handle) = start(rt.build().expect("valid runtime settings"));
    (s, handler, token, handle)
}

/// Request `ok-1` behind a pool gate answering `verdict`, started as
/// [`one_gated`] starts it with the default gating, once the gate has been
/// asked `asks` times within `bound`.
pub async fn asked(verdict: Verdict, asks: usize, bound: Duration) -> (Arc<SwitchGate>, Gated) {
    let gate = SwitchGate::new(1.0, verdict);
    let gated = one_gated(&gate, Gating::default()).await;
    let what = format!("{asks} asks");
    within(bound, &what, async || gate.applies() >= asks).await;
    (gate, gated)
}

/// The one record in [`RESULTS`], once it lands.
pub async fn the_record(s: &Setup, bound: Duration) -> serde_json::Value {
    records_within(s, bound, "the record", 1).await;
    records_on(&s.memory, RESULTS).await.remove(0)
}
