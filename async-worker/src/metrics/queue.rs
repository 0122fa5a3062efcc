//! One queue's metric handles, built once per queue with its Go labels, and the process-wide table that finds them by queue name.
//!
//! Handles are registered with the recorder installed at the time: one made
//! before the recorder exists records nothing, so [`register_queue`] (which
//! the runtime calls when it is built) rebuilds them. Registering creates
//! every series of the queue (counters at 0, dead-letter reasons and
//! given-up ops included; histograms empty), so `rate()`
//! sees the first increment and a dashboard shows 0 instead of nothing.
//! Registering again never resets a value.

use super::counted::QueueCount;
use super::names::*;
use crate::config::QueueSpec;
use metrics::{Counter, Gauge, Histogram, Label, counter, gauge, histogram};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

/// The handles of one queue.
pub(super) struct QueueMetrics {
    labels: Vec<Label>,
    /// Indexed by [`QueueCount`] as `usize`.
    counts: [Counter; QueueCount::NAMES.len()],
    pub successful: Counter,
    pub failed: Counter,
    pub exceeded_deadline: Counter,
    /// Indexed by [`GateReason`] as `usize`.
    pub gate: [Counter; 4],
    pub dispatch_budget: Gauge,
    pub queue_depth: Gauge,
    pub in_flight: Gauge,
    pub backlog: Gauge,
    pub backlog_available: Gauge,
    pub claim_depth: Gauge,
    pub dead_depth: Gauge,
    pub oldest_pending_age: Gauge,
    pub paused: Gauge,
    pub inference_latency: Histogram,
    pub queue_residence: Histogram,
    pub message_latency: Histogram,
    by_code: Mutex<HashMap<&'static str, Counter>>,
}

impl QueueMetrics {
    fn new(spec: &QueueSpec) -> Self {
        let labels = vec![
            Label::new("queue_id", spec.id.clone()),
            Label::new("queue_name", spec.queue_name.clone()),
            Label::new("pool_name", spec.pool_name.clone()),
        ];
        let c = |name: &'static str| {
            let handle = counter!(name, labels.clone());
            handle.increment(0);
            handle
        };
        let g = |name: &'static str| {
            let handle = gauge!(name, labels.clone());
            handle.increment(0.0);
            handle
        };
        let h = |name: &'static str| histogram!(name, labels.clone());
        let gate = GateReason::ALL.map(|reason| {
            let mut labels = labels.clone();
            labels.push(Label::new("reason", reason.as_str()));
            let handle = counter!(GATE_DECISIONS, labels);
            handle.increment(0);
            handle
        });
        let zero = |name: &'static str, key: &'static str, values: &[&'static str]| {
            for value in values {
                let mut labels = labels.clone();
                labels.push(Label::new(key, *value));
                counter!(name, labels).increment(0);
            }
        };
        zero(DEAD_LETTERED, "reason", &DEAD_LETTER_REASONS);
        zero(GIVEN_UP, "op", &GIVEN_UP_OPS);
        QueueMetrics {
            counts: QueueCount::NAMES.map(c),
            successful: c(SUCCESSFUL),
            failed: c(FAILED),
            exceeded_deadline: c(EXCEEDED_DEADLINE),
            gate,
            // Set only for gated queues, so it is not created at 0.
            dispatch_budget: gauge!(DISPATCH_BUDGET, labels.clone()),
            queue_depth: g(QUEUE_DEPTH),
            in_flight: g(IN_FLIGHT),
            backlog: g(BROKER_BACKLOG),
            backlog_available: g(BROKER_BACKLOG_SOURCE_AVAILABLE),
            claim_depth: g(CLAIM_DEPTH),
            dead_depth: g(DEAD_DEPTH),
            oldest_pending_age: g(OLDEST_PENDING_AGE),
            paused: g(QUEUE_PAUSED),
            inference_latency: h(INFERENCE_LATENCY),
            queue_residence: h(QUEUE_RESIDENCE),
            message_latency: h(MESSAGE_LATENCY),
            by_code: Mutex::new(HashMap::new()),
            labels,
        }
    }

    /// The counter of `counter`.
    pub fn count(&self, counter: QueueCount) -> &Counter {
        &self.counts[counter as usize]
    }

    /// The `results_total` counter of `code`, made on first use.
    pub fn by_code(&self, code: &'static str) -> Counter {
        let mut codes = self.by_code.lock().unwrap_or_else(|p| p.into_inner());
        codes
            .entry(code)
            .or_insert_with(|| self.labelled(RESULTS, "code", code))
            .clone()
    }

    /// Adds `n` to `name` with the queue's labels plus `key` = `value`.
    pub fn with_label(&self, name: &'static str, key: &'static str, value: &'static str, n: usize) {
        self.labelled(name, key, value).increment(n as u64);
    }

    fn labelled(&self, name: &'static str, key: &'static str, value: &'static str) -> Counter {
        let mut labels = self.labels.clone();
        labels.push(Label::new(key, value));
        counter!(name, labels)
    }
}

