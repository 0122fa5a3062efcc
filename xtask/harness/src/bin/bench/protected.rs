//! Runs of the real runtime (`protected`, `protected×3`, `memory`, `protected-cluster`): drain, steady-rate latency, and a hold with work in flight.

use crate::counting::{Counting, Counts, Latency};
use crate::server::Delta;
use crate::target::Target;
use crate::{Hold, NoOp, Settings, send_at_rate, sorted_micros};
use async_worker::{Handler, QueueSpec, Runtime, RuntimeConfig};
use claim_core::store::{StoreConfig, Submission};
use claim_core::{ClaimProducer, ClaimStore, Generation, Store};
use claim_memory::MemoryStore;
use claim_redis::RedisStore;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Where the runtime's store lives.
#[derive(Clone)]
pub enum Backend {
    /// One server, or a private cluster's primaries.
    Redis(Arc<Target>),
    /// One memory store per phase, created by the phase.
    Memory,
}

/// A drain's figures.
pub struct Drain {
    pub jobs: u64,
    pub elapsed: Duration,
    /// CPU this process spent during the drain.
    pub worker_cpu_s: f64,
    /// Share of the whole machine's CPU that was busy during the drain
    /// (this process, Redis and everything else running).
    pub machine_busy: f64,
    /// Claims held (claimed, not yet acked), sampled every millisecond, sorted.
    pub in_flight: Vec<u64>,
    pub counts: Arc<Counts>,
    /// Every node's figures, summed.
    pub delta: Option<Delta>,
    /// A cluster's primaries, each on its own (empty on one server).
    pub by_primary: Vec<Primary>,
    /// Payload keys still stored after a drain by reference (each ack
    /// deletes its own): must be 0.
    pub payload_keys_left: Option<u64>,
}

/// What one primary of a cluster did during the drain.
pub struct Primary {
    pub port: u16,
    /// Requests of the queues it holds.
    pub jobs: u64,
    pub delta: Delta,
}

/// What the hold phase saw with work in flight.
pub struct Held {
    pub rss_kib: u64,
    /// Bytes of claim bookkeeping per in-flight claim (`MEMORY USAGE`).
    pub claim_bytes: Option<f64>,
    /// The same, per key: claimed, claim-owners, claims-idx.
    pub claim_bytes_by_key: Option<[f64; 3]>,
}

impl Backend {
    async fn fresh_store(&self) -> Arc<dyn Store> {
        match self {
            Backend::Redis(target) => Arc::new(
                RedisStore::connect(target.store_options())
                    .await
                    .expect("connect"),
            ),
            Backend::Memory => Arc::new(MemoryStore::new(StoreConfig::default())),
        }
    }

    pub async fn flush(&self) {
        if let Backend::Redis(target) = self {
            target.flush().await;
        }
    }

    /// Enqueues `seqs` (Go-style on Redis), marking each one's enqueue time.
    async fn enqueue(
        &self,
        set: &Settings,
        store: &dyn ClaimProducer,
        seqs: std::ops::Range<usize>,
        latency: Option<&Latency>,
    ) {
        let deadline = async_worker::clock::unix_now() + set.deadline_secs;
        let mark = |seq| {
            if let Some(l) = latency {
                l.mark_enqueued(seq)
            }
        };
        match self {
            Backend::Redis(target) => target
                .enqueue(seqs, deadline, set.payloads, mark)
                .await
                .expect("enqueue"),
            Backend::Memory => {
                for seq in seqs {
                    let (member, payload) = crate::members::member(seq, deadline, set.payloads);
                    let submission = Submission {
                        member: member.into(),
                        generation: Generation::new(crate::id_of(seq), crate::token_of(seq)),
                        deadline,
                        payload: payload.map(Into::into),
                    };
                    mark(seq);
                    store.submit(&set.queue, &submission).await.expect("submit");
                }
            }
        }
    }
}

