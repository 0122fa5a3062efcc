//! The recording helpers: one function per metric event, each looking up its queue's labelled handles.

use super::counted::QueueCount;
use super::names::*;
use super::queue::{QueueHandle, QueueMetrics, millis, with_queue};
use std::time::Duration;

/// `n` more events counted by `counter` for `queue`.
pub(crate) fn count(queue: &str, counter: QueueCount, n: usize) {
    with_queue(queue, |q| q.count(counter).increment(n as u64));
}

/// One gate decision that held the queue back.
pub(crate) fn gate_decision(queue: &str, reason: GateReason) {
    with_queue(queue, |q| q.gate[reason as usize].increment(1));
}

/// A pool gate's verdict that held a request back (or dropped or failed it).
pub(crate) fn pool_gate_decision(pool: &str, reason: GateReason) {
    super::queue::pool_gate_counter(pool, reason).increment(1);
}

/// The queue gate's budget read at a poll.
pub(crate) fn dispatch_budget(queue: &str, budget: f64) {
    with_queue(queue, |q| q.dispatch_budget.set(budget));
}

/// `n` terminal records the store wrote itself with `code` (the reclaimer's
/// `DELIVERY_LIMIT` records), counted as [`QueueHandle::result`] counts one.
pub(crate) fn results_by_store(queue: &str, code: &'static str, n: usize) {
    with_queue(queue, |q| count_results(q, code, n as u64));
}

fn count_results(q: &QueueMetrics, code: &'static str, n: u64) {
    q.by_code(code).increment(n);
    match code {
        "OK" => q.successful.increment(n),
        "DEADLINE_EXCEEDED" => q.exceeded_deadline.increment(n),
        "CANCELLED" => {}
        "GATE_DROPPED" => q.gate[GateReason::Dropped as usize].increment(n),
        "GATE_ERROR" => q.gate[GateReason::Error as usize].increment(n),
        _ => q.failed.increment(n),
    }
}

/// The per-request events, on handles looked up once.
impl QueueHandle {
    /// One terminal record landed with `code` ("OK" or an error code):
    /// counted by code, and in Go's outcome counter for it. `CANCELLED` has
    /// none (Go counts a cancelled request in none); `GATE_DROPPED` and
    /// `GATE_ERROR` count as gate decisions, as Go counts them.
    pub(crate) fn result(&self, code: &'static str) {
        count_results(&self.0, code, 1);
    }

    /// One more (or, with a negative `delta`, fewer) request in the handler.
    pub(crate) fn in_flight(&self, delta: f64) {
        self.0.in_flight.increment(delta);
    }

    /// One handler call's duration.
    pub(crate) fn inference_latency(&self, took: Duration) {
        self.0.inference_latency.record(millis(took));
    }

    /// A record landed `ms` after its request was created.
    pub(crate) fn message_latency(&self, ms: f64) {
        self.0.message_latency.record(ms.max(0.0));
    }
}

/// The sampled sizes of a queue: pending members, live claims, the dead set.
pub(crate) fn depths(queue: &str, depths: &claim_core::store::QueueDepths) {
    with_queue(queue, |q| {
        q.backlog.set(depths.pending as f64);
        q.backlog_available.set(1.0);
        q.claim_depth.set(depths.claimed as f64);
        q.dead_depth.set(depths.dead as f64);
    });
}

/// The sampled age of the head of pending (0: empty, or no `created`).
pub(crate) fn oldest_pending_age(queue: &str, age: Duration) {
    with_queue(queue, |q| q.oldest_pending_age.set(age.as_secs_f64()));
}

/// The sampled size of the retry set.
pub(crate) fn retry_depth(entries: usize) {
    metrics::gauge!(RETRY_DEPTH).set(entries as f64);
}

/// `build_info{version} 1`, set once when the recorder is installed.
#[cfg_attr(not(feature = "serve"), allow(dead_code))]
pub(crate) fn build_info() {
    metrics::gauge!(BUILD_INFO, "version" => env!("CARGO_PKG_VERSION")).set(1.0);
}

/// The depth read failed: backlog 0 and its source unavailable, as Go reports it.
pub(crate) fn depths_unavailable(queue: &str) {
    with_queue(queue, |q| {
        q.backlog.set(0.0);
        q.backlog_available.set(0.0);
    });
}

/// `n` members moved to the dead set for `reason` (one of [`DEAD_LETTER_REASONS`]).
pub(crate) fn dead_lettered(queue: &str, reason: &'static str, n: usize) {
    debug_assert!(DEAD_LETTER_REASONS.contains(&reason), "{reason}");
    with_queue(queue, |q| q.with_label(DEAD_LETTERED, "reason", reason, n));
}

/// One settlement (`op` = "ack" or "park_retry") given up on after a permanent refusal.
pub(crate) fn given_up(queue: &str, op: &'static str) {
    debug_assert!(GIVEN_UP_OPS.contains(&op), "{op}");
    with_queue(queue, |q| q.with_label(GIVEN_UP, "op", op, 1));
}

/// One store error, labelled by operation and kind (store-wide, no queue).
pub(crate) fn store_error(error: &claim_core::StoreError) {
    use claim_core::StoreError as E;
    let kind = match error {
        E::Failed { .. } => "failed",
        E::Indeterminate { .. } => "indeterminate",
        E::OutOfMemory { .. } => "out_of_memory",
        E::Rejected { .. } => "rejected",
        E::InvalidInput { .. } => "invalid_input",
    };
    metrics::counter!(STORE_ERRORS, "op" => error.op().name(), "kind" => kind).increment(1);
}

pub(crate) fn store_out_of_memory(on: bool) {
    metrics::gauge!(STORE_OUT_OF_MEMORY).set(if on { 1.0 } else { 0.0 });
}

/// Whether the queue is paused, as the consumer last read its flag.
pub(crate) fn queue_paused(queue: &str, paused: bool) {
    with_queue(queue, |q| q.paused.set(if paused { 1.0 } else { 0.0 }));
}

/// Whether the store answered the last readiness ping.
pub(crate) fn store_up(on: bool) {
    metrics::gauge!(STORE_UP).set(if on { 1.0 } else { 0.0 });
}

/// How long the writer's oldest unlanded settlement has been failing (zero when none).
pub(crate) fn writer_failing(for_: Duration) {
    metrics::gauge!(WRITER_FAILING).set(for_.as_secs_f64());
}
