//! The `flow` run: how much of an inference pool's spare capacity a batch backlog behind the runtime takes, and what that costs interactive users of the same pool.
//!
//! A stand-in pool ([`pool`]) serves [`SLOTS`] requests at once for
//! [`SERVICE`] each, the rest waiting in its FIFO. Interactive users
//! ([`interactive`]) send Poisson arrivals straight to it at half its
//! capacity. A batch backlog of [`BACKLOG`] requests waits on the bench's
//! redis-server behind the runtime (RedisStore, the HttpHandler posting to
//! the pool, [`CONCURRENCY`] workers). Each scenario runs for [`WARMUP`]
//! and is then measured for [`WINDOW`]: `no-batch` (interactive only),
//! `ungated`, `endpoint-scrape` as a queue gate and, wrapped in
//! `wait-on-refuse`, as a pool gate (scraping the pool's
//! `vllm:num_requests_waiting`, closed when anything waits), as a queue
//! gate on `vllm:num_requests_running` keeping one slot free,
//! `prometheus-budget` as a queue gate over a private Prometheus scraping
//! the pool every second, and `aimd` when the factory has it. The goal:
//! pool utilization ≥ 0.9 with interactive p99 wait ≤ 1.2× `no-batch`'s.

mod interactive;
mod pool;
mod prometheus;
mod report;

use crate::Settings;
use crate::members::Payloads;
use crate::target::Target;
use async_worker::gate::factory::{self, GATE_TYPES};
use async_worker::gate::{DispatchGate, GateEnv, GateOwner};
use async_worker::http_handler::{HttpHandler, HttpTarget};
use async_worker::{PoolSpec, RunReport, Runtime, RuntimeConfig, config::DEFAULT_POOL};
use claim_redis::RedisStore;
use pool::{BATCH_PATH, POOL_NAME, Pool, WindowFigures};
use prometheus::Prometheus;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Requests the pool serves at once.
pub const SLOTS: usize = 8;
/// How long the pool takes per request.
pub const SERVICE: Duration = Duration::from_millis(20);
/// Batch requests enqueued per scenario: more than a scenario can drain
/// (the pool serves at most `SLOTS / SERVICE` = 400/s).
pub const BACKLOG: usize = 20_000;
/// The runtime's workers: twice the pool's slots, so an ungated runtime
/// keeps the pool's queue full.
pub const CONCURRENCY: usize = 2 * SLOTS;
/// Members claimed per poll by the gates whose budget is all or nothing
/// (`endpoint-scrape` on the waiting count): one, so an open gate lets
/// work in a request at a time and reads the pool again before the next.
pub const SINGLE: usize = 1;
/// Members claimed per poll by the rest: the pool's slots, so a budget `b`
/// claims `floor(SLOTS × b)`, the free slots a budget gate reports.
pub const BATCH: usize = SLOTS;
/// Pause between polls when a poll claimed less than a batch (a closed gate).
pub const POLL: Duration = Duration::from_millis(5);
/// The metric gates' cache TTL (`--prometheus-cache-ttl`; Go's default is
/// 5 s): off, so every decision reads the pool (or Prometheus) afresh;
/// any TTL is time the gate admits on a stale count.
pub const CACHE_TTL: Duration = Duration::ZERO;
pub const WARMUP: Duration = Duration::from_secs(2);
pub const WINDOW: Duration = Duration::from_secs(10);
/// How long the pool may take to empty after a scenario stops.
const IDLE_BOUND: Duration = Duration::from_secs(30);

/// Where a scenario's gate runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    Queue,
    Pool,
}

/// A scenario's gate: its place, type and params (as a config would give them).
#[derive(Debug)]
struct GateSpec {
    placement: Placement,
    gate_type: &'static str,
    params: Value,
}

#[derive(Debug)]
struct Scenario {
    name: &'static str,
    /// Whether the batch backlog and the runtime run.
    batch: bool,
    /// The runtime's members per poll.
    batch_size: usize,
    gate: Option<GateSpec>,
}

/// What one scenario measured, or why it did not run.
#[derive(Debug)]
pub struct Outcome {
    pub name: &'static str,
    pub gate: String,
    pub measured: Result<Measured, String>,
}

#[derive(Debug)]
pub struct Measured {
    pub figures: WindowFigures,
    pub interactive_sent: u64,
    pub interactive_failed: u64,
    /// Batch requests still pending when the scenario stopped (must be > 0:
    /// the backlog never ran dry).
    pub backlog_left: Option<u64>,
}

