//! Runtime settings: which queues to drain and how hard, and the typed error naming a bad one.

use std::collections::{BTreeMap, BTreeSet};
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
    /// Result list override (Go: queue `result_queue_name`). The store's
    /// [`StoreConfig`](claim_core::store::StoreConfig) is the one source of
    /// routing (`queue_result_lists`): leave this `None` and the runtime's
    /// builder fills it from there; a value that differs is refused
    /// ([`BuildError::RouteDisagrees`]), so handler records and the store's
    /// own `DELIVERY_LIMIT` records always share a list.
    pub result_queue_name: Option<String>,
    /// `EXPIRE` set on the result list after each push, in seconds (Go:
    /// queue `result_ttl_seconds`); `None` sets no expiry. Like the list,
    /// it comes from the store's `queue_result_ttls`; a value that differs
    /// is refused.
    pub result_ttl_seconds: Option<u64>,
    /// The worker pool the queue belongs to (Go: `worker_pool_id`, default
    /// `default`); labels metrics as `pool_name`.
    pub pool_name: String,
    /// Static labels (Go: queue `labels`), merged under each request's own
    /// `internal.labels` before its gates read them.
    pub labels: BTreeMap<String, String>,
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
            labels: BTreeMap::new(),
        }
    }
}

/// A worker pool (Go: a `--pool-config-file` entry): its queues' requests
/// share its `workers`, and its pool gate, if any, runs in those workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolSpec {
    pub name: String,
    pub workers: usize,
}

impl PoolSpec {
    pub fn new(name: impl Into<String>, workers: usize) -> Self {
        PoolSpec {
            name: name.into(),
            workers,
        }
    }
}

impl From<&str> for QueueSpec {
    /// The queue of that name, with no overrides.
    fn from(queue_name: &str) -> Self {
        QueueSpec::new(queue_name)
    }
}

/// How the runtime works. Lease TTL, dedup TTL, the delivery limit and the
/// result routing (default list, per-queue lists and TTLs) belong to the
/// store's [`claim_core::store::StoreConfig`].
#[derive(Debug, Clone, PartialEq)]
pub struct RuntimeConfig {
    pub queues: Vec<QueueSpec>,
    /// Requests handled at once, when no pools are listed: the implicit
    /// `default` pool's workers.
    pub concurrency: usize,
    /// Worker pools (Go: `--pool-config-file`). Empty: one pool, `default`,
    /// with `concurrency` workers. Otherwise only these pools exist and
    /// every queue's `pool_name` must be one of them.
    pub pools: Vec<PoolSpec>,
    /// How long a pool gate's `Wait` may park a request before it is
    /// requeued (Go: `--gate-wait-timeout`, 5 m); zero: only the request's
    /// deadline bounds the wait.
    pub gate_wait_timeout: Duration,
    /// Orders claiming inside each pool by the queues' tier (Go's
    /// `tier-priority` merge policy): the label naming the tier
    /// (`interactive`, `async`, else batch). `None`: no order (Go's
    /// `random-robin`).
    pub tier_label: Option<String>,
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
            pools: Vec::new(),
            gate_wait_timeout: Duration::from_secs(300),
            tier_label: None,
            batch_size: 10,
            poll_interval: Duration::from_millis(1000),
            request_timeout: Duration::from_secs(300),
            drain_timeout: Duration::from_secs(120),
            reclaim_interval: Duration::from_millis(15_000),
            promote_interval: Duration::from_millis(1000),
            ack_batch_size: 256,
            backlog_poll_interval: Duration::from_secs(15),
        }
    }
}

impl RuntimeConfig {
    /// Checks the settings, naming the first bad one and its fix.
    pub fn validate(&self) -> Result<(), BuildError> {
        if self.queues.is_empty() {
            return Err(BuildError::NoQueues);
        }
        for (setting, value) in [
            ("concurrency", self.concurrency),
            ("batch_size", self.batch_size),
            ("ack batch size", self.ack_batch_size),
        ] {
            if value == 0 {
                return Err(BuildError::Zero { setting });
            }
        }
        for (setting, value) in [
            ("poll_interval_ms", self.poll_interval),
            ("request timeout", self.request_timeout),
            ("claim_reclaim_interval_ms", self.reclaim_interval),
            ("promote interval", self.promote_interval),
        ] {
            if value.is_zero() {
                return Err(BuildError::ZeroDuration { setting });
            }
        }
        self.validate_pools()
    }

    /// The pools requests run in: those listed, or the implicit `default`
    /// with `concurrency` workers.
    pub fn worker_pools(&self) -> Vec<PoolSpec> {
        if self.pools.is_empty() {
            vec![PoolSpec::new(DEFAULT_POOL, self.concurrency)]
        } else {
            self.pools.clone()
        }
    }

    /// Workers over every pool: requests handled at once.
    pub fn total_workers(&self) -> usize {
        self.worker_pools().iter().map(|p| p.workers).sum()
    }

    fn validate_pools(&self) -> Result<(), BuildError> {
        let mut names = BTreeSet::new();
        for (index, pool) in self.pools.iter().enumerate() {
            if pool.name.is_empty() {
                return Err(BuildError::PoolUnnamed { index });
            }
            if pool.workers == 0 {
                return Err(BuildError::PoolWithoutWorkers {
                    pool: pool.name.clone(),
                });
            }
            if !names.insert(pool.name.as_str()) {
                return Err(BuildError::DuplicatePool {
                    pool: pool.name.clone(),
                });
            }
        }
        let pools = self.worker_pools();
        for spec in &self.queues {
            if !pools.iter().any(|p| p.name == spec.pool_name) {
                return Err(BuildError::UnknownPool {
                    queue: spec.id.clone(),
                    pool: spec.pool_name.clone(),
                });
            }
        }
        Ok(())
    }
}

/// Why a runtime cannot be built: the bad setting, and its fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("no queues configured: add at least one entry to queues[] (the builder's .queue(..))")]
    NoQueues,
    #[error("{setting} is 0: it must be at least 1")]
    Zero { setting: &'static str },
    #[error("{setting} is zero: give it a positive duration")]
    ZeroDuration { setting: &'static str },
    #[error("no handler: give the builder one with .handler(..)")]
    NoHandler,
    #[error("pool config at index {index} has an empty ID: give every pool an id")]
    PoolUnnamed { index: usize },
    #[error("pool {pool:?} must have at least 1 worker")]
    PoolWithoutWorkers { pool: String },
    #[error("duplicate pool ID found: {pool:?}: give each pool its own id")]
    DuplicatePool { pool: String },
    #[error(
        "worker pool {pool:?} specified in queue config not found in pool configuration \
         (queue {queue}): list the pool, or set the queue's worker_pool_id to a listed one"
    )]
    UnknownPool { queue: String, pool: String },
    /// A gate given for a queue id or pool nobody configured.
    #[error(
        "a {kind} gate was given for {name:?}, which is not a configured {kind}: check the name"
    )]
    GateForNothing { kind: &'static str, name: String },
    /// A queue spec names routing the store does not: the store would write
    /// its own records (`DELIVERY_LIMIT`) elsewhere than the runtime's.
    #[error(
        "queue {queue}: {setting} is {runtime} in its QueueSpec but {store} in the store's \
         StoreConfig: routing has one source, the store's config; set it there and leave \
         the QueueSpec's None"
    )]
    RouteDisagrees {
        queue: String,
        setting: &'static str,
        runtime: String,
        store: String,
    },
}