type Table = RwLock<HashMap<String, Arc<QueueMetrics>>>;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(Table::default)
}

/// Builds a queue's handles with its labels and creates all its series.
/// The runtime calls it for each configured queue when it is built.
pub(crate) fn register_queue(spec: &QueueSpec) {
    // The store-wide gauges are created with the first queue's series.
    for name in [STORE_OUT_OF_MEMORY, STORE_UP, WRITER_FAILING] {
        gauge!(name).increment(0.0);
    }
    let metrics = Arc::new(QueueMetrics::new(spec));
    let mut table = table().write().unwrap_or_else(|p| p.into_inner());
    table.insert(spec.queue_name.clone(), metrics);
}

/// Creates a pool gate's decision series at 0 (Go makes them with the
/// gate): labelled by the pool, with empty queue labels.
pub(crate) fn register_pool_gate(pool: &str) {
    for reason in GateReason::ALL {
        pool_gate_counter(pool, reason).increment(0);
    }
}

/// A pool gate's decision counter for `reason`.
pub(super) fn pool_gate_counter(pool: &str, reason: GateReason) -> Counter {
    let labels = vec![
        Label::new("queue_id", ""),
        Label::new("queue_name", ""),
        Label::new("pool_name", pool.to_owned()),
        Label::new("reason", reason.as_str()),
    ];
    counter!(GATE_DECISIONS, labels)
}

/// A duration in milliseconds, as the histograms record it.
pub(super) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `record` on the handles of queue `name` (registering it with
/// default labels if it never was).
pub(super) fn with_queue(name: &str, record: impl FnOnce(&QueueMetrics)) {
    // Recorded under the read lock, without cloning the handles' Arc: the
    // hot path records several events per request.
    let table = table().read().unwrap_or_else(|p| p.into_inner());
    match table.get(name) {
        Some(found) => record(found),
        None => {
            drop(table);
            record(&handles(name));
        }
    }
}

/// One queue's handles, looked up once for many events (a request's own,
/// an answered batch's): its per-request events are methods
/// (`QueueHandle::result` and the others, in `record.rs`).
#[derive(Clone)]
pub(crate) struct QueueHandle(pub(super) Arc<QueueMetrics>);

/// The handles of queue `name` (registered with default labels if it never was).
pub(crate) fn queue_handle(name: &str) -> QueueHandle {
    QueueHandle(handles(name))
}

/// The handles of queue `name`, registered with default labels if it never was.
fn handles(name: &str) -> Arc<QueueMetrics> {
    let found = table()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .get(name)
        .cloned();
    found.unwrap_or_else(|| {
        let mut table = table().write().unwrap_or_else(|p| p.into_inner());
        table
            .entry(name.to_owned())
            .or_insert_with(|| {
                // Go leaves `pool_name` empty for a queue never registered.
                let pool_name = String::new();
                let spec = QueueSpec {
                    pool_name,
                    ..QueueSpec::new(name)
                };
                Arc::new(QueueMetrics::new(&spec))
            })
            .clone()
    })
}

/// A claimed request handed to a worker task that has not started: counted
/// in `queue_depth` until [`Buffered::picked_up`] or drop.
pub(crate) struct Buffered {
    queue: Arc<QueueMetrics>,
    since: Instant,
}

/// Counts a claimed request as buffered in-process (Go's `queue_depth`).
pub(crate) fn handed_off(queue: &str) -> Buffered {
    let queue = handles(queue);
    queue.queue_depth.increment(1.0);
    Buffered {
        queue,
        since: Instant::now(),
    }
}

impl Buffered {
    /// A worker starts the request: its residence time is recorded; the
    /// queue's handles stay with the request for its other events.
    pub fn picked_up(self) -> QueueHandle {
        let waited = millis(self.since.elapsed());
        self.queue.queue_residence.record(waited);
        QueueHandle(self.queue.clone())
    }
}

impl Drop for Buffered {
    fn drop(&mut self) {
        self.queue.queue_depth.decrement(1.0);
    }
}