fn scenarios(pool_url: &str) -> Vec<Scenario> {
    let scrape = json!({
        "url": format!("{pool_url}/metrics"),
        "metric": "vllm:num_requests_waiting",
        // One waiting request is the whole maximum: budget 0, closed.
        "max_count_per_pod": "1",
    });
    let gated = |name, batch_size, placement, gate_type, params| Scenario {
        name,
        batch: true,
        batch_size,
        gate: Some(GateSpec {
            placement,
            gate_type,
            params,
        }),
    };
    vec![
        Scenario {
            name: "no-batch",
            batch: false,
            batch_size: BATCH,
            gate: None,
        },
        Scenario {
            name: "ungated",
            batch: true,
            batch_size: BATCH,
            gate: None,
        },
        gated(
            "endpoint-scrape",
            SINGLE,
            Placement::Queue,
            "endpoint-scrape",
            scrape.clone(),
        ),
        gated(
            "endpoint-scrape-pool",
            BATCH,
            Placement::Pool,
            "wait-on-refuse",
            json!({ "gate": { "gate_type": "endpoint-scrape", "gate_params": scrape } }),
        ),
        gated(
            "endpoint-scrape-running",
            BATCH - 1,
            Placement::Queue,
            "endpoint-scrape",
            json!({
                "url": format!("{pool_url}/metrics"),
                "metric": "vllm:num_requests_running",
                // Closed at all slots but one busy: the last is kept free.
                "max_count_per_pod": (SLOTS - 1).to_string(),
            }),
        ),
        gated(
            "prometheus-budget",
            BATCH,
            Placement::Queue,
            "prometheus-budget",
            json!({
                "pool": POOL_NAME,
                "max_concurrency": SLOTS.to_string(),
                "baseline": "0.05",
            }),
        ),
        gated(
            "aimd",
            BATCH,
            Placement::Pool,
            "wait-on-refuse",
            json!({ "gate": { "gate_type": "aimd", "gate_params": {
                "min_window": "1",
                "max_window": CONCURRENCY.to_string(),
                "queue_duration_target": "5ms",
            } } }),
        ),
    ]
}

/// Runs every scenario against the redis-server at `url` (flushed) and prints the rows.
pub async fn run(name: &str, url: &str, set: &Settings) {
    let pool = Pool::start(SLOTS, SERVICE).await;
    let target = Target::standalone(url, set).await;
    let mut prometheus: Option<Result<Prometheus, String>> = None;
    let mut outcomes = Vec::new();
    for scenario in scenarios(&pool.url()) {
        let gate_label = match &scenario.gate {
            None => "-".to_owned(),
            Some(g) if g.placement == Placement::Queue => format!("queue:{}", g.gate_type),
            Some(g) => format!("pool:{}", g.gate_type),
        };
        let env = if scenario.name == "prometheus-budget" {
            let started = match prometheus.take() {
                Some(p) => p,
                None => match prometheus::missing() {
                    Some(why) => Err(why),
                    None => prometheus::start(&pool.addr.to_string()).await,
                },
            };
            let env = started.as_ref().map(|p| gate_env(Some(p.url.clone())));
            let env = env.map_err(Clone::clone);
            prometheus = Some(started);
            env
        } else {
            Ok(gate_env(None))
        };
        let unbuilt =
            scenario.name == "aimd" && !GATE_TYPES.iter().any(|(name, _)| *name == "aimd");
        let gate = match (env, &scenario.gate) {
            (Err(why), _) => Err(why),
            _ if unbuilt => Err("not-built".to_owned()),
            (Ok(_), None) => Ok(None),
            (Ok(env), Some(spec)) => build_gate(spec, &target, &env)
                .map(Some)
                .map_err(|e| format!("not-built:{}", e.replace(' ', "_"))),
        };
        let measured = match gate {
            Err(why) => Err(why),
            Ok(gate) => Ok(measure(&pool, &target, &scenario, gate).await),
        };
        eprintln!("bench: flow scenario {} done", scenario.name);
        outcomes.push(Outcome {
            name: scenario.name,
            gate: gate_label,
            measured,
        });
    }
    drop(prometheus);
    report::emit(name, &outcomes);
}

fn gate_env(prometheus_url: Option<String>) -> GateEnv {
    GateEnv {
        prometheus_url,
        prometheus_cache_ttl: CACHE_TTL,
        ..GateEnv::default()
    }
}

