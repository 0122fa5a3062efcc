//! The memory-store rig of the runtime, isolation, counter and payload-reference tests: a runtime over a `FaultyStore`, paused time, submit and read back.
#![allow(dead_code)]

use super::faulty::FaultyStore;
use async_worker::runtime::Health;
use claim_core::ClaimInspect;
use claim_core::ListReads;

use async_trait::async_trait;
use async_worker::{
    Handler, HandlerOutcome, QueueSpec, Request, RunReport, Runtime, RuntimeConfig, TokioClock,
};
use claim_core::store::StoreConfig;
use claim_core::wire::{Envelope, ErrorCode};
use claim_core::{ClaimProducer, Millis};
use claim_memory::MemoryStore;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub const A: &str = "queue-a";
pub const B: &str = "queue-b";
pub const RESULTS: &str = "results";
pub const POISON_LIST: &str = "poison-list";
pub const START: Millis = Millis(1_700_000_000_000);
pub const LEASE: Duration = Duration::from_secs(30);
pub const DRAIN: Duration = Duration::from_secs(10);

/// Answers every request at once, except `slow-*` (20 s) and `hang-*` (until stopped).
pub struct Answering;

#[async_trait]
impl Handler for Answering {
    async fn handle(&self, request: &Request, cancel: CancellationToken) -> HandlerOutcome {
        let id = request.generation.id.as_str();
        if id.starts_with("hang") {
            cancel.cancelled().await;
            return HandlerOutcome::error(ErrorCode::InferenceError, "stopped");
        }
        if id.starts_with("slow") {
            tokio::time::sleep(Duration::from_secs(20)).await;
        }
        HandlerOutcome::Success {
            status: 200,
            body: format!("answer to {id}"),
        }
    }
}

pub struct Setup {
    pub memory: MemoryStore,
    pub store: FaultyStore,
    pub clock: Arc<TokioClock>,
}

pub fn setup() -> Setup {
    let clock = Arc::new(TokioClock::starting_at(START));
    let config = StoreConfig {
        lease_ttl_ms: LEASE.as_millis() as u64,
        max_deliveries: 2,
        default_result_list: RESULTS.into(),
        ..StoreConfig::default()
    };
    Setup::over(MemoryStore::with_clock(config, clock.clone()), clock)
}

impl Setup {
    /// The rig over `memory` (on `clock`), wrapped in a harmless `FaultyStore`.
    pub fn over(memory: MemoryStore, clock: Arc<TokioClock>) -> Setup {
        Setup {
            store: FaultyStore::new(memory.clone()),
            memory,
            clock,
        }
    }
}

/// A memory store with a 30 s lease and `results` for members that name no
/// result list, on a clock at [`START`] that follows tokio's paused time.
pub fn paused_memory(results: &str) -> (MemoryStore, Arc<TokioClock>) {
    paused_memory_over(StoreConfig {
        lease_ttl_ms: 30_000,
        default_result_list: results.into(),
        ..StoreConfig::default()
    })
}

/// [`paused_memory`] whose config also routes `queue`'s records to
/// `results` with list TTL `ttl` (queue config `result_queue_name` and
/// `result_ttl_seconds`): the runtime takes its routing from there.
pub fn paused_memory_routed(
    results: &str,
    queue: &str,
    ttl: Option<u64>,
) -> (MemoryStore, Arc<TokioClock>) {
    paused_memory_over(StoreConfig {
        lease_ttl_ms: 30_000,
        default_result_list: results.into(),
        queue_result_lists: [(queue.to_owned(), results.to_owned())].into(),
        queue_result_ttls: ttl.map(|t| (queue.to_owned(), t)).into_iter().collect(),
        ..StoreConfig::default()
    })
}

fn paused_memory_over(config: StoreConfig) -> (MemoryStore, Arc<TokioClock>) {
    let clock = Arc::new(TokioClock::starting_at(START));
    (MemoryStore::with_clock(config, clock.clone()), clock)
}

/// The runtime settings of the memory-store tests: `queues`, 8 workers,
/// batches of 10, a 100 ms poll, a 5 s reclaim interval, the [`DRAIN`]
/// timeout (the store's config routes the records).
pub fn runtime_config(queues: Vec<QueueSpec>) -> RuntimeConfig {
    RuntimeConfig {
        queues,
        concurrency: 8,
        batch_size: 10,
        poll_interval: Duration::from_millis(100),
        reclaim_interval: Duration::from_secs(5),
        drain_timeout: DRAIN,
        ..RuntimeConfig::default()
    }
}

/// A runtime over the faulty store draining `queues` (no result list override: members name theirs).
pub fn runtime(s: &Setup, queues: &[&str]) -> Runtime {
    let specs = queues.iter().map(|q| QueueSpec::new(*q)).collect();
    let config = runtime_config(specs);
    Runtime::builder(Arc::new(s.store.clone()))
        .handler(Arc::new(Answering))
        .config(config)
        .clock(s.clock.clone())
        .build()
        .expect("valid runtime settings")
}