pub fn config(set: &Settings, backend: &Backend, concurrency: usize) -> RuntimeConfig {
    let queues = match backend {
        Backend::Redis(target) => target.queue_specs(),
        Backend::Memory => vec![QueueSpec::new(set.queue.clone())],
    };
    RuntimeConfig {
        queues,
        concurrency,
        batch_size: set.batch,
        ack_batch_size: set.ack_batch,
        poll_interval: set.poll,
        ..RuntimeConfig::default()
    }
}

pub fn start(
    store: Arc<dyn ClaimStore>,
    handler: Arc<dyn Handler>,
    config: RuntimeConfig,
    stop: &CancellationToken,
) -> JoinHandle<async_worker::RunReport> {
    let runtime = Runtime::builder(store)
        .handler(handler)
        .config(config)
        .build()
        .expect("the bench's runtime settings are valid");
    tokio::spawn(runtime.run(stop.clone()))
}

pub async fn wait_for(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < limit,
            "bench: {what} did not finish within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Drains `set.requests` enqueued before the clock starts, with `replicas` runtimes.
pub async fn drain(set: &Settings, backend: &Backend, replicas: usize) -> Drain {
    backend.flush().await;
    let stores = counting_stores(backend, replicas).await;
    backend
        .enqueue(set, stores[0].as_ref(), 0..set.requests, None)
        .await;
    timed_drain(set, backend, &stores).await
}

/// A fresh store per runtime, each counted into one shared [`Counts`].
pub async fn counting_stores(backend: &Backend, replicas: usize) -> Vec<Arc<Counting>> {
    let counts = Arc::new(Counts::default());
    let mut stores = Vec::new();
    for _ in 0..replicas {
        let inner = backend.fresh_store().await;
        stores.push(Arc::new(Counting::new(inner, counts.clone())));
    }
    stores
}

/// Starts a runtime over each of `stores` (sharing one [`Counts`]) and
/// times them until `set.requests` records are pushed: whatever the queue
/// holds by then, and whatever else runs meanwhile (a refilling producer).
pub async fn timed_drain(set: &Settings, backend: &Backend, stores: &[Arc<Counting>]) -> Drain {
    let counts = stores[0].counts.clone();
    let target = match backend {
        Backend::Redis(target) => Some(target.clone()),
        Backend::Memory => None,
    };
    let before = match &target {
        Some(t) => {
            t.reset_stats().await;
            Some(t.snapshots().await)
        }
        None => None,
    };
    let stop = CancellationToken::new();
    // A profiler can start at this line (`perf record -p`).
    eprintln!("bench: drain clock started");
    let cpu = crate::cpu_seconds();
    let machine = crate::machine_jiffies();
    let started = Instant::now();
    let runs: Vec<_> = stores
        .iter()
        .map(|s| {
            start(
                s.clone(),
                Arc::new(NoOp),
                config(set, backend, set.concurrency),
                &stop,
            )
        })
        .collect();
    let jobs = set.requests as u64;
    let held = std::cell::RefCell::new(Vec::new());
    wait_for("the drain", Duration::from_secs(240), || {
        let pushed = Counts::get(&counts.pushed);
        held.borrow_mut()
            .push(Counts::get(&counts.claimed).saturating_sub(pushed));
        pushed >= jobs
    })
    .await;
    let elapsed = started.elapsed();
    let worker_cpu_s = crate::cpu_seconds() - cpu;
    let (busy, total) = crate::machine_jiffies();
    let machine_busy = (busy - machine.0) as f64 / (total - machine.1).max(1) as f64;
    let mut in_flight = held.into_inner();
    in_flight.sort_unstable();
    let deltas = match (&target, before) {
        (Some(t), Some(before)) => Target::deltas(&before, &t.snapshots().await),
        _ => Vec::new(),
    };
    let delta = deltas.iter().fold(None, |sum: Option<Delta>, d| {
        let mut sum = sum.unwrap_or_default();
        sum.add(d);
        Some(sum)
    });
    let by_primary = match &target {
        Some(t) if t.is_cluster() => {
            let jobs = t.jobs_by_node(set.requests);
            t.nodes
                .iter()
                .zip(jobs)
                .zip(deltas)
                .map(|((node, jobs), delta)| Primary {
                    port: node.port,
                    jobs,
                    delta,
                })
                .collect()
        }
        _ => Vec::new(),
    };
    let payload_keys_left = match &target {
        Some(t) if set.payloads.by_reference => Some(t.count_keys("request-payload:*").await),
        _ => None,
    };
    stop.cancel();
    for run in runs {
        run.await.expect("runtime");
    }
    Drain {
        payload_keys_left,
        jobs,
        elapsed,
        worker_cpu_s,
        machine_busy,
        in_flight,
        counts,
        delta,
        by_primary,
    }
}

/// Enqueue→result latencies (µs, sorted) at a steady arrival rate.
pub async fn latency(set: &Settings, backend: &Backend, rate: f64) -> Vec<u32> {
    backend.flush().await;
    let count = ((rate * set.latency_secs) as usize).clamp(1, set.requests);
    let counts = Arc::new(Counts {
        latency: Some(Latency::new(count)),
        ..Counts::default()
    });
    let store = Arc::new(Counting::new(backend.fresh_store().await, counts.clone()));
    let stop = CancellationToken::new();
    let run = start(
        store.clone(),
        Arc::new(NoOp),
        config(set, backend, set.concurrency),
        &stop,
    );
    let latency = counts.latency.as_ref().expect("latency");
    send_at_rate(count, rate, async |due| {
        backend
            .enqueue(set, store.as_ref(), due, Some(latency))
            .await
    })
    .await;
    wait_for("the latency phase", Duration::from_secs(120), || {
        Counts::get(&counts.pushed) >= count as u64
    })
    .await;
    stop.cancel();
    run.await.expect("runtime");
    sorted_micros(latency)
}

/// `hold_pending` requests stay pending while `hold_inflight` are held by
/// a handler that waits: the worker's RSS and Redis's bytes per claim.
pub async fn hold(set: &Settings, backend: &Backend) -> Held {
    backend.flush().await;
    let store = backend.fresh_store().await;
    let total = set.hold_pending + set.hold_inflight;
    backend.enqueue(set, store.as_ref(), 0..total, None).await;
    let handler = Arc::new(Hold::default());
    let stop = CancellationToken::new();
    let run = start(
        store,
        handler.clone(),
        config(set, backend, set.hold_inflight),
        &stop,
    );
    wait_for("the hold phase", Duration::from_secs(120), || {
        handler.entered.load(Ordering::Relaxed) >= set.hold_inflight
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rss_kib = crate::rss_kib();
    let claim_bytes_by_key = match backend {
        Backend::Redis(target) => Some(claim_bytes(target).await),
        Backend::Memory => None,
    };
    let claim_bytes = claim_bytes_by_key.map(|b| b.iter().sum());
    stop.cancel();
    handler.release.cancel();
    run.await.expect("runtime");
    Held {
        rss_kib,
        claim_bytes,
        claim_bytes_by_key,
    }
}

/// Bytes per in-flight claim of the claimed, claim-owners and claims-idx
/// keys (`MEMORY USAGE`), over every queue, each read on its node.
async fn claim_bytes(target: &Target) -> [f64; 3] {
    let mut claims = 0;
    let mut bytes = [0u64; 3];
    for (i, queue) in target.queues.iter().enumerate() {
        let admin = &target.nodes[queue.node].admin;
        let q = target.queue_keys(i);
        claims += admin.hlen(&q.owners).await.expect("HLEN");
        for (k, key) in [q.claimed, q.owners, q.index].into_iter().enumerate() {
            bytes[k] += admin.memory_usage(&[key]).await.expect("MEMORY USAGE");
        }
    }
    bytes.map(|b| b as f64 / claims.max(1) as f64)
}