fn build_gate(
    spec: &GateSpec,
    target: &Target,
    env: &GateEnv,
) -> Result<(Placement, Arc<dyn DispatchGate>), String> {
    let queue = &target.queues[0].name;
    let owner = match spec.placement {
        Placement::Queue => GateOwner::queue(queue, queue, DEFAULT_POOL),
        Placement::Pool => GateOwner::pool(DEFAULT_POOL),
    };
    let params = spec.params.as_object().cloned().unwrap_or_default();
    match factory::build(spec.gate_type, &params, &owner, env) {
        Ok(Some(gate)) => Ok((spec.placement, gate)),
        Ok(None) => Err("no gate".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// Starts the runtime draining the target's queue into the pool.
async fn start_runtime(
    target: &Target,
    pool_url: &str,
    batch_size: usize,
    gate: Option<(Placement, Arc<dyn DispatchGate>)>,
    stop: &CancellationToken,
) -> JoinHandle<RunReport> {
    let store = RedisStore::connect(target.store_options())
        .await
        .expect("connect");
    let queue = target.queue_specs().remove(0);
    let http = HttpTarget::new(pool_url, BATCH_PATH, None).expect("the pool's URL");
    let mut handler = HttpHandler::new([(queue.id.clone(), http)]).expect("the HTTP handler");
    if let Some((_, gate)) = &gate {
        // As the processor routes each call's answer to the queue's gates
        // (an `aimd` window learns from them; the others ignore them).
        let gate = gate.clone();
        handler = handler.with_feedback(Arc::new(move |request, outcome| {
            gate.observe(&request.parsed.labels, outcome)
        }));
    }
    let queue_id = queue.id.clone();
    let config = RuntimeConfig {
        queues: vec![queue],
        concurrency: CONCURRENCY,
        batch_size,
        poll_interval: POLL,
        ..RuntimeConfig::default()
    };
    let mut builder = Runtime::builder(Arc::new(store))
        .handler(handler)
        .config(config);
    builder = match gate {
        None => builder,
        Some((Placement::Queue, gate)) => builder.queue_gate(queue_id, gate),
        Some((Placement::Pool, gate)) => builder
            .pool(PoolSpec::new(DEFAULT_POOL, CONCURRENCY))
            .pool_gate(DEFAULT_POOL, gate),
    };
    let runtime = builder.build().expect("the flow run's runtime settings");
    tokio::spawn(runtime.run(stop.clone()))
}

async fn measure(
    pool: &Pool,
    target: &Target,
    scenario: &Scenario,
    gate: Option<(Placement, Arc<dyn DispatchGate>)>,
) -> Measured {
    target.flush().await;
    let stop = CancellationToken::new();
    let runtime = if scenario.batch {
        let deadline = async_worker::clock::unix_now() + 3600;
        target
            .enqueue(0..BACKLOG, deadline, Payloads::default(), |_| {})
            .await
            .expect("enqueue the backlog");
        Some(start_runtime(target, &pool.url(), scenario.batch_size, gate, &stop).await)
    } else {
        None
    };
    let rate = SLOTS as f64 / SERVICE.as_secs_f64() / 2.0;
    let users = tokio::spawn(interactive::run(pool.url(), rate, stop.clone()));
    tokio::time::sleep(WARMUP).await;
    pool.open_window(WINDOW);
    tokio::time::sleep(WINDOW).await;
    let figures = pool.window_figures();
    let backlog_left = match scenario.batch {
        true => target.nodes[0]
            .admin
            .zcard(&target.queues[0].name)
            .await
            .ok(),
        false => None,
    };
    stop.cancel();
    let sent = users.await.expect("the interactive users");
    if let Some(runtime) = runtime {
        runtime.await.expect("the runtime");
    }
    until_idle(pool).await;
    Measured {
        figures,
        interactive_sent: sent.requests.load(std::sync::atomic::Ordering::Relaxed),
        interactive_failed: sent.failed.load(std::sync::atomic::Ordering::Relaxed),
        backlog_left,
    }
}

/// Waits (bounded) until the pool serves and holds nothing, so the next
/// scenario starts on an empty pool.
async fn until_idle(pool: &Pool) {
    let started = Instant::now();
    while pool.counts() != (0, 0) {
        assert!(
            started.elapsed() < IDLE_BOUND,
            "bench: the pool still holds {:?} (running, waiting) after {IDLE_BOUND:?}",
            pool.counts()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