/// Submits request `id` to `queue`, its record aimed at `list`.
pub async fn submit(s: &Setup, queue: &str, id: &str, list: &str) {
    submit_due(s, queue, id, list, 3600).await;
}

/// Submits request `id` to `queue`, its record aimed at `list`, its
/// deadline `deadline_in_secs` after [`START`].
pub async fn submit_due(s: &Setup, queue: &str, id: &str, list: &str, deadline_in_secs: i64) {
    let deadline = (START.0 / 1000) as i64 + deadline_in_secs;
    let mut envelope = Envelope::new(id, format!("tok-{id}"), deadline, serde_json::json!({}));
    envelope.internal.result_queue_name = list.into();
    s.memory
        .submit(queue, &envelope.submission())
        .await
        .unwrap();
}

/// The ids with a record in `list`, one entry per record.
pub async fn answered(s: &Setup, list: &str) -> Vec<String> {
    ids_on(&s.memory, list).await
}

/// The ids with a record in `list` of `memory`, sorted, one entry per record.
pub async fn ids_on(memory: &MemoryStore, list: &str) -> Vec<String> {
    let mut ids: Vec<String> = (records_on(memory, list).await.iter())
        .map(|v| v["id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// The records in `list` of `memory`, as JSON, in list order.
pub async fn records_on(memory: &MemoryStore, list: &str) -> Vec<serde_json::Value> {
    (memory.results(list).await.unwrap().iter())
        .map(|r| serde_json::from_slice(r.as_bytes()).unwrap())
        .collect()
}

/// Submits `ids(prefix, n)` to `queue`, their records aimed at [`RESULTS`].
pub async fn submit_numbered(s: &Setup, queue: &str, prefix: &str, n: usize) {
    for id in ids(prefix, n) {
        submit(s, queue, &id, RESULTS).await;
    }
}

/// Submits request `bad_id` (its record aimed at `bad_list`) and then `n`
/// ordinary requests `ok-*` to queue [`A`], and starts a runtime on it.
pub async fn start_with_one_bad(
    s: &Setup,
    bad_id: &str,
    bad_list: &str,
    n: usize,
) -> (CancellationToken, JoinHandle<RunReport>) {
    submit(s, A, bad_id, bad_list).await;
    submit_numbered(s, A, "ok", n).await;
    start(runtime(s, &[A]))
}

/// Waits (paused time, within `bound`) until [`RESULTS`] holds `n` records.
pub async fn records_within(s: &Setup, bound: Duration, what: &str, n: usize) {
    within(bound, what, async || answered(s, RESULTS).await.len() == n).await;
}

/// Asserts `queue` holds `pending` members and no claim.
pub async fn assert_pending_and_unclaimed(s: &Setup, queue: &str, pending: usize) {
    let depths = s.memory.depths(queue).await.unwrap();
    assert_eq!(
        (depths.pending, depths.claimed),
        (pending, 0),
        "nothing else left: {depths:?}"
    );
}

/// Waits (paused time, within `bound`) until readiness is `ready`.
pub async fn readiness_within(health: &Health, bound: Duration, ready: bool) {
    let what = if ready { "readiness" } else { "not ready" };
    within(bound, what, async || health.is_ready() == ready).await;
}

/// A runtime over the faulty store draining `queues`, started, with its health.
pub fn start_watched(
    s: &Setup,
    queues: &[&str],
) -> (Health, CancellationToken, JoinHandle<RunReport>) {
    let rt = runtime(s, queues);
    let health = rt.health();
    let (token, handle) = start(rt);
    (health, token, handle)
}

pub fn ids(prefix: &str, n: usize) -> Vec<String> {
    let mut ids: Vec<String> = (0..n).map(|i| format!("{prefix}-{i:02}")).collect();
    ids.sort();
    ids
}

/// Polls (in paused time) until `done` holds, failing after `bound`.
pub async fn within(bound: Duration, what: &str, mut done: impl AsyncFnMut() -> bool) {
    let started = Instant::now();
    while !done().await {
        assert!(started.elapsed() < bound, "no {what} within {bound:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub fn start(rt: Runtime) -> (CancellationToken, JoinHandle<RunReport>) {
    let token = CancellationToken::new();
    let handle = tokio::spawn(rt.run(token.clone()));
    (token, handle)
}

/// Shuts down and asserts the run ends within the drain timeout plus 10 s.
pub async fn stop_within_bound(
    token: CancellationToken,
    handle: JoinHandle<RunReport>,
) -> RunReport {
    token.cancel();
    tokio::time::timeout(DRAIN + Duration::from_secs(10), handle)
        .await
        .expect("shutdown ends within the drain timeout plus 10 s")
        .unwrap()
}
