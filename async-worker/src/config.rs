//! Runtime settings: which queues to drain and how hard.

use std::time::Duration;

/// The worker pool a queue belongs to when its config names none (Go's `default`).
pub const DEFAULT_POOL: &str = "default";

/// One queue the runtime drains (a `queues[]` entry of the transport config).
#[derive(Debug, Clone, PartialEq)]
pub struct QueueSpec {
    /// The queue's id (Go: `id`); labels metrics and logs.
    pub id: String,
    /// The pending sorted set (Go: `queue_name`).
    pub queue_name: String,
    /// Result list override (Go: queue `result_queue_name`).
    pub result_queue_name: Option<String>,
    /// `EXPIRE` set on the result list after each push, in seconds (Go:
    /// queue `result_ttl_seconds`); `None` sets no expiry.
    pub result_ttl_seconds: Option<u64>,
    /// The worker pool the queue belongs to (Go: `worker_pool_id`, default
    /// `default`); labels metrics as `pool_name`.
    pub pool_name: String,
}

impl QueueSpec {
    pub fn new(queue_name: impl Into<String>) -> Self {
        let queue_name = queue_name.into();
        QueueSpec {
            id: queue_name.clone(),
            queue_name,
            result_queue_name: None,
            result_ttl_seconds: None,
            pool_name: DEFAULT_POOL.to_owned(),
        }
    }
}

/// How the runtime works. Lease TTL, dedup TTL and the delivery limit belong
/// to the store's [`claim_core::store::StoreConfig`].
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    pub queues: Vec<QueueSpec>,
    /// Requests handled at once.
    pub concurrency: usize,
    /// Peek/claim batch size per poll.
    pub batch_size: usize,
    /// Pause between polls when the last batch was not full.
    pub poll_interval: Duration,
    /// Upper bound of one handler call (the deadline bounds it too).
    pub request_timeout: Duration,
    /// How long shutdown waits for in-flight work before cancelling it.
    pub drain_timeout: Duration,
    /// How often expired claims are scanned for redelivery.
    pub reclaim_interval: Duration,
    /// How often due retries are promoted.
    pub promote_interval: Duration,
    /// Terminal records per ack call at most.
    pub ack_batch_size: usize,
    /// Result list when neither the queue nor the member names one.
    pub default_result_list: String,
    /// How often each queue's backlog (pending members) and claim depth are
    /// read into gauges (Go: `--metrics-backlog-poll-interval`, 15 s); zero
    /// turns the reads off and those gauges stay unset.
    pub backlog_poll_interval: Duration,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            queues: vec![QueueSpec::new(claim_core::wire::DEFAULT_QUEUE)],
            concurrency: 64,
            batch_size: 10,
            poll_interval: Duration::from_millis(1000),
            request_timeout: Duration::from_secs(300),
            drain_timeout: Duration::from_secs(120),
            reclaim_interval: Duration::from_millis(15_000),
            promote_interval: Duration::from_millis(1000),
            ack_batch_size: 256,
            default_result_list: claim_core::wire::DEFAULT_RESULT_LIST.to_owned(),
            backlog_poll_interval: Duration::from_secs(15),
        }
    }
}

impl RuntimeConfig {
    /// Checks the settings, naming the first bad one and its fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.queues.is_empty() {
            return Err("no queues configured: add at least one entry to queues[]".into());
        }
        for (what, value) in [
            ("concurrency", self.concurrency),
            ("batch_size", self.batch_size),
            ("ack batch size", self.ack_batch_size),
        ] {
            if value == 0 {
                return Err(format!("{what} is 0: it must be at least 1"));
            }
        }
        for (what, value) in [
            ("poll_interval_ms", self.poll_interval),
            ("request timeout", self.request_timeout),
            ("claim_reclaim_interval_ms", self.reclaim_interval),
            ("promote interval", self.promote_interval),
        ] {
            if value.is_zero() {
                return Err(format!("{what} is zero: give it a positive duration"));
            }
        }
        Ok(())
    }
}
